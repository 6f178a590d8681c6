/*
 * The seam between the runtime and a backend: what a backend provides (struct
 * devrt_backend_ops), the registry's row that names it (struct devrt_backend_entry), what a
 * kernel takes as the loaded image records it, the launch records a backend's queue steps
 * read, and what a backend calls of the runtime. A new backend fills one ops table in
 * host/backends/ and one row of registry.c (docs/design.md, "Adding a backend").
 *
 * Who includes what: every file of host/backends/ includes this header (with codeobject.h,
 * the public headers and its own), never runtime.h (style.backend_includes); a device and a
 * module are opaque here, reached through the accessors below. runtime.h includes this
 * header, so the runtime sees all of it.
 */
#ifndef DEVRT_BACKEND_H
#define DEVRT_BACKEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <devrt/abi.h>
#include <devrt/host.h>
#include <devrt/rpc.h>

enum devrt_memory {
    DEVRT_MEMORY_DEVICE, /* device memory, zeroed: a module's initial state and tables */
    DEVRT_MEMORY_HOST,   /* host-visible memory, zeroed: exception records, user data */
    /* Host-visible memory as it comes: RPC buffers, which the device writes before the host
       reads them, and mailboxes, which the host zeroes itself. */
    DEVRT_MEMORY_HOST_RAW,
    /*
     * Device memory as it comes, for the heap's slabs, which the host lays out itself. The
     * server asks for it while a kernel waits: zeroing device memory is work on the GPU,
     * which can queue behind that kernel when it fills the GPU, and then neither ends.
     */
    DEVRT_MEMORY_DEVICE_RAW
};

/* What a kernel takes, as its image records it (describe_kernel). launch.c checks a
   launch's arguments against it, the same way on every backend (kernel_args.c). */
struct devrt_kernel_description {
    /* The explicit parameters' sizes in bytes, owned by the loaded module; NULL where the
       image does not record them (a launch is then passed on unchecked). */
    const uint32_t *param_sizes;
    size_t param_count;
    /* Beside the sizes, where the image records them (struct devrt_params): each one's enum
       devrt_param_kind, and its name; NULL where it does not. */
    const uint32_t *param_kinds;
    const char *const *param_names;
    /* NULL, or why the kernel cannot take an argument of bytes by value (DEVRT_ARG_BYTES),
       as the end of a sentence: "which ..." */
    const char *no_bytes_by_value;
};

/* A launch from the time it is queued until its report is taken (launch.c). */
/* The two lists an untaken asynchronous launch is on: every one of the device, its stream's. */
enum devrt_launch_list_kind { DEVRT_LAUNCHES_OF_DEVICE, DEVRT_LAUNCHES_OF_STREAM };

struct devrt_launch_link {
    struct devrt_launch_entry *prev, *next;
};

struct devrt_launch_list {
    struct devrt_launch_entry *head, *tail; /* in the order queued */
};

struct devrt_launch_entry {
    uint64_t id; /* 0: a synchronous launch */
    devrt_module *module;
    devrt_stream *stream;
    struct devrt_launch_link link[2]; /* by devrt_launch_list_kind */
    /* The launch before it on the module while that one's report is untaken, else NULL. */
    struct devrt_launch_entry *after;
    /* The module's latest kernel that ran on past its timeout and may still run, else NULL
       (both for the enqueue only). */
    struct devrt_launch_entry *after_runaway;
    const char *kernel;
    struct devrt_launch_config config;
    /* For the trace (trace.h), read only while it is on: when the launch was queued, and
       when a backend without queues started and ended it. */
    uint64_t queued_ns, started_ns, ended_ns;
    struct devrt_exception_record *slot; /* host-visible: this launch's record */
    bool new_slot;                       /* the state must be pointed at slot first */
    uint64_t module_order;               /* the module's launches run in this order */
    void *backend[2];                    /* the backend's: a CUevent; an HSA signal, kernarg */
    /*
     * A copy kept of a launch whose kernel ran on past its timeout (CUDA, HSA): its backend
     * handles order the module's later launches after it, on every stream (launch.c).
     */
    struct devrt_launch_entry *next_runaway; /* the module's earlier ones */
    /* Launches run by launch.c's stream threads: */
    struct devrt_arg *args;
    size_t arg_count;
    bool ran;
    bool taken;     /* a wait has it */
    bool detaching; /* the module's unload concludes it; a wait waits for that */
    int run_status;
    char *run_error;
    /* Set once the report is made, when the module is unloaded before the wait: */
    bool finished;
    int status;
    struct devrt_launch_report *result;
};

struct devrt_stream {
    devrt_device *device;
    uint32_t number; /* the device's streams in the order made: the trace's track */
    bool is_default; /* the device's default stream, fixed when made */
    void *backend;   /* the backend's queue (a CUstream) */
    devrt_stream *next;
    struct devrt_launch_list launches; /* launches whose report is untaken */
    /* The backends without enqueue: a thread runs the stream's launches in order. */
    pthread_t thread;
    bool thread_started, stop;
    pthread_cond_t work;
    struct devrt_launch_entry *next_to_run;
};

/* What each backend provides. Device addresses are plain pointers on every backend. */
struct devrt_backend_ops {
    /* Opens the device, sets wave_size and allocates the doorbell. */
    int (*open)(devrt_device *device, int index);
    void (*close)(devrt_device *device);
    void *(*alloc)(devrt_device *device, size_t size, enum devrt_memory memory);
    void (*free)(devrt_device *device, void *ptr, enum devrt_memory memory);
    /* Copies that fail, rather than fault, on an address the device made up. */
    int (*read)(devrt_device *device, void *dst, const void *src, size_t size);
    int (*write)(devrt_device *device, void *dst, const void *src, size_t size);
    /*
     * Optional: a read the server may make while it serves a request, because it needs no
     * work of the GPU's that could wait behind the kernel (CUDA's copy engines, the
     * emulation's own memory). Where there is one, long raw writes leave their bytes in
     * device memory for the server (DEVRT_STATE_OUTPUT_BY_ADDRESS).
     */
    int (*read_serving)(devrt_device *device, void *dst, const void *src, size_t size);
    /*
     * Load module->image (module->image_size bytes, read once from module->path by
     * module.c) and return the address of its __devrt_state variable.
     */
    int (*load)(devrt_module *module, struct devrt_state ***state_variable);
    bool loaded_by_program; /* attach.c: no image to read, the program loaded it */
    void (*unload)(devrt_module *module);
    /*
     * What KERNEL takes (DEVRT_ERROR_NO_KERNEL, with the error set, if the module has none),
     * against which module.c checks a launch's arguments; or, where the image says more
     * than that (HSA's code objects), check_launch: everything submit would refuse in a
     * launch of KERNEL (its arguments, geometry, LDS, scratch and hidden arguments), checked
     * before anything is queued. A backend gives one of the two.
     */
    int (*describe_kernel)(devrt_module *module, const char *kernel,
                           struct devrt_kernel_description *description);
    int (*check_launch)(devrt_module *module, const char *kernel,
                        const struct devrt_launch_config *config, const struct devrt_arg *args,
                        size_t arg_count);
    /* Optional: the widest wave a request of the module's kernels may come from, where it
       may be wider than the device's (amdgcn's -mwavefrontsize64 on gfx10 and later). */
    uint32_t (*rpc_lanes)(devrt_module *module);

    /* Backends without queues of their own: run a kernel to completion (launch.c runs it on
       the stream's thread). */
    int (*launch)(devrt_module *module, const char *kernel,
                  const struct devrt_launch_config *config, const struct devrt_arg *args,
                  size_t arg_count);

    /*
     * Backends with queues of their own: the steps launch.c composes to queue a launch
     * after the module's earlier ones (launch.c, "Order").
     */
    int (*stream_create)(devrt_stream *stream);
    void (*stream_destroy)(devrt_stream *stream);
    /* Optional: whether the queue ENTRY goes to is full (launch.c tries again later). */
    bool (*queue_full)(devrt_device *device);
    /* Optional: ENTRY's stream waits for BEFORE, a launch on another stream or a kernel
       past its timeout. NULL where one queue runs every launch in the order queued. */
    int (*order_after)(struct devrt_launch_entry *entry, const struct devrt_launch_entry *before);
    /*
     * Point the module's state at entry->slot. With state_in_stream_order the write waits
     * on ENTRY's stream for what is before it; without, it is made at once, and launch.c
     * first waits for the module's last launch to end (ended). NULL where submit points
     * the state itself when entry->new_slot, in its queue ahead of the kernel (HSA).
     */
    int (*point_state)(struct devrt_launch_entry *entry);
    bool state_in_stream_order;
    bool (*ended)(const struct devrt_launch_entry *entry);
    /* Queue ENTRY's kernel with ARGS, which check_launch or describe_kernel's description
       has passed. */
    int (*submit)(struct devrt_launch_entry *entry, const struct devrt_arg *args, size_t arg_count);
    /* What the steps return, having done nothing, when ENTRY must wait: launch.c tries
       again without its lock held. */
#define DEVRT_ENQUEUE_NOT_YET (-1)
    /*
     * complete waits until ENTRY has ended (DEVRT_ERROR_LAUNCH with the error set if it
     * failed), or until DEADLINE_NS (devrt_now_ns; 0: none) has passed (DEVRT_ERROR_TIMEOUT:
     * the kernel runs on, since these backends cannot stop it); release gives back what
     * submit took, once launch.c no longer orders anything after the entry.
     */
    int (*complete)(struct devrt_launch_entry *entry, uint64_t deadline_ns);
    void (*release)(struct devrt_launch_entry *entry);
    /*
     * Optional: end RUNAWAYS (a list through next_runaway), the module's kernels that run
     * on past their timeouts, before its code and memory are freed.
     */
    void (*stop_runaways)(devrt_module *module, struct devrt_launch_entry *runaways);

    /* The server's sleep: arm, look at the ports once more, then wait unless woken. */
    uint64_t (*arm_doorbell)(devrt_device *device);
    void (*wait_doorbell)(devrt_device *device, uint64_t armed, uint32_t timeout_ms);
    void (*ring_doorbell)(devrt_device *device);
    /* Fills name and memory_bytes of INFO (devrt_device_get_info sets wave_size). */
    void (*describe)(const devrt_device *device, struct devrt_device_info *info);
    /* Optional: the cpulist of the CPUs of the GPU's NUMA node into LIST; -1 if unknown. */
    int (*local_cpus)(const devrt_device *device, char *list, size_t size);
    /* A timeout stops the kernel (devrt_device_stops_kernels). */
    bool stops_kernels;
};

/* One row of the registry (registry.c): a backend kind, what it runs, and its ops where it
   is built into this runtime. */
/* A kind of image, which one or more backends run. */
struct devrt_image_format {
    const char *runs; /* what images of it are, in words, plural */
    const char *what; /* what one image is, in words */
    /* Whether the first bytes of an image are of this format. */
    bool (*sniff)(const unsigned char *head, size_t size);
    /* Optional: refuse ARGS for KERNEL of the image at PATH, by the image's own records,
       without a device (devrt_image_check_args). */
    int (*check_image_args)(const void *image, size_t size, const char *path, const char *kernel,
                            const struct devrt_arg *args, size_t arg_count);
    /* Optional: what the image is, in more words than WHAT ("an amdgcn code object
       (gfx90a)"), into TEXT, which holds WHAT. */
    void (*describe_image)(const void *image, size_t size, const char *path, char *text,
                           size_t length);
};

struct devrt_backend_entry {
    enum devrt_backend kind;
    const char *name;                       /* devrt_backend_name, devrt-run --backend */
    const struct devrt_image_format *image; /* the images it runs */
    const struct devrt_backend_ops *ops;    /* NULL: not built into this runtime */
};

/* registry.c: DEVRT_ERROR_IMAGE, saying what the image (SIZE bytes, read from PATH) is,
   where BACKEND runs another kind of image; DEVRT_SUCCESS where it runs this kind or the
   kind is unknown. */
int devrt_image_check_kind(const void *image, size_t size, const char *path,
                           enum devrt_backend backend);

/* The row of KIND; NULL for AUTO or a value of no enumerator. */
const struct devrt_backend_entry *devrt_backend_entry(enum devrt_backend kind);
/* The first row whose sniff takes the image's first SIZE bytes; NULL if none does. */
const struct devrt_backend_entry *devrt_backend_sniff(const unsigned char *head, size_t size);

/*
 * What backends call of the runtime (host/runtime/). devrt_device and devrt_module are
 * opaque here: a backend reaches the few fields it keeps or reads through these accessors
 * (device.c, module.c), so the runtime's internals (runtime.h) can change under it.
 */

/* device.c: the backend's own state, which its open sets. */
void *devrt_device_backend_state(const devrt_device *device);
void devrt_device_set_backend_state(devrt_device *device, void *state);
/* The host-visible doorbell shared by the device's channels; open allocates and sets it. */
struct devrt_rpc_doorbell *devrt_device_doorbell(const devrt_device *device);
void devrt_device_set_doorbell(devrt_device *device, struct devrt_rpc_doorbell *doorbell);
/* The device's wave size; open sets it. */
uint32_t devrt_device_wave_size(const devrt_device *device);
void devrt_device_set_wave_size(devrt_device *device, uint32_t wave_size);
/* The options as devrt_device_open was given them. */
const struct devrt_device_options *devrt_device_open_options(const devrt_device *device);
/*
 * A flag that a test (tests/faults) sets to stop the device's running launch as its timeout
 * would, once a condition holds rather than after a time; NULL in every other program. A
 * backend that can stop a kernel (the emulation) polls it while a launch runs.
 */
const bool *devrt_device_test_stop(devrt_device *device);

/* module.c: what a backend's load, launches and unload read of a module. */
devrt_device *devrt_module_device(const devrt_module *module);
/* The backend's own state of the module, set by its load. */
void *devrt_module_backend_state(const devrt_module *module);
void devrt_module_set_backend_state(devrt_module *module, void *state);
/* The path the module was loaded from (attach.c: the name the program gave). */
const char *devrt_module_path(const devrt_module *module);
/* The image as read from the path, until the module is unloaded. */
void *devrt_module_image(const devrt_module *module);
size_t devrt_module_image_size(const devrt_module *module);
/* Where reports go: stderr, or as devrt_module_set_report_file set it (NULL: nowhere). */
FILE *devrt_module_report_file(const devrt_module *module);
/* The device address of the module's state block, and of its __devrt_state variable. */
struct devrt_state *devrt_module_state(const devrt_module *module);
struct devrt_state **devrt_module_state_variable(const devrt_module *module);

/* device.c: a lost device. */
/*
 * A kernel faulted the GPU and the backend cannot go on with it (CUDA's sticky errors, an HSA
 * memory fault that evicted the process's queues): every later call on DEVICE fails at once
 * with DEVRT_ERROR_DEVICE_LOST, naming WHY, until it is closed. Returns that status, with
 * WHY as the error. The first reason is kept.
 */
int devrt_device_mark_lost(devrt_device *device, const char *why);
/* DEVRT_ERROR_DEVICE_LOST with the reason when DEVICE is lost, else DEVRT_SUCCESS. */
int devrt_device_check_lost(const devrt_device *device);
/* Whether DEVICE is lost, setting no error (a close that must know). */
bool devrt_device_is_lost(const devrt_device *device);

/* server.c */
/*
 * Whether the calling thread is DEVICE's server in the middle of a request's handler. The
 * path that serves the device must do no work on the GPU (a copy of device memory is a
 * blit on HSA): when the kernel fills the GPU, that work waits for waves that wait for the
 * reply. The emulation refuses copies there, so its tests show any that creep in.
 */
bool devrt_server_serving(const devrt_device *device);
/*
 * The doorbell ops of a device that cannot wake a host thread: the device sets
 * doorbell->count, the server polls it for at most TIMEOUT_MS and clears it.
 */
uint64_t devrt_polled_arm_doorbell(devrt_device *device);
void devrt_polled_wait_doorbell(devrt_device *device, uint64_t armed, uint32_t timeout_ms);
void devrt_polled_ring_doorbell(devrt_device *device);

/* clock.c: CLOCK_MONOTONIC in nanoseconds. */
uint64_t devrt_now_ns(void);
/* The devrt_now_ns time TIMEOUT_NS from now (0: none), saturated rather than wrapped. */
uint64_t devrt_deadline(uint64_t timeout_ns);

/*
 * placement.c: the cpulist of the CPUs local to the PCI function
 * DOMAIN:BUS:DEVICE.FUNCTION, as SYSFS (normally "/sys") lists them in
 * bus/pci/devices/<address>/local_cpulist, into LIST without its newline. Returns 0, or -1
 * if the file cannot be read.
 */
int devrt_pci_local_cpus(const char *sysfs, unsigned domain, unsigned bus, unsigned device,
                         unsigned function, char *list, size_t size);

/* The backends' ops tables, named only by registry.c. */
extern const struct devrt_backend_ops devrt_emu_backend;
extern const struct devrt_backend_ops devrt_cuda_backend;
extern const struct devrt_backend_ops devrt_hsa_backend;
extern const struct devrt_backend_ops devrt_hip_backend;

#endif
