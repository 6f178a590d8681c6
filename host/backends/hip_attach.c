/*
 * devrt_hip_attach (<devrt/hip.h>): the handful of calls attach.c needs, through HIP.
 *
 * - HIP is opened with dlopen when a program first attaches (hip_library.h): the program
 *   has it loaded already, and dlopen finds that copy. Built against Debian's
 *   libamdhip64-dev, HIP 5.2.3.
 * - Device memory from hipMalloc; host memory the device sees at the host's address from
 *   hipHostMalloc (mapped), checked with hipHostGetDevicePointer.
 * - Copies go on a stream of the attachment's own that does not synchronize with the null
 *   stream, so that the server copies while the program's kernels wait for it, between
 *   addresses HIP knows: its allocations (hipPointerGetAttribute's range) and the module's
 *   __devrt_state.
 * - HIP does not know the rest of the code object's memory: the library id __devrt_state
 *   points at before attaching, and the string literals of exception reports. The HSA
 *   runtime beneath HIP does (it loaded the code object): such an address is read when
 *   hsa_amd_pointer_info places the whole range in one of its allocations (hsa_memory.h
 *   decides how), through a pinned buffer, and refused otherwise, since the addresses of
 *   report strings come from the device. The HSA calls are found through HIP's handle,
 *   which reaches the HSA runtime HIP itself loaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hip_runtime_api.h>

#include <devrt/hip.h>

#include "hip_library.h"
#include "backend.h"
#include "codeobject.h"

struct hip_attachment {
    int device;
    hipModule_t module;
    hipStream_t copy;
    uintptr_t state, state_end;       /* __devrt_state, once found */
    struct devrt_hip_staging staging; /* reads of what only the HSA runtime knows */
};

/* Each call is on the attaching thread or the server's: both select the module's device. */
static struct hip_attachment *bind(void *context)
{
    struct hip_attachment *a = context;
    devrt_hip.hipSetDevice(a->device);
    return a;
}

static int hip_find_global(void *context, const char *name, void **address, size_t *size)
{
    struct hip_attachment *a = bind(context);
    hipDeviceptr_t ptr = NULL;
    if (devrt_hip.hipModuleGetGlobal(&ptr, size, a->module, name) != hipSuccess)
        return -1;
    *address = ptr;
    if (!strcmp(name, DEVRT_STATE_SYMBOL)) {
        a->state = (uintptr_t)ptr;
        a->state_end = a->state + *size;
    }
    return 0;
}

static void *hip_alloc_device(void *context, size_t size)
{
    bind(context);
    void *ptr = NULL;
    return devrt_hip.hipMalloc(&ptr, size) == hipSuccess ? ptr : NULL;
}

static void hip_free_device(void *context, void *ptr)
{
    bind(context);
    devrt_hip.hipFree(ptr);
}

static void *hip_alloc_host(void *context, size_t size)
{
    bind(context);
    return devrt_hip_map_host(size);
}

static void hip_free_host(void *context, void *ptr)
{
    bind(context);
    devrt_hip.hipHostFree(ptr);
}

/* Is [address, address + size) inside one allocation HIP knows, or inside __devrt_state? */
static bool known(const struct hip_attachment *a, const void *address, size_t size)
{
    uintptr_t p = (uintptr_t)address;
    if (a->state && p >= a->state && p < a->state_end && size <= a->state_end - p)
        return true;
    return devrt_hip_known(address, size);
}

static int hip_copy(void *context, void *dst, const void *src, size_t size)
{
    struct hip_attachment *a = bind(context);
    if (!known(a, src, size) && !known(a, dst, size))
        return devrt_hip_read_through_hsa(&a->staging, dst, src, size);
    return devrt_hip.hipMemcpyWithStream(dst, src, size, hipMemcpyDefault, a->copy) == hipSuccess
               ? 0
               : -1;
}

static int hip_synchronize(void *context)
{
    bind(context);
    hipError_t r = devrt_hip.hipDeviceSynchronize();
    return r == hipSuccess ? 0 : devrt_hip_failed(DEVRT_ERROR_BACKEND, r, "hipDeviceSynchronize");
}

static void hip_release(void *context)
{
    struct hip_attachment *a = bind(context);
    if (a->staging.buffer)
        devrt_hip.hipHostFree(a->staging.buffer);
    pthread_mutex_destroy(&a->staging.lock);
    devrt_hip.hipStreamDestroy(a->copy);
    free(a);
}

int devrt_hip_attach(hipModule_t module, const struct devrt_device_options *options,
                     devrt_module **attached)
{
    if (attached)
        *attached = NULL;
    if (!module || !attached)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_hip_attach: missing argument");
    int opened = devrt_hip_open();
    if (opened != DEVRT_SUCCESS)
        return opened;
    struct hip_attachment *a = calloc(1, sizeof *a);
    if (!a)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for an attachment");
    a->module = module;
    pthread_mutex_init(&a->staging.lock, NULL);
    int warp = 0;
    hipError_t r = devrt_hip.hipGetDevice(&a->device);
    if (r == hipSuccess)
        r = devrt_hip.hipDeviceGetAttribute(&warp, hipDeviceAttributeWarpSize, a->device);
    if (r == hipSuccess)
        r = devrt_hip.hipStreamCreateWithFlags(&a->copy, hipStreamNonBlocking);
    if (r != hipSuccess) {
        pthread_mutex_destroy(&a->staging.lock);
        free(a);
        return devrt_hip_failed(DEVRT_ERROR_BACKEND, r, "devrt_hip_attach: the current device");
    }
#ifdef DEVRT_HAVE_HSA
    a->staging.buffer = hip_alloc_host(a, DEVRT_HIP_STAGING);
#endif
    char name[64];
    snprintf(name, sizeof name, "HIP module %p", (void *)module);
    const struct devrt_attach_api api = {
        .backend = DEVRT_BACKEND_HIP,
        .wave_size = (uint32_t)warp,
        .find_global = hip_find_global,
        .alloc_device = hip_alloc_device,
        .free_device = hip_free_device,
        .alloc_host = hip_alloc_host,
        .free_host = hip_free_host,
        .copy = hip_copy,
        .synchronize = hip_synchronize,
        .release = hip_release,
    };
    return devrt_attach(&api, a, name, options, attached);
}
