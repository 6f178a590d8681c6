/*
 * The CUDA driver functions that the benchmarks call beside devrt for their raw figures,
 * opened from libcuda.so.1 by name (no CUDA headers here: cuda.h's types as plain
 * pointers and ints, its values as constants; a CUresult of 0 is success).
 */
#ifndef DEVRT_TEST_CUDA_DRIVER_H
#define DEVRT_TEST_CUDA_DRIVER_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>

enum {
    CU_LIMIT_PRINTF_FIFO_SIZE = 0x01,
    CU_LIMIT_MALLOC_HEAP_SIZE = 0x02,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_STREAM_NON_BLOCKING = 0x1,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
};

struct cuda_driver {
    int (*device_get)(int *device, int ordinal);
    int (*device_get_name)(char *name, int length, int device);
    int (*device_get_attribute)(int *value, int attribute, int device);
    int (*set_limit)(int limit, size_t value);
    int (*get_limit)(size_t *value, int limit);
    int (*module_load_data)(void **module, const void *image);
    int (*module_load_data_ex)(void **module, const void *image, unsigned count, int *options,
                               void **values);
    int (*module_unload)(void *module);
    int (*module_get_function)(void **function, void *module, const char *name);
    int (*launch_kernel)(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                         void **extra);
    int (*stream_create)(void **stream, unsigned flags);
    int (*stream_synchronize)(void *stream);
    int (*stream_destroy)(void *stream);
    int (*memcpy_dtoh)(void *dst, unsigned long long src, size_t size);
    int (*memcpy_htod)(unsigned long long dst, const void *src, size_t size);
    int (*mem_alloc)(unsigned long long *ptr, size_t size);
    int (*mem_free)(unsigned long long ptr);
};

/* Fills DRIVER; false when the library or one of the functions is missing. */
static inline bool cuda_driver_open(struct cuda_driver *driver)
{
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library)
        return false;
    /* cuda.h maps some names to versioned symbols: these are the ones it picks. */
    static const struct {
        size_t offset;
        const char *symbol;
    } functions[] = {
        {offsetof(struct cuda_driver, device_get), "cuDeviceGet"},
        {offsetof(struct cuda_driver, device_get_name), "cuDeviceGetName"},
        {offsetof(struct cuda_driver, device_get_attribute), "cuDeviceGetAttribute"},
        {offsetof(struct cuda_driver, set_limit), "cuCtxSetLimit"},
        {offsetof(struct cuda_driver, get_limit), "cuCtxGetLimit"},
        {offsetof(struct cuda_driver, module_load_data), "cuModuleLoadData"},
        {offsetof(struct cuda_driver, module_load_data_ex), "cuModuleLoadDataEx"},
        {offsetof(struct cuda_driver, module_unload), "cuModuleUnload"},
        {offsetof(struct cuda_driver, module_get_function), "cuModuleGetFunction"},
        {offsetof(struct cuda_driver, launch_kernel), "cuLaunchKernel"},
        {offsetof(struct cuda_driver, stream_create), "cuStreamCreate"},
        {offsetof(struct cuda_driver, stream_synchronize), "cuStreamSynchronize"},
        {offsetof(struct cuda_driver, stream_destroy), "cuStreamDestroy_v2"},
        {offsetof(struct cuda_driver, memcpy_dtoh), "cuMemcpyDtoH_v2"},
        {offsetof(struct cuda_driver, memcpy_htod), "cuMemcpyHtoD_v2"},
        {offsetof(struct cuda_driver, mem_alloc), "cuMemAlloc_v2"},
        {offsetof(struct cuda_driver, mem_free), "cuMemFree_v2"},
    };
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; ++i) {
        void *found = dlsym(library, functions[i].symbol);
        if (!found) {
            dlclose(library);
            return false;
        }
        *(void **)((char *)driver + functions[i].offset) = found;
    }
    return true;
}

#endif
