/*
 * What the CUDA backend's files share (cuda.c, cuda_attach.c): the table of driver API
 * functions, which cuda.c opens from libcuda.so.1, and the backend's memory and copies.
 */
#ifndef DEVRT_CUDA_DRIVER_H
#define DEVRT_CUDA_DRIVER_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The driver API functions the backend uses, opened from libcuda.so.1 by name. */
#define DEVRT_CUDA_FUNCTIONS(X)                                                                    \
    X(cuInit)                                                                                      \
    X(cuGetErrorString)                                                                            \
    X(cuDeviceGetCount)                                                                            \
    X(cuDeviceGet)                                                                                 \
    X(cuDeviceGetName)                                                                             \
    X(cuDeviceGetAttribute)                                                                        \
    X(cuDevicePrimaryCtxRetain)                                                                    \
    X(cuDevicePrimaryCtxRelease)                                                                   \
    X(cuDevicePrimaryCtxSetFlags)                                                                  \
    X(cuDevicePrimaryCtxReset)                                                                     \
    X(cuCtxSetCurrent)                                                                             \
    X(cuCtxGetCurrent)                                                                             \
    X(cuCtxGetDevice)                                                                              \
    X(cuCtxSynchronize)                                                                            \
    X(cuStreamCreate)                                                                              \
    X(cuStreamDestroy)                                                                             \
    X(cuStreamSynchronize)                                                                         \
    X(cuMemAlloc)                                                                                  \
    X(cuMemFree)                                                                                   \
    X(cuMemsetD8Async)                                                                             \
    X(cuMemHostAlloc)                                                                              \
    X(cuMemFreeHost)                                                                               \
    X(cuMemHostGetDevicePointer)                                                                   \
    X(cuMemcpyAsync)                                                                               \
    X(cuMemcpyDtoHAsync)                                                                           \
    X(cuMemcpyHtoDAsync)                                                                           \
    X(cuPointerGetAttribute)                                                                       \
    X(cuModuleLoadDataEx)                                                                          \
    X(cuModuleUnload)                                                                              \
    X(cuModuleGetGlobal)                                                                           \
    X(cuModuleGetFunction)                                                                         \
    X(cuLaunchKernel)                                                                              \
    X(cuEventCreate)                                                                               \
    X(cuEventDestroy)                                                                              \
    X(cuEventRecord)                                                                               \
    X(cuEventSynchronize)                                                                          \
    X(cuEventQuery)                                                                                \
    X(cuStreamQuery)                                                                               \
    X(cuStreamWaitEvent)                                                                           \
    X(cuMemsetD32Async)                                                                            \
    X(cuMemGetAddressRange)

struct devrt_cuda_driver {
#define X(fn) __typeof__(fn) *fn;
    DEVRT_CUDA_FUNCTIONS(X)
#undef X
#if CUDA_VERSION >= 12040
    __typeof__(cuFuncGetParamInfo) *param_info; /* optional: checks the arguments */
    /* optional: load every kernel at the module's load (cuda_load_kernels) */
    __typeof__(cuModuleGetFunctionCount) *function_count;
    __typeof__(cuModuleEnumerateFunctions) *functions;
    __typeof__(cuFuncLoad) *load_function;
#endif
    __typeof__(cuStreamWriteValue64) *write_value; /* optional: else two 32-bit fills */
    __typeof__(cuDeviceGetPCIBusId) *bus_id;       /* optional: the server's placement */
    void *library;
    char error[768];
};

/* The table, opened once per process: without a driver its library is NULL, error says why. */
const struct devrt_cuda_driver *devrt_cuda_open_driver(void);
/* STATUS, with the driver's text for RESULT from WHAT as the error. */
int devrt_cuda_failed(int status, CUresult result, const char *what);
/* Pinned host memory that the device sees at the host's address (unified addressing). */
void *devrt_cuda_map_host(size_t size);
/* Whether [ADDRESS, ADDRESS + SIZE) lies in one allocation the driver knows: 0, or -1. */
int devrt_cuda_known_range(uintptr_t address, size_t size, bool *host);
/* A copy on STREAM between host memory and device memory (src when READ, else dst). */
int devrt_cuda_copy_on(CUstream stream, void *dst, const void *src, size_t size, bool read);

#endif
