/*
 * The GPU's memory for the HSA backend: allocations from the pools hsa_open chose, and
 * copies between host and GPU, by the host itself where the host may touch the memory and
 * by the runtime's copy engine through a staging buffer where it may not.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "hsa_backend.h"
#include "hsa_memory.h"

/*
 * SIZE bytes between the GPU's memory at DEVICE_SIDE and the host's at HOST_SIDE (zeros
 * when writing from NULL), a staging buffer at a time, each an asynchronous copy between
 * the two agents' pools waited for. Returns 0 or -1.
 */
static int copy_through_staging(struct hsa_backend *b, void *host_side, void *device_side,
                                size_t size, bool read)
{
    int result = 0;
    pthread_mutex_lock(&b->staging_lock);
    for (size_t done = 0, n = 0; done < size && result == 0; done += n) {
        n = size - done < DEVRT_HSA_STAGING_BYTES ? size - done : DEVRT_HSA_STAGING_BYTES;
        char *device_at = (char *)device_side + done;
        char *host_at = host_side ? (char *)host_side + done : NULL;
        if (!read && host_at)
            memcpy(b->staging, host_at, n);
        else if (!read)
            memset(b->staging, 0, n);
        devrt_hsa.hsa_signal_store_screlease(b->copied, 1);
        hsa_status_t status =
            read ? devrt_hsa.hsa_amd_memory_async_copy(b->staging, b->cpu, device_at, b->gpu, n, 0,
                                                       NULL, b->copied)
                 : devrt_hsa.hsa_amd_memory_async_copy(device_at, b->gpu, b->staging, b->cpu, n, 0,
                                                       NULL, b->copied);
        if (status != HSA_STATUS_SUCCESS) {
            result = -1;
            break;
        }
        /*
         * The acquire wait makes the engine's writes to the staging buffer visible. After a
         * fault the driver evicted the copy engine's queues too, and the copy never ends,
         * reported or not (devrt_hsa_stopped).
         */
        while (devrt_hsa.hsa_signal_wait_scacquire(b->copied, HSA_SIGNAL_CONDITION_LT, 1,
                                                   b->ticks_per_ms * 100,
                                                   HSA_WAIT_STATE_BLOCKED) >= 1)
            if (devrt_hsa_stopped(b)) {
                result = -1;
                break;
            }
        if (read && result == 0)
            memcpy(host_at, b->staging, n);
    }
    pthread_mutex_unlock(&b->staging_lock);
    return result;
}

/* RESULT of a copy on DEVICE; one that failed because the GPU stopped loses the device,
   and the caller's failure is then told as the loss. */
static int lose_if_stopped(devrt_device *device, struct hsa_backend *b, int result)
{
    if (result != 0 && devrt_hsa_faulted(b))
        devrt_hsa_lose(device, b, stderr);
    return result;
}

void *devrt_hsa_alloc(devrt_device *device, size_t size, enum devrt_memory memory)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    void *ptr = NULL;
    bool host = memory == DEVRT_MEMORY_HOST || memory == DEVRT_MEMORY_HOST_RAW;
    hsa_amd_memory_pool_t pool = host ? b->fine : b->coarse;
    if (devrt_hsa.hsa_amd_memory_pool_allocate(pool, size, 0, &ptr) != HSA_STATUS_SUCCESS)
        return NULL;
    if (host) {
        /* Memory the GPU may not reach is no use: it would fault the first kernel. */
        if (devrt_hsa.hsa_amd_agents_allow_access(1, &b->gpu, NULL, ptr) != HSA_STATUS_SUCCESS) {
            devrt_hsa.hsa_amd_memory_pool_free(ptr);
            return NULL;
        }
        if (memory == DEVRT_MEMORY_HOST)
            memset(ptr, 0, size);
    } else if (memory == DEVRT_MEMORY_DEVICE && copy_through_staging(b, NULL, ptr, size, false)) {
        /* Zeroed by copies, not hsa_amd_memory_fill: ROCr's fill is a kernel it waits for
           without a bound (GpuAgent::DmaFill), which never returns on a GPU whose queues a
           fault evicted; a copy's wait here ends when the GPU stops (devrt_hsa_stopped). */
        devrt_hsa.hsa_amd_memory_pool_free(ptr);
        lose_if_stopped(device, b, -1);
        return NULL;
    }
    /* A fault there is then devrt's to claim (hsa_faults.c). */
    if (!devrt_hsa_own(b, ptr, size)) {
        devrt_hsa.hsa_amd_memory_pool_free(ptr);
        return NULL;
    }
    return ptr;
}

void devrt_hsa_free(devrt_device *device, void *ptr, enum devrt_memory memory)
{
    (void)memory;
    if (!ptr)
        return;
    devrt_hsa_disown(devrt_device_backend_state(device), ptr);
    devrt_hsa.hsa_amd_memory_pool_free(ptr);
}

/*
 * SIZE bytes at the device address DEVICE_SIDE (src when reading, dst when writing), which
 * may be one the device made up (a string's): the runtime must place the whole range in
 * one of its allocations, or the copy fails instead of faulting. Host memory is copied by
 * the host itself, the GPU's by the copy engine through the staging buffer; no
 * hsa_memory_copy, which copies any address it cannot place as host memory.
 */
int devrt_hsa_copy(struct hsa_backend *b, void *dst, const void *src, size_t size, bool read)
{
    if (size == 0)
        return 0;
    const void *device_side = read ? src : dst;
    hsa_amd_pointer_info_t info = {.size = sizeof info};
    if (devrt_hsa.hsa_amd_pointer_info(device_side, &info, NULL, NULL, NULL) != HSA_STATUS_SUCCESS)
        return -1;
    void *host = NULL;
    switch (devrt_hsa_access(&info, (uintptr_t)device_side, size, &host)) {
    case DEVRT_HSA_ACCESS_NONE: return -1;
    case DEVRT_HSA_ACCESS_HOST: memcpy(read ? dst : host, read ? host : src, size); return 0;
    case DEVRT_HSA_ACCESS_DEVICE: break;
    }
    return read ? copy_through_staging(b, dst, (void *)src, size, true)
                : copy_through_staging(b, (void *)src, dst, size, false);
}

int devrt_hsa_read(devrt_device *device, void *dst, const void *src, size_t size)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    return lose_if_stopped(device, b, devrt_hsa_copy(b, dst, src, size, true));
}

int devrt_hsa_write(devrt_device *device, void *dst, const void *src, size_t size)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    return lose_if_stopped(device, b, devrt_hsa_copy(b, dst, src, size, false));
}
