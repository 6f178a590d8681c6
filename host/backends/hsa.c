/*
 * The HSA backend: AMD GPUs through hsa-runtime64. Code objects become executables, kernels
 * are dispatched as AQL packets, the state block and the ports' state words live in the GPU's
 * coarse-grained pool, and mailboxes, buffers and user memory in the system's fine-grained
 * pool. The doorbell is an HSA signal the device raises an interrupt on.
 *
 * The HSA runtime (libhsa-runtime64.so.1) is opened with dlopen when a device is opened, not
 * linked, as the CUDA backend opens the driver: one build runs on machines with and without
 * ROCm. Where the library or one of its functions is missing, opening a device fails with
 * DEVRT_ERROR_NO_DEVICE and a message naming the library or the functions, so the hardware
 * tests skip. The library stays loaded until the process ends: its own threads and atexit
 * handlers may still run after hsa_shut_down, and a device may be opened again.
 *
 * What a launch puts in the packet and the kernarg segment is computed by
 * amdgpu_dispatch.c from the code object's metadata, without a GPU, and tested there; this
 * file only allocates, enqueues, rings and waits (docs/runtime.md lists what only a GPU
 * tests).
 */
#include <inttypes.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdgpu_dispatch.h"
#include "amdgpu_metadata.h"
#include "hsa_memory.h"
#include "backend.h"
#include "codeobject.h"
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

/* The HSA functions the backend uses, opened from the library by name. */
#define DEVRT_HSA_FUNCTIONS(X)                                                                     \
    X(hsa_init)                                                                                    \
    X(hsa_shut_down)                                                                               \
    X(hsa_status_string)                                                                           \
    X(hsa_system_get_info)                                                                         \
    X(hsa_iterate_agents)                                                                          \
    X(hsa_agent_get_info)                                                                          \
    X(hsa_queue_create)                                                                            \
    X(hsa_queue_destroy)                                                                           \
    X(hsa_queue_inactivate)                                                                        \
    X(hsa_queue_add_write_index_relaxed)                                                           \
    X(hsa_queue_load_read_index_scacquire)                                                         \
    X(hsa_queue_load_write_index_relaxed)                                                          \
    X(hsa_signal_create)                                                                           \
    X(hsa_signal_destroy)                                                                          \
    X(hsa_signal_store_screlease)                                                                  \
    X(hsa_signal_load_scacquire)                                                                   \
    X(hsa_signal_wait_scacquire)                                                                   \
    X(hsa_amd_memory_async_copy)                                                                   \
    X(hsa_code_object_reader_create_from_memory)                                                   \
    X(hsa_code_object_reader_destroy)                                                              \
    X(hsa_executable_create_alt)                                                                   \
    X(hsa_executable_destroy)                                                                      \
    X(hsa_executable_load_agent_code_object)                                                       \
    X(hsa_executable_freeze)                                                                       \
    X(hsa_executable_get_symbol_by_name)                                                           \
    X(hsa_executable_symbol_get_info)                                                              \
    X(hsa_amd_agent_iterate_memory_pools)                                                          \
    X(hsa_amd_agent_memory_pool_get_info)                                                          \
    X(hsa_amd_memory_pool_get_info)                                                                \
    X(hsa_amd_memory_pool_allocate)                                                                \
    X(hsa_amd_memory_pool_free)                                                                    \
    X(hsa_amd_agents_allow_access)                                                                 \
    X(hsa_amd_memory_fill)                                                                         \
    X(hsa_agent_iterate_isas)                                                                      \
    X(hsa_isa_get_info_alt)                                                                        \
    X(hsa_amd_pointer_info)                                                                        \
    X(hsa_amd_register_system_event_handler)

/* Every call into the runtime goes through this table, filled once by open_library. */
static struct {
#define X(fn) __typeof__(fn) *fn;
    DEVRT_HSA_FUNCTIONS(X)
#undef X
} hsa;

static void *hsa_library; /* set only once every function of the table is resolved */
static char hsa_error[768];
static pthread_once_t hsa_once = PTHREAD_ONCE_INIT;

static void open_library(void)
{
    static const struct devrt_vendor_symbol symbols[] = {
#define X(fn) {#fn, &hsa.fn, false},
        DEVRT_HSA_FUNCTIONS(X)
#undef X
    };
    hsa_library = devrt_vendor_library_open(
        &hsa_library_files, symbols, sizeof symbols / sizeof *symbols, hsa_error, sizeof hsa_error);
}

/*
 * A queue of the GPU's. One takes every launch; a queue that fails, or is stopped to end a
 * runaway kernel, is replaced, and kept (retired) until the device closes, so that the
 * launches that were on it can tell why theirs never completes.
 */
struct hsa_queue_record {
    hsa_queue_t *queue;
    struct hsa_backend *backend;
    bool failed;  /* atomic: the runtime reported an error of the queue (queue_error) */
    bool stopped; /* atomic: devrt stopped it (hsa_stop_runaways) */
    hsa_status_t status;
    struct hsa_queue_record *older;
};

/* A launch on the queue, from hsa_enqueue to hsa_release. */
struct hsa_launch {
    struct hsa_launch *next, *prev; /* among the backend's, under launches_lock */
    hsa_signal_t done;
    struct hsa_queue_record *queue;
    void *kernarg;
    int kernarg_slot; /* of the ring, or -1: an allocation of its own */
    const char *kernel;
};

/*
 * Kernel arguments: a ring of slots in the kernel argument pool, granted to the GPU once at
 * open, as ROCr and clr keep theirs; a launch whose arguments do not fit a slot, or that
 * finds none free, allocates its own.
 */
#define DEVRT_HSA_KERNARG_SLOTS 256u
#define DEVRT_HSA_MAX_CPUS 16
#define DEVRT_HSA_KERNARG_SLOT 1024u

struct hsa_backend {
    hsa_agent_t gpu;
    hsa_agent_t cpu; /* the CPU nearest the GPU: its pools hold the host memory */
    hsa_agent_t cpus[DEVRT_HSA_MAX_CPUS]; /* every CPU agent, one per NUMA node */
    size_t cpu_count;
    hsa_amd_memory_pool_t coarse; /* GPU memory */
    hsa_amd_memory_pool_t fine;   /* host memory the GPU can reach */
    hsa_amd_memory_pool_t kernarg;
    hsa_signal_t doorbell;
    uint64_t ticks_per_ms;
    char isa[128];                /* amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack- */
    uint32_t group_segment_limit; /* LDS bytes per workgroup; 0 if the runtime did not say */
    uint64_t memory_bytes;        /* the coarse-grained pool's, the GPU's own memory */
    int wanted, seen;
    /*
     * The queue launches go to, swapped under queue_lock, which hsa_enqueue holds while it
     * writes a packet into it.
     */
    pthread_mutex_t queue_lock;
    struct hsa_queue_record *queue;
    /* The launches enqueued and not yet released, for the fault handler. */
    pthread_mutex_t launches_lock;
    struct hsa_launch *launches;
    char *kernarg_ring;
    uint32_t kernarg_free[DEVRT_HSA_KERNARG_SLOTS]; /* under launches_lock */
    uint32_t kernarg_free_count;
    /*
     * Copies to and from the GPU's memory pass through this fine-grained host buffer,
     * which the GPU may reach: the copy engine then needs no host memory of the caller's
     * locked. One copy at a time, under staging_lock, signalled by `copied`.
     */
    pthread_mutex_t staging_lock;
    void *staging;
    hsa_signal_t copied;
    /*
     * A memory fault on this GPU while a launch of devrt's ran, set by on_system_event
     * under open_lock: the device is lost (faulted is atomic; every wait stops on it).
     */
    bool faulted;
    uint64_t fault_address;
    uint32_t fault_reasons;
};

/*
 * The GPUs devrt has open, for the runtime's system event handler, which gets no device:
 * the runtime takes one handler per process and none can be removed, so one handler
 * serves every device and finds the faulting one here.
 */
#define DEVRT_HSA_MAX_OPEN 64
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hsa_backend *open_backends[DEVRT_HSA_MAX_OPEN];
static size_t open_count;
static bool handler_registered;

struct hsa_module {
    hsa_executable_t executable;
    hsa_code_object_reader_t reader; /* reads the module's image, which outlives it (module.c) */
    /* The code object's metadata, read once at the load: every launch packs from it. */
    struct devrt_amdgpu_metadata *metadata;
};

/* Everything of M, as far as hsa_load made it. */
static void hsa_unload_backend(struct hsa_module *m)
{
    if (m->executable.handle)
        hsa.hsa_executable_destroy(m->executable);
    if (m->reader.handle)
        hsa.hsa_code_object_reader_destroy(m->reader);
    devrt_amdgpu_metadata_free(m->metadata);
    free(m);
}

static int hsa_failed(int code, hsa_status_t status, const char *what)
{
    const char *text = NULL;
    hsa.hsa_status_string(status, &text);
    return devrt_fail(code, "HSA: %s: %s", what, text ? text : "unknown error");
}

static hsa_status_t find_agents(hsa_agent_t agent, void *data)
{
    struct hsa_backend *b = data;
    hsa_device_type_t type;
    if (hsa.hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) != HSA_STATUS_SUCCESS)
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
    if (hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &p.segment) !=
            HSA_STATUS_SUCCESS ||
        hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &p.size) !=
            HSA_STATUS_SUCCESS ||
        hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                                         &p.alloc_allowed) != HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    if (p.segment == HSA_AMD_SEGMENT_GLOBAL &&
        hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &p.flags) !=
            HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    list->pool[list->count++] = p;
    return HSA_STATUS_SUCCESS;
}

/* The first global pool of a CPU agent: its system memory. */
static hsa_status_t find_system_pool(hsa_amd_memory_pool_t pool, void *data)
{
    hsa_amd_segment_t segment;
    if (hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment) !=
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
        hsa.hsa_amd_agent_iterate_memory_pools(b->cpus[i], find_system_pool, &pool);
        if (!pool.handle ||
            hsa.hsa_amd_agent_memory_pool_get_info(b->gpu, pool,
                                                   HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS,
                                                   &hops) != HSA_STATUS_SUCCESS ||
            hops == 0 || hops > 4 ||
            hsa.hsa_amd_agent_memory_pool_get_info(b->gpu, pool,
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
    if (hsa.hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &length) != HSA_STATUS_SUCCESS ||
        length >= sizeof b->isa)
        return HSA_STATUS_SUCCESS;
    char name[sizeof b->isa] = "";
    if (hsa.hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, name) != HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    name[length] = '\0';
    memcpy(b->isa, name, sizeof b->isa);
    return HSA_STATUS_INFO_BREAK;
}

static void queue_error(hsa_status_t status, hsa_queue_t *queue, void *data)
{
    (void)queue;
    struct hsa_queue_record *q = data;
    q->status = status;
    /* Pairs with the acquire loads of the waits on the queue's launches (launch_ended). */
    __atomic_store_n(&q->failed, true, __ATOMIC_RELEASE);
}

/* Whether B has a launch enqueued that has not ended: a fault on the GPU may be its. */
static bool running_on(struct hsa_backend *b)
{
    pthread_mutex_lock(&b->launches_lock);
    bool running = false;
    for (const struct hsa_launch *l = b->launches; l && !running; l = l->next)
        running = hsa.hsa_signal_load_scacquire(l->done) > 0;
    pthread_mutex_unlock(&b->launches_lock);
    return running;
}

/*
 * A memory fault on one of our GPUs while a launch of devrt's runs there is devrt's: the
 * device is lost, and returning success keeps ROCr from aborting the process. A fault on a
 * GPU where no launch of devrt's runs is another user's of the GPU: ROCr's default stands
 * (it ends the process). ROCr reports one fault only (VMFaultHandler's signal handler is
 * not kept after it): the first is final.
 */
static hsa_status_t on_system_event(const hsa_amd_event_t *event, void *data)
{
    (void)data;
    pthread_mutex_lock(&open_lock);
    uint64_t gpus[DEVRT_HSA_MAX_OPEN];
    for (size_t i = 0; i < DEVRT_HSA_MAX_OPEN; ++i)
        gpus[i] = open_backends[i] ? open_backends[i]->gpu.handle : 0;
    int owner = devrt_hsa_fault_owner(event, gpus, DEVRT_HSA_MAX_OPEN);
    if (owner >= 0 && !running_on(open_backends[owner]))
        owner = -1;
    if (owner >= 0) {
        struct hsa_backend *b = open_backends[owner];
        b->fault_address = event->memory_fault.virtual_address;
        b->fault_reasons = event->memory_fault.fault_reason_mask;
        /* Pairs with the acquire loads of every wait, which then stop waiting. */
        __atomic_store_n(&b->faulted, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&open_lock);
    return owner >= 0 ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR;
}

static bool faulted(struct hsa_backend *b)
{
    return __atomic_load_n(&b->faulted, __ATOMIC_ACQUIRE);
}

/* Adds B to the open GPUs, and registers the handler with the first; false when full. */
static bool track_open(struct hsa_backend *b)
{
    pthread_mutex_lock(&open_lock);
    size_t slot = 0;
    while (slot < DEVRT_HSA_MAX_OPEN && open_backends[slot])
        ++slot;
    if (slot < DEVRT_HSA_MAX_OPEN) {
        open_backends[slot] = b;
        open_count++;
        /*
         * HSA_STATUS_ERROR says a handler is registered already: ours, while the runtime
         * stayed up since the last device closed, or another user's, which then gets the
         * faults (docs/runtime.md).
         */
        if (!handler_registered) {
            hsa_status_t r = hsa.hsa_amd_register_system_event_handler(on_system_event, NULL);
            handler_registered = r == HSA_STATUS_SUCCESS || r == HSA_STATUS_ERROR;
        }
    }
    pthread_mutex_unlock(&open_lock);
    return slot < DEVRT_HSA_MAX_OPEN;
}

static void track_close(struct hsa_backend *b)
{
    pthread_mutex_lock(&open_lock);
    for (size_t i = 0; i < DEVRT_HSA_MAX_OPEN; ++i)
        if (open_backends[i] == b) {
            open_backends[i] = NULL;
            open_count--;
        }
    /* hsa_shut_down may take the runtime, and our registration with it, down. */
    if (open_count == 0)
        handler_registered = false;
    pthread_mutex_unlock(&open_lock);
}

static struct hsa_backend *backend_of(const devrt_module *module)
{
    return devrt_device_backend_state(devrt_module_device(module));
}

static void *hsa_alloc_memory(devrt_device *device, size_t size, enum devrt_memory memory)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    void *ptr = NULL;
    bool host = memory == DEVRT_MEMORY_HOST || memory == DEVRT_MEMORY_HOST_RAW;
    hsa_amd_memory_pool_t pool = host ? b->fine : b->coarse;
    /* Whole words, so that the zeroing fill of 4-byte words ends inside the allocation
       (ROCr's FillMemory refuses a fill past its end). */
    if (size > SIZE_MAX - 3)
        return NULL;
    size = (size + 3) & ~(size_t)3;
    if (hsa.hsa_amd_memory_pool_allocate(pool, size, 0, &ptr) != HSA_STATUS_SUCCESS)
        return NULL;
    if (host) {
        /* Memory the GPU may not reach is no use: it would fault the first kernel. */
        if (hsa.hsa_amd_agents_allow_access(1, &b->gpu, NULL, ptr) != HSA_STATUS_SUCCESS) {
            hsa.hsa_amd_memory_pool_free(ptr);
            return NULL;
        }
        if (memory == DEVRT_MEMORY_HOST)
            memset(ptr, 0, size);
    } else if (memory == DEVRT_MEMORY_DEVICE) {
        if (hsa.hsa_amd_memory_fill(ptr, 0, size / 4) != HSA_STATUS_SUCCESS) {
            hsa.hsa_amd_memory_pool_free(ptr);
            return NULL;
        }
    }
    return ptr;
}

static void hsa_free_memory(devrt_device *device, void *ptr, enum devrt_memory memory)
{
    (void)device;
    (void)memory;
    if (ptr)
        hsa.hsa_amd_memory_pool_free(ptr);
}

#define DEVRT_HSA_STAGING_BYTES (64u << 10)

/*
 * SIZE bytes between the GPU's memory at DEVICE_SIDE and the host's at HOST_SIDE, a
 * staging buffer at a time, each an asynchronous copy between the two agents' pools
 * waited for. Returns 0 or -1.
 */
static int copy_through_staging(struct hsa_backend *b, void *host_side, void *device_side,
                                size_t size, bool read)
{
    int result = 0;
    pthread_mutex_lock(&b->staging_lock);
    for (size_t done = 0, n = 0; done < size && result == 0; done += n) {
        n = size - done < DEVRT_HSA_STAGING_BYTES ? size - done : DEVRT_HSA_STAGING_BYTES;
        char *device_at = (char *)device_side + done, *host_at = (char *)host_side + done;
        if (!read)
            memcpy(b->staging, host_at, n);
        hsa.hsa_signal_store_screlease(b->copied, 1);
        hsa_status_t status = read ? hsa.hsa_amd_memory_async_copy(b->staging, b->cpu, device_at,
                                                                   b->gpu, n, 0, NULL, b->copied)
                                   : hsa.hsa_amd_memory_async_copy(device_at, b->gpu, b->staging,
                                                                   b->cpu, n, 0, NULL, b->copied);
        if (status != HSA_STATUS_SUCCESS) {
            result = -1;
            break;
        }
        /*
         * The acquire wait makes the engine's writes to the staging buffer visible. After a
         * fault the driver evicted the copy engine's queues too, and the copy never ends.
         */
        while (hsa.hsa_signal_wait_scacquire(b->copied, HSA_SIGNAL_CONDITION_LT, 1,
                                             b->ticks_per_ms * 100, HSA_WAIT_STATE_BLOCKED) >= 1)
            if (faulted(b)) {
                result = -1;
                break;
            }
        if (read && result == 0)
            memcpy(host_at, b->staging, n);
    }
    pthread_mutex_unlock(&b->staging_lock);
    return result;
}

/*
 * SIZE bytes at the device address DEVICE_SIDE (src when reading, dst when writing), which
 * may be one the device made up (a string's): the runtime must place the whole range in
 * one of its allocations, or the copy fails instead of faulting. Host memory is copied by
 * the host itself, the GPU's by the copy engine through the staging buffer; no
 * hsa_memory_copy, which copies any address it cannot place as host memory.
 */
static int hsa_copy(struct hsa_backend *b, void *dst, const void *src, size_t size, bool read)
{
    if (size == 0)
        return 0;
    const void *device_side = read ? src : dst;
    hsa_amd_pointer_info_t info = {.size = sizeof info};
    if (hsa.hsa_amd_pointer_info(device_side, &info, NULL, NULL, NULL) != HSA_STATUS_SUCCESS)
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

static int hsa_read(devrt_device *device, void *dst, const void *src, size_t size)
{
    return hsa_copy(devrt_device_backend_state(device), dst, src, size, true);
}

static int hsa_write(devrt_device *device, void *dst, const void *src, size_t size)
{
    return hsa_copy(devrt_device_backend_state(device), dst, src, size, false);
}

/* A new queue for B's launches, the current one from now on. Under queue_lock, or alone. */
static hsa_status_t new_queue(struct hsa_backend *b)
{
    struct hsa_queue_record *q = calloc(1, sizeof *q);
    if (!q)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    q->backend = b;
    hsa_status_t status = hsa.hsa_queue_create(b->gpu, 1024, HSA_QUEUE_TYPE_MULTI, queue_error, q,
                                               UINT32_MAX, UINT32_MAX, &q->queue);
    if (status != HSA_STATUS_SUCCESS) {
        free(q);
        return status;
    }
    q->older = b->queue;
    /* Pairs with hsa_enqueue's acquire load, made before it takes queue_lock. */
    __atomic_store_n(&b->queue, q, __ATOMIC_RELEASE);
    return HSA_STATUS_SUCCESS;
}

/*
 * Q failed or must stop: it is inactivated (what runs on it ends, and it takes no more
 * packets) and a new queue replaces it, unless one did already. Its launches fail
 * (launch_ended). Under queue_lock.
 */
static hsa_status_t replace_queue(struct hsa_backend *b, struct hsa_queue_record *q)
{
    if (b->queue != q)
        return HSA_STATUS_SUCCESS;
    hsa.hsa_queue_inactivate(q->queue);
    return new_queue(b);
}

/* Everything hsa_open made, as far as it got, and the runtime's reference. */
static void release_backend(devrt_device *device)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    /* Destroying a queue ends what still runs on it: first, before its memory goes. */
    while (b->queue) {
        struct hsa_queue_record *q = b->queue;
        b->queue = q->older;
        hsa.hsa_queue_destroy(q->queue);
        free(q);
    }
    if (b->kernarg_ring)
        hsa.hsa_amd_memory_pool_free(b->kernarg_ring);
    hsa_free_memory(device, devrt_device_doorbell(device), DEVRT_MEMORY_HOST);
    devrt_device_set_doorbell(device, NULL);
    hsa_free_memory(device, b->staging, DEVRT_MEMORY_HOST);
    if (b->copied.handle)
        hsa.hsa_signal_destroy(b->copied);
    if (b->doorbell.handle)
        hsa.hsa_signal_destroy(b->doorbell);
    pthread_mutex_destroy(&b->staging_lock);
    pthread_mutex_destroy(&b->queue_lock);
    pthread_mutex_destroy(&b->launches_lock);
    free(b);
    devrt_device_set_backend_state(device, NULL);
    hsa.hsa_shut_down();
}

static int hsa_open(devrt_device *device, int index)
{
    pthread_once(&hsa_once, open_library);
    if (!hsa_library)
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "HSA: %s", hsa_error);
    hsa_status_t started = hsa.hsa_init();
    if (started != HSA_STATUS_SUCCESS)
        return hsa_failed(DEVRT_ERROR_NO_DEVICE, started,
                          "the runtime did not start (no AMD GPU or amdgpu driver?)");
    struct hsa_backend *b = calloc(1, sizeof *b);
    if (!b) {
        hsa.hsa_shut_down();
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for the HSA backend");
    }
    b->wanted = index;
    hsa.hsa_iterate_agents(find_agents, b);
    if (b->gpu.handle && b->cpu_count)
        b->cpu = nearest_cpu(b);
    if (!b->gpu.handle || !b->cpu.handle) {
        int seen = b->seen;
        free(b);
        hsa.hsa_shut_down();
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "HSA: no AMD GPU %d (found %d)", index, seen);
    }
    struct pool_list gpu_pools = {0}, cpu_pools = {0};
    hsa.hsa_amd_agent_iterate_memory_pools(b->gpu, find_pools, &gpu_pools);
    hsa.hsa_amd_agent_iterate_memory_pools(b->cpu, find_pools, &cpu_pools);
    struct devrt_hsa_pools pools;
    char why[256];
    if (devrt_hsa_choose_pools(gpu_pools.pool, gpu_pools.count, cpu_pools.pool, cpu_pools.count,
                               &pools, why, sizeof why) != 0) {
        free(b);
        hsa.hsa_shut_down();
        return devrt_fail(DEVRT_ERROR_BACKEND, "HSA: cannot use AMD GPU %d: %s", index, why);
    }
    b->coarse.handle = pools.coarse;
    b->fine.handle = pools.fine;
    b->kernarg.handle = pools.kernarg;
    b->memory_bytes = pools.memory_bytes;
    b->group_segment_limit = pools.group_segment_limit;
    uint32_t wave = 64;
    hsa.hsa_agent_get_info(b->gpu, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wave);
    hsa.hsa_agent_iterate_isas(b->gpu, find_isa, b);
    uint64_t frequency = 1000000;
    hsa.hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency);
    b->ticks_per_ms = frequency / 1000 ? frequency / 1000 : 1;
    devrt_device_set_backend_state(device, b);
    devrt_device_set_wave_size(device, wave);

    pthread_mutex_init(&b->staging_lock, NULL);
    pthread_mutex_init(&b->queue_lock, NULL);
    pthread_mutex_init(&b->launches_lock, NULL);
    hsa_status_t status = new_queue(b);
    if (status == HSA_STATUS_SUCCESS)
        status = hsa.hsa_signal_create(0, 0, NULL, &b->doorbell);
    if (status == HSA_STATUS_SUCCESS)
        status = hsa.hsa_signal_create(0, 0, NULL, &b->copied);
    if (status != HSA_STATUS_SUCCESS) {
        int failure = hsa_failed(DEVRT_ERROR_BACKEND, status, "creating the queue");
        release_backend(device);
        return failure;
    }
    struct devrt_rpc_doorbell *doorbell =
        hsa_alloc_memory(device, sizeof *doorbell, DEVRT_MEMORY_HOST);
    devrt_device_set_doorbell(device, doorbell);
    b->staging = hsa_alloc_memory(device, DEVRT_HSA_STAGING_BYTES, DEVRT_MEMORY_HOST);
    if (!doorbell || !b->staging) {
        release_backend(device);
        return devrt_fail(DEVRT_ERROR_BACKEND, "HSA: no host memory for the doorbell");
    }
    void *ring = NULL;
    status = hsa.hsa_amd_memory_pool_allocate(
        b->kernarg, (size_t)DEVRT_HSA_KERNARG_SLOTS * DEVRT_HSA_KERNARG_SLOT, 0, &ring);
    if (status == HSA_STATUS_SUCCESS) {
        b->kernarg_ring = ring;
        status = hsa.hsa_amd_agents_allow_access(1, &b->gpu, NULL, ring);
    }
    if (status != HSA_STATUS_SUCCESS) {
        int failure = hsa_failed(DEVRT_ERROR_BACKEND, status, "the kernel argument memory");
        release_backend(device);
        return failure;
    }
    for (uint32_t i = 0; i < DEVRT_HSA_KERNARG_SLOTS; ++i)
        b->kernarg_free[i] = DEVRT_HSA_KERNARG_SLOTS - 1 - i;
    b->kernarg_free_count = DEVRT_HSA_KERNARG_SLOTS;
    if (!track_open(b)) {
        release_backend(device);
        return devrt_fail(DEVRT_ERROR_BACKEND, "HSA: more than %d GPUs open at once",
                          DEVRT_HSA_MAX_OPEN);
    }
    doorbell->signal = b->doorbell.handle;
    return DEVRT_SUCCESS;
}

static void hsa_close(devrt_device *device)
{
    track_close(devrt_device_backend_state(device));
    release_backend(device);
}

static int hsa_load(devrt_module *module, struct devrt_state ***state_variable)
{
    struct hsa_backend *b = backend_of(module);
    const char *path = devrt_module_path(module);
    const void *image = devrt_module_image(module);
    size_t image_size = devrt_module_image_size(module);
    struct hsa_module *m = calloc(1, sizeof *m);
    if (!m)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a module");
    /* What each kernel takes is then checked at every launch, and a file that is no code
       object is refused here with the reason, whatever the loader would make of it. */
    int checked = devrt_amdgpu_metadata_read(image, image_size, path, &m->metadata);
    /* Refused here with both names, not by the loader with a bare error code. */
    if (checked == DEVRT_SUCCESS && b->isa[0])
        checked = devrt_amdgpu_check_target(m->metadata, path, b->isa);
    if (checked != DEVRT_SUCCESS) {
        hsa_unload_backend(m);
        return checked;
    }
    const char *step = "reading the code object";
    hsa_status_t status =
        hsa.hsa_code_object_reader_create_from_memory(image, image_size, &m->reader);
    if (status == HSA_STATUS_SUCCESS) {
        step = "creating the executable";
        status = hsa.hsa_executable_create_alt(
            HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &m->executable);
    }
    if (status == HSA_STATUS_SUCCESS) {
        step = "loading the code object for the GPU";
        status =
            hsa.hsa_executable_load_agent_code_object(m->executable, b->gpu, m->reader, NULL, NULL);
    }
    if (status == HSA_STATUS_SUCCESS) {
        step = "freezing the executable";
        status = hsa.hsa_executable_freeze(m->executable, NULL);
    }
    hsa_executable_symbol_t symbol;
    uint64_t address = 0;
    if (status == HSA_STATUS_SUCCESS) {
        step = "finding " DEVRT_STATE_SYMBOL " (does it link devrt-amdgcn.bc?)";
        status = hsa.hsa_executable_get_symbol_by_name(m->executable, DEVRT_STATE_SYMBOL, &b->gpu,
                                                       &symbol);
    }
    if (status == HSA_STATUS_SUCCESS)
        status = hsa.hsa_executable_symbol_get_info(
            symbol, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &address);
    if (status != HSA_STATUS_SUCCESS) {
        const char *text = NULL;
        hsa.hsa_status_string(status, &text);
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: the HSA runtime refused it, %s: %s", path, step,
                   text ? text : "unknown status");
        hsa_unload_backend(m);
        return DEVRT_ERROR_IMAGE;
    }
    *state_variable = (struct devrt_state **)(uintptr_t)address;
    devrt_module_set_backend_state(module, m);
    return DEVRT_SUCCESS;
}

static void hsa_unload(devrt_module *module)
{
    hsa_unload_backend(devrt_module_backend_state(module));
}

/*
 * A memory fault lost the device. The kernel driver evicted every queue the process has on
 * this GPU, and queues made later start evicted (amdkfd's memory-violation path): the
 * device is lost, as HIP treats it, until it is closed and opened again. The first to see
 * it marks it lost with the fault; every launch then reports that.
 */
static int fault_lost(devrt_module *module, struct hsa_backend *b)
{
    char text[512], reasons[160];
    pthread_mutex_lock(&open_lock);
    devrt_hsa_fault_reasons(b->fault_reasons, reasons, sizeof reasons);
    snprintf(text, sizeof text, "GPU memory fault at address 0x%" PRIx64 " (%s)", b->fault_address,
             reasons);
    pthread_mutex_unlock(&open_lock);
    devrt_device *device = devrt_module_device(module);
    if (devrt_device_check_lost(device) != DEVRT_SUCCESS)
        return DEVRT_ERROR_DEVICE_LOST;
    FILE *report = devrt_module_report_file(module);
    if (report) {
        fprintf(report, "%s\n", text);
        fflush(report);
    }
    return devrt_device_mark_lost(device, text);
}

/* The kernel argument memory of a launch of SIZE bytes: a slot of the ring, or its own. */
static int take_kernarg(struct hsa_backend *b, struct hsa_launch *l, size_t size)
{
    l->kernarg_slot = -1;
    pthread_mutex_lock(&b->launches_lock);
    if (size <= DEVRT_HSA_KERNARG_SLOT && b->kernarg_free_count) {
        l->kernarg_slot = (int)b->kernarg_free[--b->kernarg_free_count];
        l->kernarg = b->kernarg_ring + (size_t)l->kernarg_slot * DEVRT_HSA_KERNARG_SLOT;
    }
    pthread_mutex_unlock(&b->launches_lock);
    if (l->kernarg_slot >= 0)
        return DEVRT_SUCCESS;
    if (hsa.hsa_amd_memory_pool_allocate(b->kernarg, size ? size : 16, 0, &l->kernarg) !=
        HSA_STATUS_SUCCESS)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no kernel argument memory");
    if (hsa.hsa_amd_agents_allow_access(1, &b->gpu, NULL, l->kernarg) != HSA_STATUS_SUCCESS) {
        hsa.hsa_amd_memory_pool_free(l->kernarg);
        l->kernarg = NULL;
        return devrt_fail(DEVRT_ERROR_LAUNCH, "HSA: the GPU may not read the kernel arguments");
    }
    return DEVRT_SUCCESS;
}

/* Everything enqueue took for L, and L. */
static void free_launch(struct hsa_backend *b, struct hsa_launch *l)
{
    pthread_mutex_lock(&b->launches_lock);
    if (l->prev)
        l->prev->next = l->next;
    else if (b->launches == l)
        b->launches = l->next;
    if (l->next)
        l->next->prev = l->prev;
    if (l->kernarg_slot >= 0)
        b->kernarg_free[b->kernarg_free_count++] = (uint32_t)l->kernarg_slot;
    pthread_mutex_unlock(&b->launches_lock);
    if (l->kernarg_slot < 0 && l->kernarg)
        hsa.hsa_amd_memory_pool_free(l->kernarg);
    if (l->done.handle)
        hsa.hsa_signal_destroy(l->done);
    free(l);
}

/*
 * Queue the launch: an AQL packet with a completion signal of its own. A launch that needs
 * a record of its own points the state at it with a copy, after the module's last launch
 * has ended: HSA offers no write in queue order that the host can ask for without a kernel
 * (docs/runtime.md, "Launches").
 */
/* Whether L ran to its end, or never will: its queue failed or stopped, or the GPU faulted. */
static bool launch_ended(struct hsa_backend *b, const struct hsa_launch *l)
{
    return hsa.hsa_signal_load_scacquire(l->done) < 1 ||
           __atomic_load_n(&l->queue->failed, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&l->queue->stopped, __ATOMIC_ACQUIRE) || faulted(b);
}

/* Whether QUEUE has room for one more packet; its writers hold queue_lock. */
static bool queue_has_room(hsa_queue_t *queue)
{
    return hsa.hsa_queue_load_write_index_relaxed(queue) -
               hsa.hsa_queue_load_read_index_scacquire(queue) <
           queue->size;
}

/* A full queue drains, unless it failed: then the launch fails with it (hsa_complete). Only
   one launch is queued at a time (launch.c's lock): the room stays till the packet. */
static bool hsa_queue_full(devrt_device *device)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    const struct hsa_queue_record *current = __atomic_load_n(&b->queue, __ATOMIC_ACQUIRE);
    return !queue_has_room(current->queue) &&
           !__atomic_load_n(&current->failed, __ATOMIC_ACQUIRE) && !faulted(b);
}

static bool hsa_ended(const struct devrt_launch_entry *entry)
{
    const struct hsa_launch *l = entry->backend[0];
    return !l || launch_ended(backend_of(entry->module), l);
}

static uint32_t hsa_rpc_lanes(devrt_module *module)
{
    const struct hsa_module *m = devrt_module_backend_state(module);
    return devrt_amdgpu_rpc_lanes(m->metadata, devrt_device_wave_size(devrt_module_device(module)));
}

/* A store through the copy engine, made at once: launch.c has waited for the launch before
   to end (state_in_stream_order is false). The queue's barrier bits run the launch after
   that one and any kernel past its timeout; a raise of a runaway may land in the new record. */
static int hsa_point_state(struct devrt_launch_entry *entry)
{
    devrt_module *module = entry->module;
    struct hsa_backend *b = backend_of(module);
    if (hsa_copy(b, &devrt_module_state(module)->exception, &entry->slot, sizeof entry->slot,
                 false) == 0)
        return DEVRT_SUCCESS;
    if (faulted(b))
        return fault_lost(module, b);
    return devrt_fail(DEVRT_ERROR_BACKEND, "HSA: cannot point the state at a record");
}

/* The GPU as the code object's checks see it; the queue's address is submit's. */
static struct devrt_amdgpu_agent agent_of(const struct hsa_backend *b)
{
    return (struct devrt_amdgpu_agent){
        .isa = b->isa[0] ? b->isa : NULL,
        .group_segment_limit = b->group_segment_limit,
    };
}

/* Every refusal of devrt_amdgpu_launch_check, before anything is queued. */
static int hsa_check_launch(devrt_module *module, const char *kernel,
                            const struct devrt_launch_config *config, const struct devrt_arg *args,
                            size_t arg_count)
{
    const struct hsa_module *m = devrt_module_backend_state(module);
    struct devrt_amdgpu_agent agent = agent_of(backend_of(module));
    struct devrt_amdgpu_launch checked;
    return devrt_amdgpu_launch_check(m->metadata, devrt_module_path(module), &agent, kernel, config,
                                     args, arg_count, &checked);
}

static int hsa_submit(struct devrt_launch_entry *entry, const struct devrt_arg *args,
                      size_t arg_count)
{
    (void)arg_count; /* hsa_check_launch has matched ARGS to the kernel's parameters */
    devrt_module *module = entry->module;
    struct hsa_backend *b = backend_of(module);
    struct hsa_module *m = devrt_module_backend_state(module);
    /* The queue's address is only for device-side enqueue, which devrt does not use: the
       packet may go to a queue that replaced this one meanwhile. */
    const struct hsa_queue_record *current = __atomic_load_n(&b->queue, __ATOMIC_ACQUIRE);
    struct devrt_amdgpu_agent agent = agent_of(b);
    agent.queue_address = (uint64_t)(uintptr_t)current->queue;
    struct devrt_amdgpu_launch launch;
    struct devrt_amdgpu_dispatch dispatch;
    int status = devrt_amdgpu_launch_again(m->metadata, devrt_module_path(module), &agent,
                                           entry->kernel, &entry->config, &launch);
    if (status == DEVRT_SUCCESS)
        status = devrt_amdgpu_dispatch_pack(&launch, args, &dispatch);
    if (status != DEVRT_SUCCESS)
        return status;
    hsa_executable_symbol_t symbol;
    uint64_t object = 0;
    if (hsa.hsa_executable_get_symbol_by_name(m->executable, dispatch.kernel->symbol, &b->gpu,
                                              &symbol) != HSA_STATUS_SUCCESS ||
        hsa.hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                           &object) != HSA_STATUS_SUCCESS) {
        devrt_amdgpu_dispatch_free(&dispatch);
        return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s: the loader has no kernel %s",
                          devrt_module_path(module), dispatch.kernel->symbol);
    }
    struct hsa_launch *l = calloc(1, sizeof *l);
    if (!l) {
        devrt_amdgpu_dispatch_free(&dispatch);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a launch");
    }
    l->kernel = entry->kernel;
    status = take_kernarg(b, l, dispatch.kernarg_size);
    if (status == DEVRT_SUCCESS &&
        hsa.hsa_signal_create(1, 0, NULL, &l->done) != HSA_STATUS_SUCCESS)
        status = devrt_fail(DEVRT_ERROR_BACKEND, "HSA: cannot create a completion signal");
    if (status != DEVRT_SUCCESS) {
        free_launch(b, l);
        devrt_amdgpu_dispatch_free(&dispatch);
        return status;
    }
    memcpy(l->kernarg, dispatch.kernarg, dispatch.kernarg_size);
    pthread_mutex_lock(&b->launches_lock);
    l->next = b->launches;
    if (b->launches)
        b->launches->prev = l;
    b->launches = l;
    pthread_mutex_unlock(&b->launches_lock);

    pthread_mutex_lock(&b->queue_lock);
    l->queue = b->queue;
    hsa_queue_t *queue = b->queue->queue;
    uint64_t index = hsa.hsa_queue_add_write_index_relaxed(queue, 1);
    hsa_kernel_dispatch_packet_t *packet =
        (hsa_kernel_dispatch_packet_t *)queue->base_address + (index & (queue->size - 1));
    memset((char *)packet + 4, 0, sizeof *packet - 4);
    packet->workgroup_size_x = dispatch.workgroup_size[0];
    packet->workgroup_size_y = dispatch.workgroup_size[1];
    packet->workgroup_size_z = dispatch.workgroup_size[2];
    packet->grid_size_x = dispatch.grid_size[0];
    packet->grid_size_y = dispatch.grid_size[1];
    packet->grid_size_z = dispatch.grid_size[2];
    packet->private_segment_size = dispatch.private_segment_size;
    packet->group_segment_size = dispatch.group_segment_size;
    packet->kernel_object = object;
    packet->kernarg_address = l->kernarg;
    packet->completion_signal = l->done;
    /* The barrier bit: a module's launches, all on this one queue, run one at a time. */
    uint16_t header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE |
                      1u << HSA_PACKET_HEADER_BARRIER |
                      HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE |
                      HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
    uint16_t setup = (uint16_t)(dispatch.dimensions << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS);
    devrt_amdgpu_dispatch_free(&dispatch);
    /* Pairs with the packet processor's acquire of the header: the packet body is written. */
    __atomic_store_n((uint32_t *)packet, header | (uint32_t)setup << 16, __ATOMIC_RELEASE);
    hsa.hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)index);
    pthread_mutex_unlock(&b->queue_lock);
    entry->backend[0] = l;
    return DEVRT_SUCCESS;
}

/* L failed with its queue: the queue is replaced, and the launch reports why. */
static int queue_failed(struct hsa_backend *b, struct hsa_launch *l)
{
    struct hsa_queue_record *q = l->queue;
    bool stopped = __atomic_load_n(&q->stopped, __ATOMIC_ACQUIRE);
    const char *text = NULL;
    if (!stopped)
        hsa.hsa_status_string(q->status, &text);
    pthread_mutex_lock(&b->queue_lock);
    hsa_status_t replaced = replace_queue(b, q);
    pthread_mutex_unlock(&b->queue_lock);
    if (replaced != HSA_STATUS_SUCCESS)
        return hsa_failed(DEVRT_ERROR_LAUNCH, replaced,
                          "the queue failed, and a new one was refused");
    if (stopped)
        return devrt_fail(DEVRT_ERROR_LAUNCH,
                          "kernel %s: stopped with its queue, which devrt ended to stop a kernel "
                          "that ran past its timeout before its module was unloaded",
                          l->kernel);
    return devrt_fail(DEVRT_ERROR_LAUNCH,
                      "kernel %s: the HSA queue failed while it ran or waited "
                      "(%s)",
                      l->kernel, text ? text : "unknown status");
}

static int hsa_complete(struct devrt_launch_entry *entry, uint64_t deadline)
{
    struct hsa_backend *b = backend_of(entry->module);
    struct hsa_launch *l = entry->backend[0];
    while (hsa.hsa_signal_wait_scacquire(l->done, HSA_SIGNAL_CONDITION_LT, 1, b->ticks_per_ms * 100,
                                         HSA_WAIT_STATE_BLOCKED) >= 1) {
        if (faulted(b))
            return fault_lost(entry->module, b);
        if (__atomic_load_n(&l->queue->failed, __ATOMIC_ACQUIRE) ||
            __atomic_load_n(&l->queue->stopped, __ATOMIC_ACQUIRE))
            return queue_failed(b, l);
        /* Checked every 100 ms, the wait's bound: a timeout is that late at most. */
        if (deadline && devrt_now_ns() >= deadline)
            return devrt_fail(DEVRT_ERROR_TIMEOUT,
                              "kernel %s ran past its timeout of %.3f s; HSA cannot stop one "
                              "kernel of a queue, so it runs on, and the queue's later work "
                              "waits for it",
                              entry->kernel, (double)entry->config.timeout_ns / 1e9);
    }
    return DEVRT_SUCCESS;
}

static void hsa_release(struct devrt_launch_entry *entry)
{
    if (entry->backend[0])
        free_launch(backend_of(entry->module), entry->backend[0]);
    entry->backend[0] = entry->backend[1] = NULL;
}

/*
 * The module goes, and kernels of it run on past their timeouts on the queue: HSA cannot
 * end one kernel, but inactivating its queue ends everything on it. Launches of other
 * modules on that queue fail with it (queue_failed), and a new queue takes what follows.
 */
static void hsa_stop_runaways(devrt_module *module, struct devrt_launch_entry *runaways)
{
    struct hsa_backend *b = backend_of(module);
    for (struct devrt_launch_entry *r = runaways; r; r = r->next_runaway) {
        struct hsa_launch *l = r->backend[0];
        if (!l || hsa.hsa_signal_load_scacquire(l->done) < 1)
            continue;
        __atomic_store_n(&l->queue->stopped, true, __ATOMIC_RELEASE);
        pthread_mutex_lock(&b->queue_lock);
        replace_queue(b, l->queue);
        pthread_mutex_unlock(&b->queue_lock);
    }
}

static uint64_t hsa_arm_doorbell(devrt_device *device)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    hsa.hsa_signal_store_screlease(b->doorbell, 0);
    return 0;
}

static void hsa_wait_doorbell(devrt_device *device, uint64_t armed, uint32_t timeout_ms)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    (void)armed;
    if (timeout_ms)
        hsa.hsa_signal_wait_scacquire(b->doorbell, HSA_SIGNAL_CONDITION_NE, 0,
                                      b->ticks_per_ms * timeout_ms, HSA_WAIT_STATE_BLOCKED);
}

static void hsa_ring_doorbell(devrt_device *device)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    hsa.hsa_signal_store_screlease(b->doorbell, 1);
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
    if (hsa.hsa_agent_get_info(b->gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_BDFID, &bdf) !=
            HSA_STATUS_SUCCESS ||
        hsa.hsa_agent_get_info(b->gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DOMAIN, &domain) !=
            HSA_STATUS_SUCCESS)
        return -1;
    return devrt_pci_local_cpus("/sys", domain, bdf >> 8 & 0xff, bdf >> 3 & 0x1f, bdf & 0x7, list,
                                size);
}

const struct devrt_backend_ops devrt_hsa_backend = {
    .open = hsa_open,
    .close = hsa_close,
    .alloc = hsa_alloc_memory,
    .free = hsa_free_memory,
    .read = hsa_read,
    .write = hsa_write,
    .load = hsa_load,
    .unload = hsa_unload,
    .check_launch = hsa_check_launch,
    .rpc_lanes = hsa_rpc_lanes,
    .queue_full = hsa_queue_full,
    .point_state = hsa_point_state,
    .ended = hsa_ended,
    .submit = hsa_submit,
    .complete = hsa_complete,
    .release = hsa_release,
    .stop_runaways = hsa_stop_runaways,
    .arm_doorbell = hsa_arm_doorbell,
    .wait_doorbell = hsa_wait_doorbell,
    .ring_doorbell = hsa_ring_doorbell,
    .describe = hsa_describe,
    .local_cpus = hsa_local_cpus,
};
