/*
 * The HIP backend: AMD GPUs through the HIP runtime (libamdhip64, hip_library.h), as the
 * CUDA backend runs NVIDIA GPUs through the driver API, call for call:
 *
 * - Images are amdgcn code objects, read from the file and loaded from memory
 *   (hipModuleLoadData); __devrt_state is found with hipModuleGetGlobal. The code object's
 *   metadata, where devrt reads it, checks a launch's arguments before HIP lays them out.
 * - Device memory from hipMalloc, zeroed by a fill on the copy stream; host-visible memory
 *   from hipHostMalloc (mapped), which the device sees at the host's address
 *   (hipHostGetDevicePointer checks that).
 * - Kernels run on streams that do not synchronize with the null stream, and the runtime's
 *   copies on another, so that the server reads device memory while a kernel waits for it.
 * - A launch is ordered after the module's previous one on another stream by an event, and
 *   waited for through its event or its stream; a timeout is polled (hipEventQuery), since
 *   HIP has no wait with one. HIP cannot stop a kernel: one past its timeout runs on.
 * - The doorbell is polled, as CUDA's is: the device sets a word in host memory.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hip_library.h"
#include "backend.h"
#include "kernel_cache.h"
#include "codeobject.h"

#ifdef DEVRT_HAVE_AMDGPU_METADATA
#include "amdgpu_dispatch.h"
#include "amdgpu_metadata.h"
#endif

struct hip_backend {
    int device;
    hipStream_t launch; /* kernels: the default stream's */
    hipStream_t copy;   /* the runtime's copies and fills */
    hipEvent_t *events; /* spare events for launches (under the launches' lock) */
    size_t event_count, event_capacity;
    bool zero_pending; /* a fill is queued on the copy stream and not yet waited for */
    struct devrt_hip_staging staging; /* reads of what only the HSA runtime knows */
    /* The state variables of loaded modules, which HIP's pointer queries do not know. */
    pthread_mutex_t states_lock;
    uintptr_t *states; /* 0: a free entry */
    size_t state_count;
    char arch[64]; /* the target ID: gfx90a:sramecc+:xnack- */
    char name[128];
    size_t memory_bytes;
};

struct hip_module {
    hipModule_t module; /* from the module's image, which outlives it (module.c) */
    struct devrt_kernel_cache kernels;
#ifdef DEVRT_HAVE_AMDGPU_METADATA
    struct devrt_amdgpu_metadata *metadata; /* NULL: the image has none devrt can read */
#endif
};

/* Every thread that calls HIP (the caller's, the server's, a stream's) selects the GPU. */
static struct hip_backend *bind(devrt_device *device)
{
    struct hip_backend *b = devrt_device_backend_state(device);
    devrt_hip.hipSetDevice(b->device);
    return b;
}

static bool host_visible(enum devrt_memory memory)
{
    return memory == DEVRT_MEMORY_HOST || memory == DEVRT_MEMORY_HOST_RAW;
}

static void *hip_alloc(devrt_device *device, size_t size, enum devrt_memory memory)
{
    struct hip_backend *b = bind(device);
    if (host_visible(memory)) {
        void *ptr = devrt_hip_map_host(size);
        if (ptr && memory == DEVRT_MEMORY_HOST)
            memset(ptr, 0, size);
        return ptr;
    }
    void *ptr = NULL;
    if (devrt_hip.hipMalloc(&ptr, size) != hipSuccess)
        return NULL;
    /* Waited for by the copies that follow on that stream, and by the next launch. */
    if (memory == DEVRT_MEMORY_DEVICE) {
        if (devrt_hip.hipMemsetAsync(ptr, 0, size, b->copy) != hipSuccess) {
            devrt_hip.hipFree(ptr);
            return NULL;
        }
        __atomic_store_n(&b->zero_pending, true, __ATOMIC_RELAXED);
    }
    return ptr;
}

static void hip_free(devrt_device *device, void *ptr, enum devrt_memory memory)
{
    if (!ptr)
        return;
    bind(device);
    if (host_visible(memory))
        devrt_hip.hipHostFree(ptr);
    else
        devrt_hip.hipFree(ptr);
}

static bool is_state(struct hip_backend *b, const void *address, size_t size)
{
    uintptr_t p = (uintptr_t)address;
    bool found = false;
    pthread_mutex_lock(&b->states_lock);
    for (size_t i = 0; !found && i < b->state_count; ++i)
        found = b->states[i] && p >= b->states[i] && p - b->states[i] < sizeof(void *) &&
                size <= sizeof(void *) - (p - b->states[i]);
    pthread_mutex_unlock(&b->states_lock);
    return found;
}

/* Replaces the state variable OLD (0: a free entry) with STATE; -1 without memory. */
static int set_state(struct hip_backend *b, uintptr_t old, uintptr_t state)
{
    int status = -1;
    pthread_mutex_lock(&b->states_lock);
    for (size_t i = 0; status && i < b->state_count; ++i)
        if (b->states[i] == old) {
            b->states[i] = state;
            status = 0;
        }
    if (status && !old) {
        uintptr_t *grown = realloc(b->states, (b->state_count + 16) * sizeof *grown);
        if (grown) {
            memset(grown + b->state_count, 0, 16 * sizeof *grown);
            grown[b->state_count] = state;
            b->states = grown;
            b->state_count += 16;
            status = 0;
        }
    }
    pthread_mutex_unlock(&b->states_lock);
    return status;
}

/*
 * Copies between addresses HIP knows (its allocations, a module's __devrt_state): HIP would
 * take any other address for pageable host memory and fault on a made-up one. The rest of a
 * code object's memory (report strings) is read through the HSA runtime beneath HIP.
 */
static int copy(devrt_device *device, void *dst, const void *src, size_t size)
{
    if (size == 0)
        return 0;
    struct hip_backend *b = bind(device);
    bool known = devrt_hip_known(src, size) || devrt_hip_known(dst, size) ||
                 is_state(b, src, size) || is_state(b, dst, size);
    if (!known)
        return devrt_hip_read_through_hsa(&b->staging, dst, src, size);
    if (devrt_hip.hipMemcpyWithStream(dst, src, size, hipMemcpyDefault, b->copy) != hipSuccess ||
        devrt_hip.hipStreamSynchronize(b->copy) != hipSuccess)
        return -1;
    __atomic_store_n(&b->zero_pending, false, __ATOMIC_RELAXED);
    return 0;
}

static int hip_read(devrt_device *device, void *dst, const void *src, size_t size)
{
    return copy(device, dst, src, size);
}

static int hip_write(devrt_device *device, void *dst, const void *src, size_t size)
{
    return copy(device, dst, src, size);
}

static void release_backend(struct hip_backend *b)
{
    for (size_t i = 0; i < b->event_count; ++i)
        devrt_hip.hipEventDestroy(b->events[i]);
    free(b->events);
    if (b->staging.buffer)
        devrt_hip.hipHostFree(b->staging.buffer);
    pthread_mutex_destroy(&b->staging.lock);
    if (b->launch)
        devrt_hip.hipStreamDestroy(b->launch);
    if (b->copy)
        devrt_hip.hipStreamDestroy(b->copy);
    pthread_mutex_destroy(&b->states_lock);
    free(b->states);
    free(b);
}

static int hip_open(devrt_device *device, int index)
{
    int status = devrt_hip_open();
    if (status != DEVRT_SUCCESS)
        return status;
    int count = 0;
    hipError_t r = devrt_hip.hipGetDeviceCount(&count);
    if (r != hipSuccess && r != hipErrorNoDevice)
        return devrt_hip_failed(DEVRT_ERROR_NO_DEVICE, r, "the runtime did not start");
    if (r == hipErrorNoDevice || index >= count)
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "HIP: no AMD GPU %d (found %d)", index,
                          r == hipSuccess ? count : 0);
    struct hip_backend *b = calloc(1, sizeof *b);
    if (!b)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for the HIP backend");
    pthread_mutex_init(&b->states_lock, NULL);
    pthread_mutex_init(&b->staging.lock, NULL);
    b->device = index;
    int warp = 0;
    hipDeviceProp_t properties;
    memset(&properties, 0, sizeof properties);
    r = devrt_hip.hipSetDevice(index);
    if (r == hipSuccess)
        r = devrt_hip.hipDeviceGetAttribute(&warp, hipDeviceAttributeWarpSize, index);
    if (r == hipSuccess)
        r = devrt_hip.hipGetDeviceProperties(&properties, index);
    if (r == hipSuccess)
        r = devrt_hip.hipStreamCreateWithFlags(&b->launch, hipStreamNonBlocking);
    if (r == hipSuccess)
        r = devrt_hip.hipStreamCreateWithFlags(&b->copy, hipStreamNonBlocking);
    if (r != hipSuccess) {
        release_backend(b);
        return devrt_hip_failed(DEVRT_ERROR_BACKEND, r, "cannot open the device");
    }
    /* The target ID first: devrt_device_image_path takes the processor from the name. */
    properties.gcnArchName[sizeof properties.gcnArchName - 1] = '\0';
    properties.name[sizeof properties.name - 1] = '\0';
    snprintf(b->arch, sizeof b->arch, "%.63s", properties.gcnArchName);
    snprintf(b->name, sizeof b->name, "%.60s %.60s", properties.gcnArchName, properties.name);
    b->memory_bytes = properties.totalGlobalMem;
    devrt_device_set_backend_state(device, b);
    devrt_device_set_wave_size(device, (uint32_t)warp);
    b->staging.buffer = devrt_hip_map_host(DEVRT_HIP_STAGING);
    struct devrt_rpc_doorbell *doorbell = hip_alloc(device, sizeof *doorbell, DEVRT_MEMORY_HOST);
    devrt_device_set_doorbell(device, doorbell);
    if (!doorbell || !b->staging.buffer) {
        hip_free(device, doorbell, DEVRT_MEMORY_HOST);
        devrt_device_set_doorbell(device, NULL);
        release_backend(b);
        devrt_device_set_backend_state(device, NULL);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "HIP: no mapped host memory for the doorbell");
    }
    return DEVRT_SUCCESS;
}

static void hip_close(devrt_device *device)
{
    struct hip_backend *b = bind(device);
    devrt_hip.hipStreamSynchronize(b->copy);
    hip_free(device, devrt_device_doorbell(device), DEVRT_MEMORY_HOST);
    release_backend(b);
}

static void free_module(struct hip_module *m)
{
#ifdef DEVRT_HAVE_AMDGPU_METADATA
    devrt_amdgpu_metadata_free(m->metadata);
#endif
    devrt_kernel_cache_free(&m->kernels);
    free(m);
}

static int hip_load(devrt_module *module, struct devrt_state ***state_variable)
{
    struct hip_backend *b = bind(devrt_module_device(module));
    const char *path = devrt_module_path(module);
    const void *image = devrt_module_image(module);
    struct hip_module *m = calloc(1, sizeof *m);
    if (!m)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a module");
    devrt_kernel_cache_init(&m->kernels);
    int status = DEVRT_ERROR_IMAGE;
#ifdef DEVRT_HAVE_AMDGPU_METADATA
    /* The arguments' sizes, for devrt_launch's checks; an image without it is HIP's to judge. */
    if (devrt_amdgpu_metadata_read(image, devrt_module_image_size(module), path, &m->metadata) !=
        DEVRT_SUCCESS)
        m->metadata = NULL;
    /* Refused here with both names, not by HIP with a bare error code (as hsa_load does). */
    if (m->metadata && b->arch[0] &&
        devrt_amdgpu_check_target(m->metadata, path, b->arch) == DEVRT_ERROR_IMAGE)
        goto failed;
#endif
    hipError_t r = devrt_hip.hipModuleLoadData(&m->module, image);
    if (r != hipSuccess) {
        const char *text = devrt_hip.hipGetErrorString(r);
        status = devrt_fail(DEVRT_ERROR_IMAGE,
                            "%s: HIP cannot load it as a code object for the GPU: %s (%d)", path,
                            text ? text : "unknown error", (int)r);
        goto failed;
    }
    hipDeviceptr_t address = NULL;
    size_t bytes = 0;
    r = devrt_hip.hipModuleGetGlobal(&address, &bytes, m->module, DEVRT_STATE_SYMBOL);
    if (r != hipSuccess || bytes != sizeof(struct devrt_state *)) {
        devrt_hip.hipModuleUnload(m->module);
        status =
            devrt_fail(DEVRT_ERROR_IMAGE, "%s: no %s in it (does it link devrt's device library?)",
                       path, DEVRT_STATE_SYMBOL);
        goto failed;
    }
    if (set_state(b, 0, (uintptr_t)address) != 0) {
        devrt_hip.hipModuleUnload(m->module);
        status = devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a module");
        goto failed;
    }
    *state_variable = (struct devrt_state **)address;
    devrt_module_set_backend_state(module, m);
    return DEVRT_SUCCESS;
failed:
    free_module(m);
    return status;
}

static void hip_unload(devrt_module *module)
{
    struct hip_module *m = devrt_module_backend_state(module);
    struct hip_backend *b = bind(devrt_module_device(module));
    set_state(b, (uintptr_t)devrt_module_state_variable(module), 0);
    devrt_hip.hipModuleUnload(m->module);
    free_module(m);
}

/* The kernel, looked up in HIP on its first launch only. */
static int find_kernel(devrt_module *module, const char *kernel, struct devrt_kernel_entry **out)
{
    struct hip_module *m = devrt_module_backend_state(module);
    struct devrt_kernel_entry *k = devrt_kernel_cache_find(&m->kernels, kernel);
    if (!k) {
        hipFunction_t function;
        if (devrt_hip.hipModuleGetFunction(&function, m->module, kernel) != hipSuccess)
            return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s: no kernel %s", devrt_module_path(module),
                              kernel);
        k = devrt_kernel_cache_add(&m->kernels, kernel, function, NULL, 0);
        if (!k)
            return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for kernel %s", kernel);
    }
    *out = k;
    return DEVRT_SUCCESS;
}

/* Back to the spares (under the launches' lock). */
static void give_event(struct hip_backend *b, hipEvent_t event)
{
    if (b->event_count == b->event_capacity) {
        size_t capacity = b->event_capacity ? 2 * b->event_capacity : 64;
        hipEvent_t *grown = realloc(b->events, capacity * sizeof *grown);
        if (!grown) {
            devrt_hip.hipEventDestroy(event);
            return;
        }
        b->events = grown;
        b->event_capacity = capacity;
    }
    b->events[b->event_count++] = event;
}

static hipEvent_t take_event(struct hip_backend *b)
{
    if (b->event_count)
        return b->events[--b->event_count];
    hipEvent_t event = NULL;
    if (devrt_hip.hipEventCreateWithFlags(&event, hipEventDisableTiming) != hipSuccess)
        return NULL;
    return event;
}

static int hip_describe_kernel(devrt_module *module, const char *kernel,
                               struct devrt_kernel_description *description)
{
    struct devrt_kernel_entry *k;
    int status = find_kernel(module, kernel, &k);
    if (status != DEVRT_SUCCESS)
        return status;
#ifdef DEVRT_HAVE_AMDGPU_METADATA
    const struct hip_module *m = devrt_module_backend_state(module);
    const struct devrt_amdgpu_kernel *described =
        m->metadata ? devrt_amdgpu_metadata_kernel(m->metadata, kernel) : NULL;
    if (described) {
        description->param_sizes = described->explicit_sizes;
        description->param_count = described->explicit_count;
        description->param_kinds = described->explicit_kinds;
        description->param_names = (const char *const *)described->explicit_names;
        return DEVRT_SUCCESS;
    }
#endif
    /* Without the metadata's sizes HIP would read a parameter's bytes past what was given. */
    description->no_bytes_by_value = "which needs the parameters' sizes from the code object's "
                                     "metadata";
    return DEVRT_SUCCESS;
}

static uint32_t hip_rpc_lanes(devrt_module *module)
{
    uint32_t wave_size = devrt_device_wave_size(devrt_module_device(module));
#ifdef DEVRT_HAVE_AMDGPU_METADATA
    const struct hip_module *m = devrt_module_backend_state(module);
    if (m->metadata)
        return devrt_amdgpu_rpc_lanes(m->metadata, wave_size);
#endif
    return wave_size;
}

static hipStream_t stream_of(const struct devrt_launch_entry *entry)
{
    if (entry->stream->backend)
        return entry->stream->backend;
    const struct hip_backend *b = devrt_device_backend_state(devrt_module_device(entry->module));
    return b->launch;
}

/* As CUDA's: BEFORE's event, or a stand-in recorded on its stream now and destroyed at once
   (HIP frees it once complete) for a launch without one. */
static int hip_order_after(struct devrt_launch_entry *entry,
                           const struct devrt_launch_entry *before)
{
    bind(devrt_module_device(entry->module));
    hipEvent_t event = before->backend[0], stand_in = NULL;
    hipError_t r = hipSuccess;
    if (!event) {
        r = devrt_hip.hipEventCreateWithFlags(&stand_in, hipEventDisableTiming);
        if (r == hipSuccess)
            r = devrt_hip.hipEventRecord(stand_in, stream_of(before));
        event = stand_in;
    }
    if (r == hipSuccess)
        r = devrt_hip.hipStreamWaitEvent(stream_of(entry), event, 0);
    if (stand_in)
        devrt_hip.hipEventDestroy(stand_in);
    if (r != hipSuccess)
        return devrt_hip_failed(DEVRT_ERROR_LAUNCH, r, "ordering a launch after the module's last");
    return DEVRT_SUCCESS;
}

/* A write on the launch's stream, so in order with the module's earlier kernels. */
static int hip_point_state(struct devrt_launch_entry *entry)
{
    bind(devrt_module_device(entry->module));
    hipStream_t stream = stream_of(entry);
    void *where = &devrt_module_state(entry->module)->exception;
    uint64_t value = (uint64_t)(uintptr_t)entry->slot;
    hipError_t r = devrt_hip.write_value ? devrt_hip.write_value(stream, where, value, 0)
                                         : hipErrorNotSupported;
    if (r != hipSuccess) /* little-endian halves */
        r = devrt_hip.hipMemsetD32Async((hipDeviceptr_t)where, (int)(uint32_t)value, 1, stream) ==
                    hipSuccess
                ? devrt_hip.hipMemsetD32Async((hipDeviceptr_t)((char *)where + 4),
                                              (int)(uint32_t)(value >> 32), 1, stream)
                : hipErrorNotSupported;
    if (r != hipSuccess)
        return devrt_hip_failed(DEVRT_ERROR_LAUNCH, r, "pointing the state at a launch's record");
    return DEVRT_SUCCESS;
}

/* As CUDA: the kernel, then an event for a launch with a timeout or an asynchronous one. */
static int hip_submit(struct devrt_launch_entry *entry, const struct devrt_arg *args,
                      size_t arg_count)
{
    devrt_module *module = entry->module;
    struct hip_backend *b = bind(devrt_module_device(module));
    hipStream_t stream = stream_of(entry);
    struct devrt_kernel_entry *k = NULL;
    int status = find_kernel(module, entry->kernel, &k);
    if (status != DEVRT_SUCCESS)
        return status;
    hipError_t r = hipSuccess;
    if (__atomic_exchange_n(&b->zero_pending, false, __ATOMIC_RELAXED))
        r = devrt_hip.hipStreamSynchronize(b->copy);
    if (r != hipSuccess)
        return devrt_hip_failed(DEVRT_ERROR_LAUNCH, r, "waiting for the fills before a launch");
    void *params[arg_count ? arg_count : 1];
    for (size_t i = 0; i < arg_count; ++i)
        params[i] = (void *)devrt_arg_data(&args[i]); /* HIP copies each at launch */
    r = devrt_hip.hipModuleLaunchKernel((hipFunction_t)k->function, entry->config.grid[0],
                                        entry->config.grid[1], entry->config.grid[2],
                                        entry->config.block[0], entry->config.block[1],
                                        entry->config.block[2], 0, stream, params, NULL);
    if (r != hipSuccess)
        return devrt_hip_failed(DEVRT_ERROR_LAUNCH, r, entry->kernel);
    entry->backend[0] = NULL;
    if (entry->id || entry->config.timeout_ns) {
        hipEvent_t event = take_event(b);
        if (!event || devrt_hip.hipEventRecord(event, stream) != hipSuccess) {
            if (event)
                give_event(b, event);
            event = NULL;
        }
        entry->backend[0] = event;
    }
    return DEVRT_SUCCESS;
}

/* Until DEADLINE, polled from 50 us apart up to 1 ms: HIP has no wait with a timeout. */
static hipError_t wait_until(hipEvent_t event, hipStream_t stream, uint64_t deadline)
{
    struct timespec pause = {0, 50000};
    for (;;) {
        hipError_t r = event ? devrt_hip.hipEventQuery(event) : devrt_hip.hipStreamQuery(stream);
        if (r != hipErrorNotReady || devrt_now_ns() >= deadline)
            return r;
        nanosleep(&pause, NULL);
        if (pause.tv_nsec < 1000000)
            pause.tv_nsec *= 2;
    }
}

static int hip_complete(struct devrt_launch_entry *entry, uint64_t deadline)
{
    devrt_device *device = devrt_module_device(entry->module);
    struct hip_backend *b = bind(device);
    hipStream_t stream = entry->stream->backend ? entry->stream->backend : b->launch;
    hipEvent_t event = entry->backend[0];
    hipError_t r = deadline ? wait_until(event, stream, deadline)
                   : event  ? devrt_hip.hipEventSynchronize(event)
                            : devrt_hip.hipStreamSynchronize(stream);
    if (r == hipErrorNotReady)
        return devrt_fail(DEVRT_ERROR_TIMEOUT,
                          "kernel %s ran past its timeout of %.3f s; HIP cannot stop a kernel, so "
                          "it runs on, and the module's later launches wait for it",
                          entry->kernel, (double)entry->config.timeout_ns / 1e9);
    if (r != hipSuccess) {
        const char *text = devrt_hip.hipGetErrorString(r);
        char what[600];
        if (entry->id)
            snprintf(what, sizeof what, "kernel %s (launch %" PRIu64 ") faulted: HIP: %s (%d)",
                     entry->kernel, entry->id, text ? text : "unknown error", (int)r);
        else
            snprintf(what, sizeof what, "kernel %s faulted: HIP: %s (%d)", entry->kernel,
                     text ? text : "unknown error", (int)r);
        return devrt_device_mark_lost(device, what);
    }
    return DEVRT_SUCCESS;
}

static void hip_release(struct devrt_launch_entry *entry)
{
    struct hip_backend *b = devrt_device_backend_state(entry->stream->device);
    hipEvent_t event = entry->backend[0];
    entry->backend[0] = NULL;
    if (event)
        give_event(b, event);
}

static int hip_stream_create(devrt_stream *stream)
{
    bind(stream->device);
    hipStream_t s = NULL;
    hipError_t r = devrt_hip.hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
    if (r != hipSuccess)
        return devrt_hip_failed(DEVRT_ERROR_BACKEND, r, "cannot create a stream");
    stream->backend = s;
    return DEVRT_SUCCESS;
}

static void hip_stream_destroy(devrt_stream *stream)
{
    bind(stream->device);
    devrt_hip.hipStreamDestroy((hipStream_t)stream->backend);
}

static void hip_describe(const devrt_device *device, struct devrt_device_info *info)
{
    const struct hip_backend *b = devrt_device_backend_state(device);
    snprintf(info->name, sizeof info->name, "%.127s", b->name);
    info->memory_bytes = b->memory_bytes;
}

/* The GPU's PCI address, then sysfs's list for it. */
static int hip_local_cpus(const devrt_device *device, char *list, size_t size)
{
    const struct hip_backend *b = devrt_device_backend_state(device);
    char id[64];
    unsigned domain, bus, slot, function;
    if (!devrt_hip.bus_id || devrt_hip.bus_id(id, (int)sizeof id, b->device) != hipSuccess ||
        sscanf(id, "%x:%x:%x.%x", &domain, &bus, &slot, &function) != 4)
        return -1;
    return devrt_pci_local_cpus("/sys", domain, bus, slot, function, list, size);
}

const struct devrt_backend_ops devrt_hip_backend = {
    .open = hip_open,
    .close = hip_close,
    .alloc = hip_alloc,
    .free = hip_free,
    .read = hip_read,
    .write = hip_write,
    .load = hip_load,
    .unload = hip_unload,
    .stream_create = hip_stream_create,
    .stream_destroy = hip_stream_destroy,
    .describe_kernel = hip_describe_kernel,
    .rpc_lanes = hip_rpc_lanes,
    .order_after = hip_order_after,
    .point_state = hip_point_state,
    .state_in_stream_order = true,
    .submit = hip_submit,
    .complete = hip_complete,
    .release = hip_release,
    .arm_doorbell = devrt_polled_arm_doorbell,
    .wait_doorbell = devrt_polled_wait_doorbell,
    .ring_doorbell = devrt_polled_ring_doorbell,
    .describe = hip_describe,
    .local_cpus = hip_local_cpus,
};
