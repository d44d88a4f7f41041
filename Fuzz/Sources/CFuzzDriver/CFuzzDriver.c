// Declarations only: LLVMFuzzerRunDriver is defined by the libFuzzer runtime that
// `-sanitize=fuzzer` links in.
#include "CFuzzDriver.h"
