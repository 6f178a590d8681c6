/*
 * The HIP runtime (libamdhip64), opened with dlopen on first use, not linked, for both of
 * devrt's uses of it: attaching to a program's module (hip_attach.c) and the HIP backend
 * (hip_backend.c). $DEVRT_HIP_LIBRARY names another file (the tests' fake libamdhip64).
 * Built against the HIP headers with the AMD platform (__HIP_PLATFORM_AMD__).
 */
#ifndef DEVRT_HIP_LIBRARY_H
#define DEVRT_HIP_LIBRARY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hip/hip_runtime_api.h>

#ifdef DEVRT_HAVE_HSA
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#endif

/* Newer headers rename some functions to versioned symbols (hipGetDeviceProperties). */
#define DEVRT_HIP_NAME_(name) #name
#define DEVRT_HIP_NAME(name) DEVRT_HIP_NAME_(name)

#define DEVRT_HIP_FUNCTIONS(X)                                                                     \
    X(hipGetErrorString)                                                                           \
    X(hipGetDevice)                                                                                \
    X(hipGetDeviceCount)                                                                           \
    X(hipGetDeviceProperties)                                                                      \
    X(hipDeviceGetAttribute)                                                                       \
    X(hipDeviceSynchronize)                                                                        \
    X(hipSetDevice)                                                                                \
    X(hipModuleLoadData)                                                                           \
    X(hipModuleUnload)                                                                             \
    X(hipModuleGetGlobal)                                                                          \
    X(hipModuleGetFunction)                                                                        \
    X(hipModuleLaunchKernel)                                                                       \
    X(hipMalloc)                                                                                   \
    X(hipFree)                                                                                     \
    X(hipHostMalloc)                                                                               \
    X(hipHostFree)                                                                                 \
    X(hipHostGetDevicePointer)                                                                     \
    X(hipPointerGetAttribute)                                                                      \
    X(hipMemcpyWithStream)                                                                         \
    X(hipMemsetAsync)                                                                              \
    X(hipMemsetD32Async)                                                                           \
    X(hipStreamCreateWithFlags)                                                                    \
    X(hipStreamDestroy)                                                                            \
    X(hipStreamSynchronize)                                                                        \
    X(hipStreamQuery)                                                                              \
    X(hipStreamWaitEvent)                                                                          \
    X(hipEventCreateWithFlags)                                                                     \
    X(hipEventDestroy)                                                                             \
    X(hipEventRecord)                                                                              \
    X(hipEventSynchronize)                                                                         \
    X(hipEventQuery)

#ifdef DEVRT_HAVE_HSA
typedef hsa_status_t devrt_hsa_pointer_info_fn(const void *, hsa_amd_pointer_info_t *,
                                               void *(*)(size_t), uint32_t *, hsa_agent_t **);
typedef hsa_status_t devrt_hsa_memory_copy_fn(void *, const void *, size_t);
#endif

struct devrt_hip_library {
#define X(fn) __typeof__(fn) *fn;
    DEVRT_HIP_FUNCTIONS(X)
#undef X
    /* Optional: */
    __typeof__(hipStreamWriteValue64) *write_value; /* else two 32-bit fills */
    __typeof__(hipDeviceGetPCIBusId) *bus_id;       /* the server's placement */
#ifdef DEVRT_HAVE_HSA
    /* The HSA runtime beneath HIP, reached through HIP's handle (hip_attach.c). */
    devrt_hsa_pointer_info_fn *pointer_info;
    devrt_hsa_memory_copy_fn *memory_copy;
#endif
    void *library;
    char error[768];
};

extern struct devrt_hip_library devrt_hip __attribute__((visibility("hidden")));

/* Opens HIP once; DEVRT_SUCCESS, or DEVRT_ERROR_NO_DEVICE saying why not. */
__attribute__((visibility("hidden"))) int devrt_hip_open(void);

/* STATUS with "HIP: WHAT: <HIP's text> (RESULT)". */
__attribute__((visibility("hidden"))) int devrt_hip_failed(int status, hipError_t result,
                                                           const char *what);

/* SIZE bytes of pinned host memory the device sees at the host's address; NULL if HIP
   cannot give that (hipHostMalloc mapped, checked with hipHostGetDevicePointer). */
__attribute__((visibility("hidden"))) void *devrt_hip_map_host(size_t size);

/* Is [ADDRESS, ADDRESS + SIZE) inside one allocation HIP knows (hipPointerGetAttribute)? */
__attribute__((visibility("hidden"))) bool devrt_hip_known(const void *address, size_t size);

/*
 * HIP does not know the rest of a code object's memory (its string literals); the HSA
 * runtime beneath it does (it loaded the code object). A read of such memory into DST,
 * devrt's host memory, through STAGING's pinned buffer, when hsa_amd_pointer_info places
 * the whole range in one of its allocations; else -1, since the address may come from the
 * device. Any thread may read: one read at a time has the buffer.
 */
#define DEVRT_HIP_STAGING 4096u
struct devrt_hip_staging {
    pthread_mutex_t lock;
    void *buffer; /* DEVRT_HIP_STAGING bytes, pinned; NULL: none */
};
__attribute__((visibility("hidden"))) int
devrt_hip_read_through_hsa(struct devrt_hip_staging *staging, void *dst, const void *src,
                           size_t size);

#endif
