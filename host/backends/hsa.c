/*
 * The HSA backend: AMD GPUs through hsa-runtime64. Code objects become executables, kernels
 * are dispatched as AQL packets, the state block and the ports' state words live in the GPU's
 * coarse-grained pool, and mailboxes, buffers and user memory in the system's fine-grained
 * pool. The doorbell is an HSA signal the device raises an interrupt on. This file opens the
 * runtime and the device; hsa_backend.h says where the rest lives.
 *
 * The HSA runtime (libhsa-runtime64.so.1) is opened with dlopen when a device is opened, not
 * linked, as the CUDA backend opens the driver: one build runs on machines with and without
 * ROCm. Where the library or one of its functions is missing, opening a device fails with
 * DEVRT_ERROR_NO_DEVICE and a message naming the library or the functions, so the hardware
 * tests skip. The library stays loaded until the process ends: its own threads and atexit
 * handlers may still run after hsa_shut_down, and a device may be opened again.
 *
 * What a launch puts in the packet and the kernarg segment is computed by
 * amdgpu_dispatch.c from the code object's metadata, without a GPU, and tested there; the
 * backend only allocates, enqueues, rings and waits (docs/runtime.md lists what only a GPU
 * tests).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa_backend.h"
#include "hsa_memory.h"
#include "vendor_library.h"

/*
 * The runtime's file, or the one $DEVRT_HSA_LIBRARY names ($DEVRT_TEST_HSA_LIBRARY, its older
 * name, still works), so that the tests can make the runtime absent or incomplete, or put
 * their double in its place, on a machine that has it.
 */
static const struct devrt_vendor_library hsa_library_files = {
    .what = "the ROCm HSA runtime",
    .variable = "DEVRT_HSA_LIBRARY",
    .old_variable = "DEVRT_TEST_HSA_LIBRARY",
    .files = (const char *const[]){"libhsa-runtime64.so.1", NULL},
};

struct devrt_hsa_library devrt_hsa;
static void *hsa_library; /* set only once every function of the table is resolved */
static char hsa_error[768];
static pthread_once_t hsa_once = PTHREAD_ONCE_INIT;

static void open_library(void)
{
    static const struct devrt_vendor_symbol symbols[] = {
#define X(fn) {#fn, &devrt_hsa.fn, false},
        DEVRT_HSA_FUNCTIONS(X)
#undef X
    };
    hsa_library = devrt_vendor_library_open(
        &hsa_library_files, symbols, sizeof symbols / sizeof *symbols, hsa_error, sizeof hsa_error);
}

int devrt_hsa_failed(int code, hsa_status_t status, const char *what)
{
    const char *text = NULL;
    devrt_hsa.hsa_status_string(status, &text);
    return devrt_fail(code, "HSA: %s: %s", what, text ? text : "unknown error");
}

static hsa_status_t find_agents(hsa_agent_t agent, void *data)
{
    struct hsa_backend *b = data;
    hsa_device_type_t type;
    if (devrt_hsa.hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) != HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    if (type == HSA_DEVICE_TYPE_CPU && b->cpu_count < DEVRT_HSA_MAX_CPUS)
        b->cpus[b->cpu_count++] = agent;
    if (type == HSA_DEVICE_TYPE_GPU && b->seen++ == b->wanted)
        b->gpu = agent;
    return HSA_STATUS_SUCCESS;
}

/* An agent's pools, as find_pools collects them for devrt_hsa_choose_pools. */
#define DEVRT_HSA_MAX_POOLS 32
struct pool_list {
    struct devrt_hsa_pool pool[DEVRT_HSA_MAX_POOLS];
    size_t count;
};

static hsa_status_t find_pools(hsa_amd_memory_pool_t pool, void *data)
{
    struct pool_list *list = data;
    if (list->count == DEVRT_HSA_MAX_POOLS)
        return HSA_STATUS_INFO_BREAK;
    struct devrt_hsa_pool p = {.handle = pool.handle};
    /* A pool the runtime cannot describe is left out: the choice never sees it. */
    if (devrt_hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                                               &p.segment) != HSA_STATUS_SUCCESS ||
        devrt_hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &p.size) !=
            HSA_STATUS_SUCCESS ||
        devrt_hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                                               &p.alloc_allowed) != HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    if (p.segment == HSA_AMD_SEGMENT_GLOBAL &&
        devrt_hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                                               &p.flags) != HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    list->pool[list->count++] = p;
    return HSA_STATUS_SUCCESS;
}

/* The first global pool of a CPU agent: its system memory. */
static hsa_status_t find_system_pool(hsa_amd_memory_pool_t pool, void *data)
{
    hsa_amd_segment_t segment;
    if (devrt_hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment) !=
            HSA_STATUS_SUCCESS ||
        segment != HSA_AMD_SEGMENT_GLOBAL)
        return HSA_STATUS_SUCCESS;
    *(hsa_amd_memory_pool_t *)data = pool;
    return HSA_STATUS_INFO_BREAK;
}

/*
 * The CPU agent whose memory is nearest the GPU, as ROCr's link info tells it (the kernel
 * driver's topology): host memory there is what the GPU reaches fastest, as clr's host
 * pools are. The first in ROCr's order where the runtime does not say.
 */
static hsa_agent_t nearest_cpu(struct hsa_backend *b)
{
    hsa_agent_t best = b->cpus[0];
    uint64_t best_distance = UINT64_MAX;
    for (size_t i = 0; i < b->cpu_count; ++i) {
        hsa_amd_memory_pool_t pool = {0};
        uint32_t hops = 0;
        hsa_amd_memory_pool_link_info_t links[4];
        devrt_hsa.hsa_amd_agent_iterate_memory_pools(b->cpus[i], find_system_pool, &pool);
        if (!pool.handle ||
            devrt_hsa.hsa_amd_agent_memory_pool_get_info(
                b->gpu, pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS, &hops) !=
                HSA_STATUS_SUCCESS ||
            hops == 0 || hops > 4 ||
            devrt_hsa.hsa_amd_agent_memory_pool_get_info(b->gpu, pool,
                                                         HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO,
                                                         links) != HSA_STATUS_SUCCESS)
            continue;
        uint64_t distance = 0;
        for (uint32_t h = 0; h < hops; ++h)
            distance += links[h].numa_distance;
        if (distance < best_distance) {
            best_distance = distance;
            best = b->cpus[i];
        }
    }
    return best;
}

/* The agent's first ISA, the one its code objects are loaded for. */
static hsa_status_t find_isa(hsa_isa_t isa, void *data)
{
    struct hsa_backend *b = data;
    uint32_t length = 0;
    if (devrt_hsa.hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &length) !=
            HSA_STATUS_SUCCESS ||
        length >= sizeof b->isa)
        return HSA_STATUS_SUCCESS;
    char name[sizeof b->isa] = "";
    if (devrt_hsa.hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, name) != HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    name[length] = '\0';
    memcpy(b->isa, name, sizeof b->isa);
    return HSA_STATUS_INFO_BREAK;
}

/* Everything hsa_open made, as far as it got, and the runtime's reference. */
static void release_backend(devrt_device *device)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    /* Destroying a queue ends what still runs on it: first, before its memory goes. */
    while (b->queue) {
        struct hsa_queue_record *q = b->queue;
        b->queue = q->older;
        devrt_hsa.hsa_queue_destroy(q->queue);
        free(q);
    }
    if (b->probe)
        devrt_hsa.hsa_queue_destroy(b->probe);
    if (b->probed.handle)
        devrt_hsa.hsa_signal_destroy(b->probed);
    if (b->kernarg_ring)
        devrt_hsa.hsa_amd_memory_pool_free(b->kernarg_ring);
    devrt_hsa_free(device, devrt_device_doorbell(device), DEVRT_MEMORY_HOST);
    devrt_device_set_doorbell(device, NULL);
    devrt_hsa_free(device, b->staging, DEVRT_MEMORY_HOST);
    if (b->copied.handle)
        devrt_hsa.hsa_signal_destroy(b->copied);
    if (b->doorbell.handle)
        devrt_hsa.hsa_signal_destroy(b->doorbell);
    free(b->ranges);
    pthread_mutex_destroy(&b->ranges_lock);
    pthread_mutex_destroy(&b->staging_lock);
    pthread_mutex_destroy(&b->queue_lock);
    pthread_mutex_destroy(&b->launches_lock);
    pthread_mutex_destroy(&b->probe_lock);
    free(b);
    devrt_device_set_backend_state(device, NULL);
    devrt_hsa.hsa_shut_down();
}

static int hsa_open(devrt_device *device, int index)
{
    pthread_once(&hsa_once, open_library);
    if (!hsa_library)
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "HSA: %s", hsa_error);
    hsa_status_t started = devrt_hsa.hsa_init();
    if (started != HSA_STATUS_SUCCESS)
        return devrt_hsa_failed(DEVRT_ERROR_NO_DEVICE, started,
                                "the runtime did not start (no AMD GPU or amdgpu driver?)");
    struct hsa_backend *b = calloc(1, sizeof *b);
    if (!b) {
        devrt_hsa.hsa_shut_down();
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for the HSA backend");
    }
    b->wanted = index;
    devrt_hsa.hsa_iterate_agents(find_agents, b);
    if (b->gpu.handle && b->cpu_count)
        b->cpu = nearest_cpu(b);
    if (!b->gpu.handle || !b->cpu.handle) {
        int seen = b->seen;
        free(b);
        devrt_hsa.hsa_shut_down();
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "HSA: no AMD GPU %d (found %d)", index, seen);
    }
    /* Nothing may reach the GPU's queues once a fault evicted them: a fill would never end. */
    int lost = DEVRT_ERROR_DEVICE_LOST;
    if (devrt_hsa.hsa_agent_get_info(b->gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DRIVER_NODE_ID,
                                     &b->node) != HSA_STATUS_SUCCESS)
        lost = devrt_fail(DEVRT_ERROR_BACKEND, "HSA: AMD GPU %d has no kernel driver node", index);
    else
        lost = devrt_hsa_lost_earlier(b->node, index);
    if (lost != DEVRT_SUCCESS) {
        free(b);
        devrt_hsa.hsa_shut_down();
        return lost;
    }
    struct pool_list gpu_pools = {0}, cpu_pools = {0};
    devrt_hsa.hsa_amd_agent_iterate_memory_pools(b->gpu, find_pools, &gpu_pools);
    devrt_hsa.hsa_amd_agent_iterate_memory_pools(b->cpu, find_pools, &cpu_pools);
    struct devrt_hsa_pools pools;
    char why[256];
    if (devrt_hsa_choose_pools(gpu_pools.pool, gpu_pools.count, cpu_pools.pool, cpu_pools.count,
                               &pools, why, sizeof why) != 0) {
        free(b);
        devrt_hsa.hsa_shut_down();
        return devrt_fail(DEVRT_ERROR_BACKEND, "HSA: cannot use AMD GPU %d: %s", index, why);
    }
    b->coarse.handle = pools.coarse;
    b->fine.handle = pools.fine;
    b->kernarg.handle = pools.kernarg;
    b->memory_bytes = pools.memory_bytes;
    b->group_segment_limit = pools.group_segment_limit;
    uint32_t wave = 64;
    devrt_hsa.hsa_agent_get_info(b->gpu, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wave);
    devrt_hsa.hsa_agent_iterate_isas(b->gpu, find_isa, b);
    uint64_t frequency = 1000000;
    devrt_hsa.hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency);
    b->ticks_per_ms = frequency / 1000 ? frequency / 1000 : 1;
    devrt_device_set_backend_state(device, b);
    devrt_device_set_wave_size(device, wave);

    pthread_mutex_init(&b->ranges_lock, NULL);
    pthread_mutex_init(&b->staging_lock, NULL);
    pthread_mutex_init(&b->queue_lock, NULL);
    pthread_mutex_init(&b->launches_lock, NULL);
    pthread_mutex_init(&b->probe_lock, NULL);
    hsa_status_t status = devrt_hsa_new_queue(b);
    if (status == HSA_STATUS_SUCCESS)
        status = devrt_hsa.hsa_signal_create(0, 0, NULL, &b->doorbell);
    if (status == HSA_STATUS_SUCCESS)
        status = devrt_hsa.hsa_signal_create(0, 0, NULL, &b->copied);
    if (status != HSA_STATUS_SUCCESS) {
        int failure = devrt_hsa_failed(DEVRT_ERROR_BACKEND, status, "creating the queue");
        release_backend(device);
        return failure;
    }
    struct devrt_rpc_doorbell *doorbell =
        devrt_hsa_alloc(device, sizeof *doorbell, DEVRT_MEMORY_HOST);
    devrt_device_set_doorbell(device, doorbell);
    b->staging = devrt_hsa_alloc(device, DEVRT_HSA_STAGING_BYTES, DEVRT_MEMORY_HOST);
    if (!doorbell || !b->staging) {
        release_backend(device);
        return devrt_fail(DEVRT_ERROR_BACKEND, "HSA: no host memory for the doorbell");
    }
    void *ring = NULL;
    status = devrt_hsa.hsa_amd_memory_pool_allocate(
        b->kernarg, (size_t)DEVRT_HSA_KERNARG_SLOTS * DEVRT_HSA_KERNARG_SLOT, 0, &ring);
    if (status == HSA_STATUS_SUCCESS) {
        b->kernarg_ring = ring;
        status = devrt_hsa.hsa_amd_agents_allow_access(1, &b->gpu, NULL, ring);
        if (status == HSA_STATUS_SUCCESS &&
            !devrt_hsa_own(b, ring, (size_t)DEVRT_HSA_KERNARG_SLOTS * DEVRT_HSA_KERNARG_SLOT))
            status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    if (status != HSA_STATUS_SUCCESS) {
        int failure = devrt_hsa_failed(DEVRT_ERROR_BACKEND, status, "the kernel argument memory");
        release_backend(device);
        return failure;
    }
    for (uint32_t i = 0; i < DEVRT_HSA_KERNARG_SLOTS; ++i)
        b->kernarg_free[i] = DEVRT_HSA_KERNARG_SLOTS - 1 - i;
    b->kernarg_free_count = DEVRT_HSA_KERNARG_SLOTS;
    if (!devrt_hsa_track_open(b)) {
        release_backend(device);
        return devrt_fail(DEVRT_ERROR_BACKEND, "HSA: more than %d GPUs open at once",
                          DEVRT_HSA_MAX_OPEN);
    }
    doorbell->signal = b->doorbell.handle;
    return DEVRT_SUCCESS;
}

static void hsa_close(devrt_device *device)
{
    devrt_hsa_track_close(devrt_device_backend_state(device));
    release_backend(device);
}

static uint64_t hsa_arm_doorbell(devrt_device *device)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    devrt_hsa.hsa_signal_store_screlease(b->doorbell, 0);
    return 0;
}

static void hsa_wait_doorbell(devrt_device *device, uint64_t armed, uint32_t timeout_ms)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    (void)armed;
    if (timeout_ms)
        devrt_hsa.hsa_signal_wait_scacquire(b->doorbell, HSA_SIGNAL_CONDITION_NE, 0,
                                            b->ticks_per_ms * timeout_ms, HSA_WAIT_STATE_BLOCKED);
}

static void hsa_ring_doorbell(devrt_device *device)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    devrt_hsa.hsa_signal_store_screlease(b->doorbell, 1);
}

static void hsa_describe(const devrt_device *device, struct devrt_device_info *info)
{
    const struct hsa_backend *b = devrt_device_backend_state(device);
    const char *id = strstr(b->isa, "--");
    snprintf(info->name, sizeof info->name, "%s", id ? id + 2 : b->isa);
    info->memory_bytes = b->memory_bytes;
}

/* The agent's PCI address (ROCr's domain and bus/device/function word), then sysfs's list. */
static int hsa_local_cpus(const devrt_device *device, char *list, size_t size)
{
    const struct hsa_backend *b = devrt_device_backend_state(device);
    uint32_t bdf = 0, domain = 0;
    if (devrt_hsa.hsa_agent_get_info(b->gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_BDFID, &bdf) !=
            HSA_STATUS_SUCCESS ||
        devrt_hsa.hsa_agent_get_info(b->gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DOMAIN,
                                     &domain) != HSA_STATUS_SUCCESS)
        return -1;
    return devrt_pci_local_cpus("/sys", domain, bdf >> 8 & 0xff, bdf >> 3 & 0x1f, bdf & 0x7, list,
                                size);
}

const struct devrt_backend_ops devrt_hsa_backend = {
    .open = hsa_open,
    .close = hsa_close,
    .alloc = devrt_hsa_alloc,
    .free = devrt_hsa_free,
    .read = devrt_hsa_read,
    .write = devrt_hsa_write,
    .load = devrt_hsa_load,
    .unload = devrt_hsa_unload,
    .check_launch = devrt_hsa_check_launch,
    .rpc_lanes = devrt_hsa_rpc_lanes,
    .queue_full = devrt_hsa_queue_full,
    .ended = devrt_hsa_ended,
    .submit = devrt_hsa_submit,
    .complete = devrt_hsa_complete,
    .release = devrt_hsa_release,
    .stop_runaways = devrt_hsa_stop_runaways,
    .arm_doorbell = hsa_arm_doorbell,
    .wait_doorbell = hsa_wait_doorbell,
    .ring_doorbell = hsa_ring_doorbell,
    .describe = hsa_describe,
    .local_cpus = hsa_local_cpus,
};
