// libFuzzer's driver, which each fuzz target's main calls with its test function: SwiftPM gives an
// executable its own entry point (`fuzz_csv_main`, aliased to `main`), so libFuzzer's `main` is
// not the one that runs. The targets still export `LLVMFuzzerTestOneInput`, which the runtime
// archive refers to.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
