#include "shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ferry_pq_functions ferry_pq;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char failure[512];

static void load(void) {
    // FERRY_LIBPQ names the library (a libpq outside the loader's paths); else the usual names.
    static const char *const names[] = {"libpq.so.5", "libpq.so", "libpq.5.dylib", "libpq.dylib"};
    const char *given = getenv("FERRY_LIBPQ");
    void *library = NULL;
    if (given != NULL && given[0] != '\0') {
        library = dlopen(given, RTLD_NOW | RTLD_LOCAL);
        if (library == NULL) {
            const char *reason = dlerror();
            snprintf(failure, sizeof failure, "FERRY_LIBPQ=%s: %s", given, reason ? reason : "cannot be opened");
            return;
        }
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (library == NULL && i == 0) {
            const char *reason = dlerror();
            snprintf(failure, sizeof failure, "%s", reason ? reason : "libpq.so.5 cannot be opened");
        }
    }
    if (library == NULL) return;
    struct ferry_pq_functions functions;
#define FERRY_PQ_LOOKUP(ret, name, params, args)                                         \
    *(void **)&functions.name = dlsym(library, #name);                                   \
    if (functions.name == NULL) {                                                        \
        snprintf(failure, sizeof failure, "the libpq found has no function %s", #name);  \
        return;                                                                          \
    }
#define FERRY_PQ_VOID_LOOKUP(name, params, args) FERRY_PQ_LOOKUP(void, name, params, args)
    FERRY_PQ_FUNCTIONS(FERRY_PQ_LOOKUP, FERRY_PQ_VOID_LOOKUP)
#undef FERRY_PQ_LOOKUP
#undef FERRY_PQ_VOID_LOOKUP
    ferry_pq = functions;
    loaded = 1;
}

int ferry_pq_load(char *error, size_t size) {
    pthread_once(&once, load);
    if (!loaded && error != NULL && size > 0) snprintf(error, size, "%s", failure);
    return loaded;
}
