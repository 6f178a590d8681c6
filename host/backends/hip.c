/*
 * devrt_hip_attach (<devrt/hip.h>): the handful of calls attach.c needs, through HIP.
 *
 * - HIP is opened with dlopen when a program first attaches, not linked: the program has
 *   it loaded already, and dlopen finds that copy. $DEVRT_HIP_LIBRARY names another file
 *   (the unit tests' fake libamdhip64).
 * - Built against the HIP headers with the AMD platform (__HIP_PLATFORM_AMD__); Debian's
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
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hip_runtime_api.h>

#include <devrt/hip.h>

#include "runtime.h"

#ifdef DEVRT_HAVE_HSA
#include "hsa_memory.h"

typedef hsa_status_t hsa_pointer_info_fn(const void *, hsa_amd_pointer_info_t *, void *(*)(size_t),
                                         uint32_t *, hsa_agent_t **);
typedef hsa_status_t hsa_memory_copy_fn(void *, const void *, size_t);
#define DEVRT_HIP_STAGING 4096u
#endif

#define DEVRT_HIP_FUNCTIONS(X)                                                                     \
    X(hipGetErrorString)                                                                           \
    X(hipGetDevice)                                                                                \
    X(hipDeviceGetAttribute)                                                                       \
    X(hipDeviceSynchronize)                                                                        \
    X(hipSetDevice)                                                                                \
    X(hipModuleGetGlobal)                                                                          \
    X(hipMalloc)                                                                                   \
    X(hipFree)                                                                                     \
    X(hipHostMalloc)                                                                               \
    X(hipHostFree)                                                                                 \
    X(hipHostGetDevicePointer)                                                                     \
    X(hipPointerGetAttribute)                                                                      \
    X(hipMemcpyWithStream)                                                                         \
    X(hipStreamCreateWithFlags)                                                                    \
    X(hipStreamDestroy)

static struct {
#define X(fn) __typeof__(fn) *fn;
    DEVRT_HIP_FUNCTIONS(X)
#undef X
    void *library;
    char error[512];
#ifdef DEVRT_HAVE_HSA
    hsa_pointer_info_fn *pointer_info; /* optional, both: see the top of this file */
    hsa_memory_copy_fn *memory_copy;
#endif
} hip;

static pthread_once_t hip_once = PTHREAD_ONCE_INIT;

static void open_hip(void)
{
    const char *named = getenv("DEVRT_HIP_LIBRARY");
    static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};
    if (named && *named) {
        hip.library = dlopen(named, RTLD_NOW | RTLD_LOCAL);
    } else {
        for (size_t i = 0; !hip.library && i < sizeof names / sizeof *names; ++i)
            hip.library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (!hip.library) {
        snprintf(hip.error, sizeof hip.error, "no HIP runtime (%s)", dlerror());
        return;
    }
#define X(fn)                                                                                      \
    hip.fn = (__typeof__(hip.fn))dlsym(hip.library, #fn);                                          \
    if (!hip.fn) {                                                                                 \
        snprintf(hip.error, sizeof hip.error, "the HIP runtime lacks %s", #fn);                    \
        dlclose(hip.library);                                                                      \
        hip.library = NULL;                                                                        \
        return;                                                                                    \
    }
    DEVRT_HIP_FUNCTIONS(X)
#undef X
#ifdef DEVRT_HAVE_HSA
    hip.pointer_info = (hsa_pointer_info_fn *)dlsym(hip.library, "hsa_amd_pointer_info");
    hip.memory_copy = (hsa_memory_copy_fn *)dlsym(hip.library, "hsa_memory_copy");
#endif
}

static int hip_failed(int status, hipError_t result, const char *what)
{
    const char *text = hip.hipGetErrorString ? hip.hipGetErrorString(result) : NULL;
    return devrt_fail(status, "HIP: %s: %s (%d)", what, text ? text : "unknown error", (int)result);
}

struct hip_attachment {
    int device;
    hipModule_t module;
    hipStream_t copy;
    uintptr_t state, state_end; /* __devrt_state, once found */
    void *staging;              /* pinned: reads of what only the HSA runtime knows */
};

/* Each call is on the attaching thread or the server's: both select the module's device. */
static struct hip_attachment *bind(void *context)
{
    struct hip_attachment *a = context;
    hip.hipSetDevice(a->device);
    return a;
}

static int hip_find_global(void *context, const char *name, void **address, size_t *size)
{
    struct hip_attachment *a = bind(context);
    hipDeviceptr_t ptr = NULL;
    if (hip.hipModuleGetGlobal(&ptr, size, a->module, name) != hipSuccess)
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
    return hip.hipMalloc(&ptr, size) == hipSuccess ? ptr : NULL;
}

static void hip_free_device(void *context, void *ptr)
{
    bind(context);
    hip.hipFree(ptr);
}

static void *hip_alloc_host(void *context, size_t size)
{
    bind(context);
    void *ptr = NULL;
    if (hip.hipHostMalloc(&ptr, size, hipHostMallocMapped | hipHostMallocPortable) != hipSuccess)
        return NULL;
    void *mapped = NULL;
    if (hip.hipHostGetDevicePointer(&mapped, ptr, 0) != hipSuccess || mapped != ptr) {
        hip.hipHostFree(ptr);
        return NULL;
    }
    return ptr;
}

static void hip_free_host(void *context, void *ptr)
{
    bind(context);
    hip.hipHostFree(ptr);
}

/* Is [address, address + size) inside one allocation HIP knows, or inside __devrt_state? */
static bool known(const struct hip_attachment *a, const void *address, size_t size)
{
    uintptr_t p = (uintptr_t)address;
    if (a->state && p >= a->state && p < a->state_end && size <= a->state_end - p)
        return true;
    void *start = NULL;
    size_t length = 0;
    if (hip.hipPointerGetAttribute(&start, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   (hipDeviceptr_t)address) != hipSuccess ||
        hip.hipPointerGetAttribute(&length, HIP_POINTER_ATTRIBUTE_RANGE_SIZE,
                                   (hipDeviceptr_t)address) != hipSuccess)
        return false;
    uintptr_t s = (uintptr_t)start;
    return p >= s && size <= length && p - s <= length - size;
}

/* A read of code object memory (see the top of this file); DST is devrt's host memory. */
static int read_through_hsa(struct hip_attachment *a, void *dst, const void *src, size_t size)
{
#ifdef DEVRT_HAVE_HSA
    if (!hip.pointer_info || !hip.memory_copy || !a->staging)
        return -1;
    hsa_amd_pointer_info_t info = {.size = sizeof info};
    if (hip.pointer_info(src, &info, NULL, NULL, NULL) != HSA_STATUS_SUCCESS)
        return -1;
    void *host = NULL;
    switch (devrt_hsa_access(&info, (uintptr_t)src, size, &host)) {
    case DEVRT_HSA_ACCESS_NONE: return -1;
    case DEVRT_HSA_ACCESS_HOST: memcpy(dst, host, size); return 0;
    case DEVRT_HSA_ACCESS_DEVICE: break;
    }
    for (size_t done = 0; done < size; done += DEVRT_HIP_STAGING) {
        size_t n = size - done < DEVRT_HIP_STAGING ? size - done : DEVRT_HIP_STAGING;
        if (hip.memory_copy(a->staging, (const char *)src + done, n) != HSA_STATUS_SUCCESS)
            return -1;
        memcpy((char *)dst + done, a->staging, n);
    }
    return 0;
#else
    (void)a;
    (void)dst;
    (void)src;
    (void)size;
    return -1;
#endif
}

static int hip_copy(void *context, void *dst, const void *src, size_t size)
{
    struct hip_attachment *a = bind(context);
    if (!known(a, src, size) && !known(a, dst, size))
        return read_through_hsa(a, dst, src, size);
    return hip.hipMemcpyWithStream(dst, src, size, hipMemcpyDefault, a->copy) == hipSuccess ? 0
                                                                                            : -1;
}

static int hip_synchronize(void *context)
{
    bind(context);
    hipError_t r = hip.hipDeviceSynchronize();
    return r == hipSuccess ? 0 : hip_failed(DEVRT_ERROR_BACKEND, r, "hipDeviceSynchronize");
}

static void hip_release(void *context)
{
    struct hip_attachment *a = bind(context);
    if (a->staging)
        hip.hipHostFree(a->staging);
    hip.hipStreamDestroy(a->copy);
    free(a);
}

int devrt_hip_attach(hipModule_t module, const struct devrt_device_options *options,
                     devrt_module **attached)
{
    if (attached)
        *attached = NULL;
    if (!module || !attached)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_hip_attach: missing argument");
    pthread_once(&hip_once, open_hip);
    if (!hip.library)
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "HIP: %s", hip.error);
    struct hip_attachment *a = calloc(1, sizeof *a);
    if (!a)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for an attachment");
    a->module = module;
    int warp = 0;
    hipError_t r = hip.hipGetDevice(&a->device);
    if (r == hipSuccess)
        r = hip.hipDeviceGetAttribute(&warp, hipDeviceAttributeWarpSize, a->device);
    if (r == hipSuccess)
        r = hip.hipStreamCreateWithFlags(&a->copy, hipStreamNonBlocking);
    if (r != hipSuccess) {
        free(a);
        return hip_failed(DEVRT_ERROR_BACKEND, r, "devrt_hip_attach: the current device");
    }
#ifdef DEVRT_HAVE_HSA
    a->staging = hip_alloc_host(a, DEVRT_HIP_STAGING);
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
