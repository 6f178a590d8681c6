/*
 * The seam between the runtime and a backend: what a backend provides (struct
 * devrt_backend_ops), the registry's row that names it (struct devrt_backend_entry), and
 * what a kernel takes as the loaded image records it. A new backend fills one ops table in
 * host/backends/ and one row of registry.c (docs/design.md, "Adding a backend").
 */
#ifndef DEVRT_BACKEND_H
#define DEVRT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <devrt/abi.h>
#include <devrt/host.h>

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
   launch's arguments against it, the same way on every backend (arguments.c). */
struct devrt_kernel_description {
    /* The explicit parameters' sizes in bytes, owned by the loaded module; NULL where the
       image does not record them (a launch is then passed on unchecked). */
    const uint32_t *param_sizes;
    size_t param_count;
    /* NULL, or why the kernel cannot take an argument of bytes by value (DEVRT_ARG_BYTES),
       as the end of a sentence: "which ..." */
    const char *no_bytes_by_value;
};

struct devrt_launch_entry;

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
    /* What KERNEL takes (DEVRT_ERROR_NO_KERNEL, with the error set, if the module has none). */
    int (*describe_kernel)(devrt_module *module, const char *kernel,
                           struct devrt_kernel_description *description);
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
     * first waits for the module's last launch to end (ended).
     */
    int (*point_state)(struct devrt_launch_entry *entry);
    bool state_in_stream_order;
    bool (*ended)(const struct devrt_launch_entry *entry);
    /* Queue ENTRY's kernel with ARGS, which describe_kernel's description has passed. */
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
struct devrt_backend_entry {
    enum devrt_backend kind;
    const char *name; /* devrt_backend_name, devrt-run --backend */
    const char *runs; /* what images it runs, in words */
    const char *what; /* what one of those images is, in words */
    /* Whether the first bytes of an image are of the kind it runs. */
    bool (*sniff)(const unsigned char *head, size_t size);
    /* Optional: refuse ARGS for KERNEL of the image at PATH, by the image's own records,
       without a device (devrt_image_check_args). */
    int (*check_image_args)(const void *image, size_t size, const char *path, const char *kernel,
                            const struct devrt_arg *args, size_t arg_count);
    /* Optional: what the image is, in more words than WHAT ("an amdgcn code object
       (gfx90a)"), into TEXT, which holds WHAT. */
    void (*describe_image)(const void *image, size_t size, const char *path, char *text,
                           size_t length);
    const struct devrt_backend_ops *ops; /* NULL: not built into this runtime */
};

/* The row of KIND; NULL for AUTO or a value of no enumerator. */
const struct devrt_backend_entry *devrt_backend_entry(enum devrt_backend kind);
/* The first row whose sniff takes the image's first SIZE bytes; NULL if none does. */
const struct devrt_backend_entry *devrt_backend_sniff(const unsigned char *head, size_t size);

/* The backends' ops tables, named only by registry.c. */
extern const struct devrt_backend_ops devrt_emu_backend;
extern const struct devrt_backend_ops devrt_cuda_backend;
extern const struct devrt_backend_ops devrt_hsa_backend;
extern const struct devrt_backend_ops devrt_hip_backend;

#endif
