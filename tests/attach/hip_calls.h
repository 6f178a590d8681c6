/*
 * The HIP calls a test program makes, opened as devrt opens HIP: $DEVRT_HIP_LIBRARY (the
 * fake libamdhip64 of this folder, in the unit tests), else libamdhip64.so.
 */
#ifndef HIP_CALLS_H
#define HIP_CALLS_H

#include <dlfcn.h>
#include <stdlib.h>

#include <hip/hip_runtime_api.h>

#define HIP_CALLS(X)                                                                               \
    X(hipGetDeviceCount)                                                                           \
    X(hipSetDevice)                                                                                \
    X(hipStreamCreate)                                                                             \
    X(hipStreamSynchronize)                                                                        \
    X(hipModuleLoad)                                                                               \
    X(hipModuleUnload)                                                                             \
    X(hipModuleGetFunction)                                                                        \
    X(hipModuleLaunchKernel)                                                                       \
    X(hipHostMalloc)                                                                               \
    X(hipHostFree)

struct hip_calls {
#define X(fn) __typeof__(fn) *fn;
    HIP_CALLS(X)
#undef X
    void *library;
};

/* NULL, or why HIP cannot be used. */
static inline const char *hip_calls_open(struct hip_calls *calls)
{
    const char *named = getenv("DEVRT_HIP_LIBRARY");
    calls->library = dlopen(named && *named ? named : "libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
    if (!calls->library)
        return dlerror();
#define X(fn)                                                                                      \
    if (!(calls->fn = (__typeof__(calls->fn))dlsym(calls->library, #fn)))                          \
        return "a HIP function is missing";
    HIP_CALLS(X)
#undef X
    return NULL;
}

#endif
