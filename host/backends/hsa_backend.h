/*
 * What the files of the HSA backend share: the table of the runtime's functions, the
 * backend's state per device and per module, and the functions one file calls in another.
 * hsa.c opens the runtime and the device; hsa_loader.c loads code objects; hsa_dispatch.c
 * runs launches on queues; hsa_copy.c allocates and copies the GPU's memory; hsa_faults.c
 * turns the runtime's memory-fault events into lost devices. hsa_memory.c holds the memory
 * decisions as pure functions, tested without a runtime.
 */
#ifndef DEVRT_HSA_BACKEND_H
#define DEVRT_HSA_BACKEND_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "amdgpu_metadata.h"
#include "backend.h"
#include "codeobject.h"

/* What one file of the backend defines for another, and no one outside it. */
#define DEVRT_HSA_INTERNAL __attribute__((visibility("hidden")))

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
    X(hsa_agent_iterate_isas)                                                                      \
    X(hsa_isa_get_info_alt)                                                                        \
    X(hsa_amd_pointer_info)                                                                        \
    X(hsa_amd_register_system_event_handler)

/* Every call into the runtime goes through this table, filled once by hsa.c's open_library. */
struct devrt_hsa_library {
#define X(fn) __typeof__(fn) *fn;
    DEVRT_HSA_FUNCTIONS(X)
#undef X
};
extern struct devrt_hsa_library devrt_hsa DEVRT_HSA_INTERNAL;

/*
 * A queue of the GPU's. One takes every launch; a queue that fails, or is stopped to end a
 * runaway kernel, is replaced, and kept (retired) until the last launch that was on it is
 * released, so that those launches can tell why theirs never completes; then destroyed.
 */
struct hsa_queue_record {
    hsa_queue_t *queue;
    struct hsa_backend *backend;
    bool failed;  /* atomic: the runtime reported an error of the queue (queue_error) */
    bool stopped; /* atomic: devrt stopped it (devrt_hsa_stop_runaways) */
    hsa_status_t status;
    unsigned launches; /* launches on it not yet released, under queue_lock */
    struct hsa_queue_record *older;
};

/* A launch on the queue, from hsa_enqueue to devrt_hsa_release. */
struct hsa_launch {
    struct hsa_launch *next, *prev; /* among the backend's, under launches_lock */
    hsa_signal_t done;
    hsa_signal_t state_copied; /* the copy that points the state at the launch's record */
    struct hsa_queue_record *queue;
    void *kernarg;
    int kernarg_slot; /* of the ring, or -1: an allocation of its own */
    const char *kernel;
    uint64_t id; /* the launch's, 0 for a synchronous one */
};

/*
 * Kernel arguments: a ring of slots in the kernel argument pool, granted to the GPU once at
 * open, as ROCr and clr keep theirs; a launch whose arguments do not fit a slot, or that
 * finds none free, allocates its own.
 */
#define DEVRT_HSA_KERNARG_SLOTS 256u
#define DEVRT_HSA_MAX_CPUS 16
#define DEVRT_HSA_KERNARG_SLOT 1024u
/* The bytes of a copy's staging buffer (hsa_copy.c). */
#define DEVRT_HSA_STAGING_BYTES (64u << 10)
/* The GPUs open at once, which hsa_faults.c tracks for the fault handler. */
#define DEVRT_HSA_MAX_OPEN 64
/*
 * How long a probe packet may take on a GPU that runs (devrt_hsa_gpu_runs): the command
 * processor completes one in microseconds; this bound only leaves room for a GPU that
 * time-slices more queues than it has hardware slots.
 */
#define DEVRT_HSA_PROBE_MS 2000

/* A range of devrt's memory that the GPU reaches: an allocation or a loaded code object. */
struct hsa_range {
    uintptr_t base;
    size_t size;
};

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
    uint32_t node;                /* the kernel driver's node of the GPU */
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
     * A queue of its own and a signal for the probe of a GPU that may have faulted without
     * a report (devrt_hsa_gpu_runs), made when first needed; under probe_lock.
     */
    pthread_mutex_t probe_lock;
    hsa_queue_t *probe;
    hsa_signal_t probed;
    /*
     * A memory fault on this GPU while a launch of devrt's ran, set under open_lock by
     * on_system_event, or by devrt_hsa_stopped when the GPU stopped without a report: the
     * device is lost (faulted is atomic; every wait stops on it).
     */
    bool faulted;
    bool unreported; /* found by the probe: no address, no reasons */
    uint64_t fault_address;
    uint32_t fault_reasons;
    char fault_kernel[128]; /* the kernel that ran at the fault, and its launch */
    uint64_t fault_launch;
    const char *fault_place; /* where the address lies: devrt's memory, or no allocation */
    /*
     * devrt's memory on this GPU, so that the fault handler claims only faults at addresses
     * that are devrt's or no one's (hsa_faults.c); under ranges_lock, in no order.
     */
    pthread_mutex_t ranges_lock;
    struct hsa_range *ranges;
    size_t range_count, range_capacity;
};

struct hsa_module {
    hsa_executable_t executable;
    void *code_base; /* the loaded code object's memory, as devrt_hsa_own recorded it */
    hsa_code_object_reader_t reader; /* reads the module's image, which outlives it (module.c) */
    /* The code object's metadata, read once at the load: every launch packs from it. */
    struct devrt_amdgpu_metadata *metadata;
};

static inline struct hsa_backend *devrt_hsa_backend_of(const devrt_module *module)
{
    return devrt_device_backend_state(devrt_module_device(module));
}

/* hsa.c: CODE with "HSA: WHAT: <the runtime's text>". */
DEVRT_HSA_INTERNAL int devrt_hsa_failed(int code, hsa_status_t status, const char *what);

/* hsa_dispatch.c: whether B's GPU still runs the process's queues (a probe packet). */
DEVRT_HSA_INTERNAL bool devrt_hsa_gpu_runs(struct hsa_backend *b);

/* hsa_faults.c: the GPUs open, their faults, and the loss a fault makes. */
DEVRT_HSA_INTERNAL bool devrt_hsa_track_open(struct hsa_backend *b);
DEVRT_HSA_INTERNAL void devrt_hsa_track_close(struct hsa_backend *b);
DEVRT_HSA_INTERNAL bool devrt_hsa_faulted(struct hsa_backend *b);
/* Whether B's GPU faulted, reported or (once the runtime reports no more) found by a probe. */
DEVRT_HSA_INTERNAL bool devrt_hsa_stopped(struct hsa_backend *b);
/* Records [BASE, BASE + SIZE) as devrt's memory on B's GPU; false when out of memory. */
DEVRT_HSA_INTERNAL bool devrt_hsa_own(struct hsa_backend *b, const void *base, size_t size);
/* Forgets the range at BASE, if recorded. */
DEVRT_HSA_INTERNAL void devrt_hsa_disown(struct hsa_backend *b, const void *base);
/* DEVRT_ERROR_DEVICE_LOST, saying why, when a fault earlier in the process evicted the queues
   of the GPU at NODE (devrt's GPU INDEX), else DEVRT_SUCCESS. */
DEVRT_HSA_INTERNAL int devrt_hsa_lost_earlier(uint32_t node, int index);
/* The device of B lost to its fault: reported to MODULE's report file, or REPORT (may be
   NULL), and DEVRT_ERROR_DEVICE_LOST. */
DEVRT_HSA_INTERNAL int devrt_hsa_fault_lost(devrt_module *module, struct hsa_backend *b);
DEVRT_HSA_INTERNAL int devrt_hsa_lose(devrt_device *device, struct hsa_backend *b, FILE *report);

/* hsa_copy.c: the GPU's memory, allocated and copied. */
DEVRT_HSA_INTERNAL void *devrt_hsa_alloc(devrt_device *device, size_t size,
                                         enum devrt_memory memory);
DEVRT_HSA_INTERNAL void devrt_hsa_free(devrt_device *device, void *ptr, enum devrt_memory memory);
DEVRT_HSA_INTERNAL int devrt_hsa_copy(struct hsa_backend *b, void *dst, const void *src,
                                      size_t size, bool read);
DEVRT_HSA_INTERNAL int devrt_hsa_read(devrt_device *device, void *dst, const void *src,
                                      size_t size);
DEVRT_HSA_INTERNAL int devrt_hsa_write(devrt_device *device, void *dst, const void *src,
                                       size_t size);

/* hsa_loader.c: code objects as executables, and what their metadata says of a launch. */
DEVRT_HSA_INTERNAL int devrt_hsa_load(devrt_module *module, struct devrt_state ***state_variable);
DEVRT_HSA_INTERNAL void devrt_hsa_unload(devrt_module *module);
DEVRT_HSA_INTERNAL uint32_t devrt_hsa_rpc_lanes(devrt_module *module);
DEVRT_HSA_INTERNAL struct devrt_amdgpu_agent devrt_hsa_agent_of(const struct hsa_backend *b);
DEVRT_HSA_INTERNAL int devrt_hsa_check_launch(devrt_module *module, const char *kernel,
                                              const struct devrt_launch_config *config,
                                              const struct devrt_arg *args, size_t arg_count);

/* hsa_dispatch.c: queues, packets and the waits for them. */
DEVRT_HSA_INTERNAL hsa_status_t devrt_hsa_new_queue(struct hsa_backend *b);
DEVRT_HSA_INTERNAL bool devrt_hsa_queue_full(devrt_device *device);
DEVRT_HSA_INTERNAL bool devrt_hsa_ended(const struct devrt_launch_entry *entry);
DEVRT_HSA_INTERNAL int devrt_hsa_submit(struct devrt_launch_entry *entry,
                                        const struct devrt_arg *args, size_t arg_count);
DEVRT_HSA_INTERNAL int devrt_hsa_complete(struct devrt_launch_entry *entry, uint64_t deadline);
DEVRT_HSA_INTERNAL void devrt_hsa_release(struct devrt_launch_entry *entry);
DEVRT_HSA_INTERNAL void devrt_hsa_stop_runaways(devrt_module *module,
                                                struct devrt_launch_entry *runaways);

#endif
