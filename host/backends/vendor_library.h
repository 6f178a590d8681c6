/*
 * One loader for the vendor libraries the GPU backends open at run time (HSA, CUDA, HIP):
 * not linked, so that one build runs on machines without them. Every function is resolved
 * when the library is opened, and every required one that is missing is named at once,
 * with the file that was opened: an old runtime usually lacks several, and LD_LIBRARY_PATH
 * may have picked another file than the one expected.
 */
#ifndef DEVRT_VENDOR_LIBRARY_H
#define DEVRT_VENDOR_LIBRARY_H

#include <stdbool.h>
#include <stddef.h>

struct devrt_vendor_library {
    const char *what;     /* in words, for the messages: "the ROCm HSA runtime" */
    const char *variable; /* names another file to open instead (the tests' fakes) */
    /* NULL, or the variable's older name, honoured where the new one is unset. */
    const char *old_variable;
    const char *const *files; /* the names tried in order without the variable; NULL ends */
};

struct devrt_vendor_symbol {
    const char *name;
    void *slot; /* a function pointer's object, which the address is copied into */
    bool optional;
};

/*
 * Opens LIBRARY and fills each symbol's slot; returns the handle, or NULL with every slot
 * cleared, the library closed and ERROR saying which file could not be opened or which
 * required symbols it lacks.
 */
__attribute__((visibility("hidden"))) void *
devrt_vendor_library_open(const struct devrt_vendor_library *library,
                          const struct devrt_vendor_symbol *symbols, size_t count, char *error,
                          size_t size);

#endif
