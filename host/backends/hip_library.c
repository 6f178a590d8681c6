/* The HIP runtime's functions (hip_library.h). */
#include "hip_library.h"

#include <pthread.h>
#include <string.h>

#include "backend.h"
#include "codeobject.h"
#include "vendor_library.h"

#ifdef DEVRT_HAVE_HSA
#include "hsa_memory.h"
#endif

struct devrt_hip_library devrt_hip;

static pthread_once_t hip_once = PTHREAD_ONCE_INIT;

/*
 * A program that attaches has HIP loaded already, and dlopen finds that copy by its name;
 * the later names are older releases' files.
 */
static const struct devrt_vendor_library hip_files = {
    .what = "the HIP runtime",
    .variable = "DEVRT_HIP_LIBRARY",
    .files = (const char *const[]){"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", NULL},
};

static void open_hip(void)
{
    static const struct devrt_vendor_symbol symbols[] = {
#define X(fn) {DEVRT_HIP_NAME(fn), &devrt_hip.fn, false},
        DEVRT_HIP_FUNCTIONS(X)
#undef X
            {DEVRT_HIP_NAME(hipStreamWriteValue64), &devrt_hip.write_value, true},
        {DEVRT_HIP_NAME(hipDeviceGetPCIBusId), &devrt_hip.bus_id, true},
#ifdef DEVRT_HAVE_HSA
        {"hsa_amd_pointer_info", &devrt_hip.pointer_info, true},
        {"hsa_memory_copy", &devrt_hip.memory_copy, true},
#endif
    };
    devrt_hip.library =
        devrt_vendor_library_open(&hip_files, symbols, sizeof symbols / sizeof *symbols,
                                  devrt_hip.error, sizeof devrt_hip.error);
}

int devrt_hip_open(void)
{
    pthread_once(&hip_once, open_hip);
    return devrt_hip.library ? DEVRT_SUCCESS
                             : devrt_fail(DEVRT_ERROR_NO_DEVICE, "HIP: %s", devrt_hip.error);
}

int devrt_hip_failed(int status, hipError_t result, const char *what)
{
    const char *text = devrt_hip.hipGetErrorString ? devrt_hip.hipGetErrorString(result) : NULL;
    return devrt_fail(status, "HIP: %s: %s (%d)", what, text ? text : "unknown error", (int)result);
}

void *devrt_hip_map_host(size_t size)
{
    void *ptr = NULL;
    if (devrt_hip.hipHostMalloc(&ptr, size, hipHostMallocMapped | hipHostMallocPortable) !=
        hipSuccess)
        return NULL;
    void *mapped = NULL;
    if (devrt_hip.hipHostGetDevicePointer(&mapped, ptr, 0) != hipSuccess || mapped != ptr) {
        devrt_hip.hipHostFree(ptr);
        return NULL;
    }
    return ptr;
}

bool devrt_hip_known(const void *address, size_t size)
{
    uintptr_t p = (uintptr_t)address;
    void *start = NULL;
    size_t length = 0;
    if (devrt_hip.hipPointerGetAttribute(&start, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                         (hipDeviceptr_t)address) != hipSuccess ||
        devrt_hip.hipPointerGetAttribute(&length, HIP_POINTER_ATTRIBUTE_RANGE_SIZE,
                                         (hipDeviceptr_t)address) != hipSuccess)
        return false;
    uintptr_t s = (uintptr_t)start;
    return p >= s && size <= length && p - s <= length - size;
}

int devrt_hip_read_through_hsa(struct devrt_hip_staging *staging, void *dst, const void *src,
                               size_t size)
{
#ifdef DEVRT_HAVE_HSA
    if (!devrt_hip.pointer_info || !devrt_hip.memory_copy || !staging->buffer)
        return -1;
    hsa_amd_pointer_info_t info = {.size = sizeof info};
    if (devrt_hip.pointer_info(src, &info, NULL, NULL, NULL) != HSA_STATUS_SUCCESS)
        return -1;
    void *host = NULL;
    switch (devrt_hsa_access(&info, (uintptr_t)src, size, &host)) {
    case DEVRT_HSA_ACCESS_NONE: return -1;
    case DEVRT_HSA_ACCESS_HOST: memcpy(dst, host, size); return 0;
    case DEVRT_HSA_ACCESS_DEVICE: break;
    }
    int status = 0;
    pthread_mutex_lock(&staging->lock);
    for (size_t done = 0; done < size && status == 0; done += DEVRT_HIP_STAGING) {
        size_t n = size - done < DEVRT_HIP_STAGING ? size - done : DEVRT_HIP_STAGING;
        if (devrt_hip.memory_copy(staging->buffer, (const char *)src + done, n) ==
            HSA_STATUS_SUCCESS)
            memcpy((char *)dst + done, staging->buffer, n);
        else
            status = -1;
    }
    pthread_mutex_unlock(&staging->lock);
    return status;
#else
    (void)staging;
    (void)dst;
    (void)src;
    (void)size;
    return -1;
#endif
}
