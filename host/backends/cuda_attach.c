/*
 * The CUDA attach shim (devrt_cuda_attach), on the CUDA backend's driver table and copies
 * (cuda.c, shared through cuda_driver.h).
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <devrt/cuda.h>

#include "cuda_driver.h"
#include "backend.h"
#include "codeobject.h"

/*
 * devrt_cuda_attach (<devrt/cuda.h>): the handful of calls attach.c needs, in the
 * program's context. Copies go on a stream of their own that does not synchronize with
 * the legacy default stream, so that the server copies while the program's kernels wait.
 */
struct cuda_attachment {
    const struct devrt_cuda_driver *cu;
    CUcontext context;
    CUmodule module;
    CUstream copy;
};

static int attached_find_global(void *context, const char *name, void **address, size_t *size)
{
    struct cuda_attachment *a = context;
    const struct devrt_cuda_driver *cu = a->cu;
    cu->cuCtxSetCurrent(a->context);
    CUdeviceptr ptr = 0;
    if (cu->cuModuleGetGlobal(&ptr, size, a->module, name) != CUDA_SUCCESS)
        return -1;
    *address = (void *)(uintptr_t)ptr;
    return 0;
}

static void *attached_alloc_device(void *context, size_t size)
{
    struct cuda_attachment *a = context;
    const struct devrt_cuda_driver *cu = a->cu;
    cu->cuCtxSetCurrent(a->context);
    CUdeviceptr ptr = 0;
    return cu->cuMemAlloc(&ptr, size) == CUDA_SUCCESS ? (void *)(uintptr_t)ptr : NULL;
}

static void attached_free_device(void *context, void *ptr)
{
    struct cuda_attachment *a = context;
    const struct devrt_cuda_driver *cu = a->cu;
    cu->cuCtxSetCurrent(a->context);
    cu->cuMemFree((CUdeviceptr)(uintptr_t)ptr);
}

static void *attached_alloc_host(void *context, size_t size)
{
    struct cuda_attachment *a = context;
    const struct devrt_cuda_driver *cu = a->cu;
    cu->cuCtxSetCurrent(a->context);
    return devrt_cuda_map_host(size);
}

static void attached_free_host(void *context, void *ptr)
{
    struct cuda_attachment *a = context;
    const struct devrt_cuda_driver *cu = a->cu;
    cu->cuCtxSetCurrent(a->context);
    cu->cuMemFreeHost(ptr);
}

/* The side the driver knows is the device's; an address it knows on neither is refused. */
static int attached_copy(void *context, void *dst, const void *src, size_t size)
{
    struct cuda_attachment *a = context;
    const struct devrt_cuda_driver *cu = a->cu;
    cu->cuCtxSetCurrent(a->context);
    bool host;
    if (devrt_cuda_known_range((uintptr_t)src, size, &host) == 0)
        return devrt_cuda_copy_on(a->copy, dst, src, size, true);
    if (devrt_cuda_known_range((uintptr_t)dst, size, &host) == 0)
        return devrt_cuda_copy_on(a->copy, dst, src, size, false);
    return -1;
}

static int attached_synchronize(void *context)
{
    struct cuda_attachment *a = context;
    const struct devrt_cuda_driver *cu = a->cu;
    cu->cuCtxSetCurrent(a->context);
    CUresult r = cu->cuCtxSynchronize();
    return r == CUDA_SUCCESS ? 0 : devrt_cuda_failed(DEVRT_ERROR_BACKEND, r, "cuCtxSynchronize");
}

static void attached_release(void *context)
{
    struct cuda_attachment *a = context;
    const struct devrt_cuda_driver *cu = a->cu;
    cu->cuCtxSetCurrent(a->context);
    cu->cuStreamDestroy(a->copy);
    free(a);
}

int devrt_cuda_attach(CUmodule module, const struct devrt_device_options *options,
                      devrt_module **attached)
{
    if (attached)
        *attached = NULL;
    if (!module || !attached)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_cuda_attach: missing argument");
    const struct devrt_cuda_driver *cu = devrt_cuda_open_driver();
    if (!cu->library)
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "CUDA: %s", cu->error);
    struct cuda_attachment *a = calloc(1, sizeof *a);
    if (!a)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for an attachment");
    a->cu = cu;
    a->module = module;
    CUdevice device = 0;
    int warp = 0, unified = 0, maps = 0;
    CUresult r = cu->cuCtxGetCurrent(&a->context);
    if (r == CUDA_SUCCESS && !a->context)
        r = CUDA_ERROR_INVALID_CONTEXT;
    if (r == CUDA_SUCCESS)
        r = cu->cuCtxGetDevice(&device);
    if (r == CUDA_SUCCESS) {
        cu->cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, device);
        cu->cuDeviceGetAttribute(&unified, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, device);
        cu->cuDeviceGetAttribute(&maps, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, device);
        r = cu->cuStreamCreate(&a->copy, CU_STREAM_NON_BLOCKING);
    }
    if (r != CUDA_SUCCESS) {
        free(a);
        return devrt_cuda_failed(DEVRT_ERROR_BACKEND, r,
                                 "devrt_cuda_attach: no current context with the module's device");
    }
    if (!unified || !maps) {
        attached_release(a);
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "CUDA: the device lacks unified addressing or "
                                                 "mapped host memory, which devrt needs");
    }
    char name[64];
    snprintf(name, sizeof name, "CUDA module %p", (void *)module);
    const struct devrt_attach_api api = {
        .backend = DEVRT_BACKEND_CUDA,
        .wave_size = (uint32_t)warp,
        .find_global = attached_find_global,
        .alloc_device = attached_alloc_device,
        .free_device = attached_free_device,
        .alloc_host = attached_alloc_host,
        .free_host = attached_free_host,
        .copy = attached_copy,
        .synchronize = attached_synchronize,
        .release = attached_release,
    };
    return devrt_attach(&api, a, name, options, attached);
}
