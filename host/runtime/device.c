/* Devices: choosing a backend, opening it, its memory, and its server. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "trace.h"

int devrt_device_create(enum devrt_backend kind, const struct devrt_backend_ops *ops, void *backend,
                        int index, const struct devrt_device_options *options, devrt_device **out)
{
    devrt_device *device = calloc(1, sizeof *device);
    if (!device)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a device");
    device->kind = kind;
    device->index = index;
    device->ops = ops;
    device->backend = backend;
    if (options) {
        device->rpc_ports = options->rpc_ports;
        device->heap_initial_bytes = options->heap_initial_bytes;
        device->heap_max_bytes = options->heap_max_bytes;
        device->options = *options;
    }
    uint64_t start = devrt_now_ns();
    int status = ops->open(device, index);
    if (status != DEVRT_SUCCESS) {
        free(device);
        return status;
    }
    uint64_t opened = devrt_now_ns();
    status = devrt_server_start(device);
    if (status != DEVRT_SUCCESS) {
        ops->close(device);
        free(device);
        return status;
    }
    devrt_launches_init(device);
    status = devrt_trace_from_environment(device);
    if (status != DEVRT_SUCCESS) {
        devrt_launches_fini(device);
        devrt_server_stop(device);
        ops->close(device);
        free(device);
        return status;
    }
    device->open_driver_ns = opened - start;
    device->open_runtime_ns = devrt_now_ns() - opened;
    *out = device;
    return DEVRT_SUCCESS;
}

int devrt_device_open(enum devrt_backend backend, int index,
                      const struct devrt_device_options *options, devrt_device **out)
{
    if (!out)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_device_open: no output pointer");
    *out = NULL;
    const struct devrt_backend_entry *entry = devrt_backend_entry(backend);
    if (!entry)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "devrt_device_open: backend %d is not one a device is opened on",
                          (int)backend);
    if (index < 0)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_device_open: device index %d",
                          index);
    if (!entry->ops)
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "the %s backend is not built into this runtime",
                          entry->name);
    return devrt_device_create(backend, entry->ops, NULL, index, options, out);
}

void devrt_device_close(devrt_device *device)
{
    if (!device)
        return;
    while (device->server.modules)
        devrt_module_unload(device->server.modules);
    devrt_launches_fini(device);
    devrt_server_stop(device);
    /* Nothing records any more: the server and the stream threads have ended. */
    devrt_trace_finish(device);
    device->ops->close(device);
    free(device);
}

enum devrt_backend devrt_device_backend(const devrt_device *device)
{
    return device ? device->kind : DEVRT_BACKEND_AUTO;
}

int devrt_device_stops_kernels(const devrt_device *device)
{
    return device && device->ops->stops_kernels;
}

int devrt_device_get_info(const devrt_device *device, struct devrt_device_info *info)
{
    if (!device || !info)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_device_get_info: missing argument");
    memset(info, 0, sizeof *info);
    info->wave_size = device->wave_size;
    info->open_driver_ns = device->open_driver_ns;
    info->open_runtime_ns = device->open_runtime_ns;
    const struct devrt_server_cpus *placed = &device->server.placed;
    snprintf(info->server_cpus, sizeof info->server_cpus, "%s", placed->list);
    info->server_placement = placed->placement;
    info->server_cpu_ns = devrt_server_cpu_ns(device);
    if (device->ops->describe)
        device->ops->describe(device, info);
    return DEVRT_SUCCESS;
}

int devrt_device_image_path(const devrt_device *device, const char *pattern, char *path,
                            size_t size)
{
    static const char token[] = "{target}";
    struct devrt_device_info info;
    if (!pattern || !path || devrt_device_get_info(device, &info) != DEVRT_SUCCESS)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "devrt_device_image_path: missing argument");
    /* The processor is the name's first word, before a target ID's features or a GPU's name. */
    size_t processor = strcspn(info.name, ": ");
    size_t used = 0;
    for (const char *p = pattern; *p;) {
        const char *piece = p;
        size_t length = 1;
        if (!strncmp(p, token, sizeof token - 1)) {
            piece = info.name;
            length = processor;
            p += sizeof token - 1;
        } else {
            ++p;
        }
        if (used + length >= size)
            return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "%s: the path for %.*s is too long",
                              pattern, (int)processor, info.name);
        memcpy(path + used, piece, length);
        used += length;
    }
    if (size == 0)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "%s: no room for the path", pattern);
    path[used] = '\0';
    return DEVRT_SUCCESS;
}

int devrt_device_mark_lost(devrt_device *device, const char *why)
{
    /* The first to claim the reason writes it; callers hold no lock of the device's. */
    if (!__atomic_exchange_n(&device->lost_claimed, true, __ATOMIC_RELAXED)) {
        snprintf(device->lost_why, sizeof device->lost_why, "%s", why);
        /* Pairs with the acquire load in devrt_device_check_lost. */
        __atomic_store_n(&device->lost, true, __ATOMIC_RELEASE);
    }
    return devrt_fail(DEVRT_ERROR_DEVICE_LOST, "%s; the device is lost: close it", why);
}

int devrt_device_check_lost(const devrt_device *device)
{
    if (!__atomic_load_n(&device->lost, __ATOMIC_ACQUIRE))
        return DEVRT_SUCCESS;
    return devrt_fail(DEVRT_ERROR_DEVICE_LOST, "the device is lost (%s): close it",
                      device->lost_why);
}

bool devrt_device_is_lost(const devrt_device *device)
{
    return __atomic_load_n(&device->lost, __ATOMIC_ACQUIRE);
}

void *devrt_mem_alloc(devrt_device *device, size_t size)
{
    if (!device || size == 0) {
        devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_mem_alloc: %s",
                   device ? "a size of 0 bytes" : "no device");
        return NULL;
    }
    /* No C object is larger (malloc refuses it too), and the backends round sizes up to
       their blocks: past this, the rounding would wrap to a small block. */
    if (size > PTRDIFF_MAX) {
        devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "devrt_mem_alloc: %zu bytes is more than any block",
                   size);
        return NULL;
    }
    if (devrt_device_check_lost(device) != DEVRT_SUCCESS)
        return NULL;
    void *memory = device->ops->alloc(device, size, DEVRT_MEMORY_HOST);
    if (!memory)
        devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "devrt_mem_alloc: no memory for %zu bytes", size);
    return memory;
}

void devrt_mem_free(devrt_device *device, void *ptr)
{
    if (device && ptr)
        device->ops->free(device, ptr, DEVRT_MEMORY_HOST);
}

/* The accessors of backend.h: backends see a device through these alone. */
void *devrt_device_backend_state(const devrt_device *device)
{
    return device->backend;
}
void devrt_device_set_backend_state(devrt_device *device, void *state)
{
    device->backend = state;
}
struct devrt_rpc_doorbell *devrt_device_doorbell(const devrt_device *device)
{
    return device->doorbell;
}
void devrt_device_set_doorbell(devrt_device *device, struct devrt_rpc_doorbell *doorbell)
{
    device->doorbell = doorbell;
}
uint32_t devrt_device_wave_size(const devrt_device *device)
{
    return device->wave_size;
}
void devrt_device_set_wave_size(devrt_device *device, uint32_t wave_size)
{
    device->wave_size = wave_size;
}
const struct devrt_device_options *devrt_device_open_options(const devrt_device *device)
{
    return &device->options;
}
const bool *devrt_device_test_stop(devrt_device *device)
{
    return devrt_faults_stop_flag(&device->server);
}
