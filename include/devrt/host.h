/*
 * devrt host runtime: open a device, load a code object, launch kernels while serving
 * their requests, report their exceptions.
 *
 * Every function returns a devrt_status; devrt_status_string() names it, and
 * devrt_last_error() gives the calling thread's message for the last failure.
 */
#ifndef DEVRT_HOST_H
#define DEVRT_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum devrt_status {
    DEVRT_SUCCESS = 0,
    DEVRT_ERROR_INVALID_ARGUMENT,
    DEVRT_ERROR_NO_DEVICE, /* the backend is absent or sees no device */
    DEVRT_ERROR_OUT_OF_MEMORY,
    DEVRT_ERROR_IMAGE,        /* the image cannot be read or loaded */
    DEVRT_ERROR_ABI_MISMATCH, /* the image's device library speaks another ABI */
    DEVRT_ERROR_NO_KERNEL,
    DEVRT_ERROR_LAUNCH,
    DEVRT_ERROR_EXCEPTION,      /* the kernel raised an exception (see the report) */
    DEVRT_ERROR_DEVICE_REQUEST, /* the kernel sent a malformed request (see the report) */
    DEVRT_ERROR_BACKEND,        /* the backend's own API failed */
    DEVRT_ERROR_ARGUMENTS,      /* the arguments do not fit the parameters (count, size, kind) */
    DEVRT_ERROR_TIMEOUT,        /* the kernel ran past its launch's timeout (docs/runtime.md) */
    DEVRT_ERROR_DEVICE_LOST     /* a kernel faulted the GPU: close the device and open it again */
};

enum devrt_backend {
    /* devrt_image_backend's answer when it cannot tell, and devrt-run's "from the image";
       devrt_device_open takes HSA, EMU, CUDA and HIP. */
    DEVRT_BACKEND_AUTO = 0,
    DEVRT_BACKEND_HSA,
    DEVRT_BACKEND_EMU,
    DEVRT_BACKEND_CUDA,
    /* AMD GPUs through the HIP runtime (libamdhip64, opened at run time), and modules
       attached with devrt_hip_attach (<devrt/hip.h>) */
    DEVRT_BACKEND_HIP
};

typedef struct devrt_device devrt_device;
typedef struct devrt_module devrt_module;
typedef struct devrt_stream devrt_stream;

/* Kernel arguments, typed so that every backend can lay them out or pass them. */
enum devrt_arg_type {
    DEVRT_ARG_POINTER,
    DEVRT_ARG_I32,
    DEVRT_ARG_U32,
    DEVRT_ARG_I64,
    DEVRT_ARG_U64,
    DEVRT_ARG_F32,
    DEVRT_ARG_F64,
    /* Added later, so the values above stay what they were. */
    DEVRT_ARG_I8,
    DEVRT_ARG_U8,
    DEVRT_ARG_I16,
    DEVRT_ARG_U16,
    /*
     * A value of `size` bytes at value.pointer, such as a struct passed by value, copied at
     * launch. On the emulation only kernels declared with DEVRT_KERNELn take one: how the
     * host ABI passes a struct depends on its fields, which only the compiler knows.
     */
    DEVRT_ARG_BYTES
};

struct devrt_arg {
    enum devrt_arg_type type;
    /* DEVRT_ARG_BYTES only: how many bytes. In what was padding: the layout is unchanged. */
    uint32_t size;
    union {
        void *pointer;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f32;
        double f64;
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
    } value;
};

#ifdef __cplusplus
/* C++ has neither compound literals nor (before C++20) designated initializers. */
#define DEVRT_ARG_OF(name, kind, member, ctype)                                                    \
    static inline struct devrt_arg name(ctype v)                                                   \
    {                                                                                              \
        struct devrt_arg arg = {};                                                                 \
        arg.type = kind;                                                                           \
        arg.value.member = v;                                                                      \
        return arg;                                                                                \
    }
DEVRT_ARG_OF(devrt_arg_of_pointer, DEVRT_ARG_POINTER, pointer, void *)
DEVRT_ARG_OF(devrt_arg_of_i32, DEVRT_ARG_I32, i32, int32_t)
DEVRT_ARG_OF(devrt_arg_of_u32, DEVRT_ARG_U32, u32, uint32_t)
DEVRT_ARG_OF(devrt_arg_of_i64, DEVRT_ARG_I64, i64, int64_t)
DEVRT_ARG_OF(devrt_arg_of_u64, DEVRT_ARG_U64, u64, uint64_t)
DEVRT_ARG_OF(devrt_arg_of_f32, DEVRT_ARG_F32, f32, float)
DEVRT_ARG_OF(devrt_arg_of_f64, DEVRT_ARG_F64, f64, double)
DEVRT_ARG_OF(devrt_arg_of_i8, DEVRT_ARG_I8, i8, int8_t)
DEVRT_ARG_OF(devrt_arg_of_u8, DEVRT_ARG_U8, u8, uint8_t)
DEVRT_ARG_OF(devrt_arg_of_i16, DEVRT_ARG_I16, i16, int16_t)
DEVRT_ARG_OF(devrt_arg_of_u16, DEVRT_ARG_U16, u16, uint16_t)
#undef DEVRT_ARG_OF
static inline struct devrt_arg devrt_arg_of_bytes(const void *data, uint32_t size)
{
    struct devrt_arg arg = {};
    arg.type = DEVRT_ARG_BYTES;
    arg.size = size;
    arg.value.pointer = const_cast<void *>(data);
    return arg;
}
#define DEVRT_ARG_PTR(p) devrt_arg_of_pointer((void *)(p))
#define DEVRT_ARG_I32(v) devrt_arg_of_i32(v)
#define DEVRT_ARG_U32(v) devrt_arg_of_u32(v)
#define DEVRT_ARG_I64(v) devrt_arg_of_i64(v)
#define DEVRT_ARG_U64(v) devrt_arg_of_u64(v)
#define DEVRT_ARG_F32(v) devrt_arg_of_f32(v)
#define DEVRT_ARG_F64(v) devrt_arg_of_f64(v)
#define DEVRT_ARG_I8(v) devrt_arg_of_i8(v)
#define DEVRT_ARG_U8(v) devrt_arg_of_u8(v)
#define DEVRT_ARG_I16(v) devrt_arg_of_i16(v)
#define DEVRT_ARG_U16(v) devrt_arg_of_u16(v)
#define DEVRT_ARG_BYTES(p, n) devrt_arg_of_bytes((p), (n))
#else
#define DEVRT_ARG_PTR(p)                                                                           \
    ((struct devrt_arg){.type = DEVRT_ARG_POINTER, .value = {.pointer = (void *)(p)}})
#define DEVRT_ARG_I32(v) ((struct devrt_arg){.type = DEVRT_ARG_I32, .value = {.i32 = (v)}})
#define DEVRT_ARG_U32(v) ((struct devrt_arg){.type = DEVRT_ARG_U32, .value = {.u32 = (v)}})
#define DEVRT_ARG_I64(v) ((struct devrt_arg){.type = DEVRT_ARG_I64, .value = {.i64 = (v)}})
#define DEVRT_ARG_U64(v) ((struct devrt_arg){.type = DEVRT_ARG_U64, .value = {.u64 = (v)}})
#define DEVRT_ARG_F32(v) ((struct devrt_arg){.type = DEVRT_ARG_F32, .value = {.f32 = (v)}})
#define DEVRT_ARG_F64(v) ((struct devrt_arg){.type = DEVRT_ARG_F64, .value = {.f64 = (v)}})
#define DEVRT_ARG_I8(v) ((struct devrt_arg){.type = DEVRT_ARG_I8, .value = {.i8 = (v)}})
#define DEVRT_ARG_U8(v) ((struct devrt_arg){.type = DEVRT_ARG_U8, .value = {.u8 = (v)}})
#define DEVRT_ARG_I16(v) ((struct devrt_arg){.type = DEVRT_ARG_I16, .value = {.i16 = (v)}})
#define DEVRT_ARG_U16(v) ((struct devrt_arg){.type = DEVRT_ARG_U16, .value = {.u16 = (v)}})
#define DEVRT_ARG_BYTES(p, n)                                                                      \
    ((struct devrt_arg){.type = DEVRT_ARG_BYTES, .size = (n), .value = {.pointer = (void *)(p)}})
#endif
/*
 * DEVRT_ARG_<TYPE> is named as devrt-run names the type (u32:5 is DEVRT_ARG_U32(5)); each
 * shares its name with its enum constant, which a function-like macro leaves alone. The
 * first names stay for the programs that use them.
 */
#define DEVRT_ARG_INT(v) DEVRT_ARG_I32(v)
#define DEVRT_ARG_UINT(v) DEVRT_ARG_U32(v)
#define DEVRT_ARG_FLOAT(v) DEVRT_ARG_F32(v)
#define DEVRT_ARG_DOUBLE(v) DEVRT_ARG_F64(v)

/*
 * grid counts workgroups and block counts workitems per workgroup, in each dimension.
 * timeout_ns, if not 0, bounds the launch (on the emulation from when its lanes start, on
 * CUDA and HSA from when the launch is waited for): past it the launch is
 * DEVRT_ERROR_TIMEOUT with the kernel's output so far written (its later output is dropped,
 * and a raise that came before the timeout is in the report). What then becomes of the
 * kernel depends on the backend (docs/runtime.md, "Timeouts"): the emulation stops its lanes
 * and the module stays usable; CUDA and HSA cannot stop a kernel, which runs on until it ends.
 * Initialise it by field ({.grid = {...}, .block = {...}}): the positional form leaves
 * timeout_ns out, which -Wextra's -Wmissing-field-initializers reports.
 */
struct devrt_launch_config {
    uint32_t grid[3];
    uint32_t block[3];
    uint64_t timeout_ns;
};

/* What a failed launch reports: an exception, or the first malformed device request. */
struct devrt_launch_report {
    uint32_t code; /* enum devrt_exception_code */
    uint32_t workgroup[3];
    uint32_t workitem[3];
    uint32_t line;
    uint64_t value;
    char message[256];
    char file[256];
    char text[1024]; /* the whole report as one line, as the runtime prints it */
    uint64_t launch; /* the asynchronous launch it is about (devrt_launch_async); 0: devrt_launch */
};

struct devrt_device_options {
    size_t rpc_ports;          /* 0: the backend's default */
    size_t heap_initial_bytes; /* reserved for each module's heap at load; 0: 4 MiB */
    size_t heap_max_bytes;     /* the most a module's heap grows to; 0: 256 MiB */
    /*
     * The emulation backend's waves (docs/runtime.md); other backends ignore these.
     * emu_wave_size: 1, 32 or 64 lanes; 0: $DEVRT_EMU_WAVE, else 32.
     * emu_schedule: how lanes meet where they take the active mask; 0: $DEVRT_EMU_SCHEDULE
     * ("converged" or "random"), else converged.
     * emu_seed: the random schedule's seed; 0: $DEVRT_EMU_SEED, else 1.
     */
    uint32_t emu_wave_size;
    uint32_t emu_schedule; /* enum devrt_emu_schedule */
    uint64_t emu_seed;
    /*
     * The CPUs the device's server thread runs on, as a Linux cpulist ("0-15,32-47"); NULL:
     * $DEVRT_SERVER_CPUS, else the CPUs of the GPU's NUMA node that the program may use
     * (CUDA and HSA read them from the GPU's PCI address), else wherever the system puts
     * it. A malformed list fails devrt_device_open with DEVRT_ERROR_INVALID_ARGUMENT.
     */
    const char *server_cpus;
    /* The emulation's devices, indexes 0 to N-1 (at most 64); 0: $DEVRT_EMU_DEVICES, else 1. */
    uint32_t emu_devices;
};

enum devrt_emu_schedule {
    DEVRT_EMU_SCHEDULE_DEFAULT = 0,
    /* Lanes wait for every live lane of the wave that is not held up elsewhere. */
    DEVRT_EMU_SCHEDULE_CONVERGED,
    /* As converged, but gatherings also close early, at random, with whoever is there. */
    DEVRT_EMU_SCHEDULE_RANDOM
};

struct devrt_heap_stats {
    uint64_t bytes_in_use;   /* bytes of blocks allocated and not freed */
    uint64_t bytes_reserved; /* device memory the heap holds */
    uint64_t max_bytes;
    uint32_t slabs;
    uint64_t
        failed_allocations; /* allocations that returned NULL, sizes past the maximum included */
};

/*
 * Device memory that kernels and the host can both read and write, zeroed. NULL (and
 * devrt_last_error() says why) for no device, a size of 0, or memory the device cannot give.
 * devrt_mem_free takes only what devrt_mem_alloc of the same device returned, or NULL.
 */
void *devrt_mem_alloc(devrt_device *device, size_t size);
void devrt_mem_free(devrt_device *device, void *ptr);

/*
 * devrt_device_close unloads the modules still loaded on DEVICE (waiting for their
 * launches) and destroys its streams: their handles, like the device's, are not to be used
 * after it. Unloading a module twice, or using it after its unload, is as undefined as a
 * double free(). The functions that return nothing take NULL and do nothing.
 * devrt_device_open refuses another backend (AUTO, a value of no enumerator) and a
 * negative index with DEVRT_ERROR_INVALID_ARGUMENT.
 */
int devrt_device_open(enum devrt_backend backend, int index,
                      const struct devrt_device_options *options, devrt_device **device);
void devrt_device_close(devrt_device *device);
/* DEVRT_BACKEND_AUTO for NULL and for a device devrt attached to (devrt_hip_attach). */
enum devrt_backend devrt_device_backend(const devrt_device *device);
/*
 * 1 where a launch's timeout stops its kernel (the emulation), else 0. Elsewhere the kernel runs on
 * (docs/runtime.md, "Timeouts"); only the process's end stops it.
 */
int devrt_device_stops_kernels(const devrt_device *device);
/*
 * Traces DEVICE into PATH, created now: its launches, requests, output, heap growth,
 * exceptions and the server's sleeps, written as Chrome trace-event JSON (Perfetto,
 * chrome://tracing) by devrt_device_close (docs/runtime.md, "Tracing"). DEVRT_TRACE=PATH
 * in the environment does the same at devrt_device_open. DEVRT_ERROR_INVALID_ARGUMENT
 * for a device traced already or a PATH that cannot be written.
 */
int devrt_device_trace(devrt_device *device, const char *path);

/* What a device is, as devrt-run --list shows it. */
struct devrt_device_info {
    /* HSA: the agent's ISA as a target ID (gfx90a:sramecc+:xnack-); CUDA: sm_NN and the
       GPU's name; emulation: host. */
    char name[128];
    uint32_t wave_size;
    uint64_t memory_bytes; /* the device's own memory (the host's for the emulation); 0: unknown */
    /* Where devrt_device_open spent its time: in the backend's driver (loading and starting
       it, creating the context, queue or streams), and in devrt's own set-up after it. */
    uint64_t open_driver_ns;
    uint64_t open_runtime_ns;
    /* Where the device's server thread runs: the CPUs as a cpulist ("" anywhere), and why. */
    char server_cpus[256];
    uint32_t server_placement; /* enum devrt_server_placement */
    /* The CPU time the server thread has used so far, by its own clock
       (CLOCK_THREAD_CPUTIME_ID): what serving, and waiting for requests, cost the host. */
    uint64_t server_cpu_ns;
};
enum devrt_server_placement {
    DEVRT_SERVER_ANYWHERE,      /* no CPUs chosen: the system places it */
    DEVRT_SERVER_NEAR_GPU,      /* the GPU's NUMA node's CPUs, as far as the program may use them */
    DEVRT_SERVER_BY_OPTION,     /* devrt_device_options.server_cpus */
    DEVRT_SERVER_BY_ENVIRONMENT /* $DEVRT_SERVER_CPUS */
};
/* "anywhere", "the GPU's NUMA node", "the device option", "DEVRT_SERVER_CPUS". */
const char *devrt_server_placement_name(enum devrt_server_placement placement);
int devrt_device_get_info(const devrt_device *device, struct devrt_device_info *info);
/* "auto", "hsa", "emu", "cuda", "hip"; "unknown" for a value of no enumerator. */
const char *devrt_backend_name(enum devrt_backend backend);
/* The backend NAME names (devrt_backend_name's), into *BACKEND; DEVRT_ERROR_INVALID_ARGUMENT,
   with a message listing the names, for any other. */
int devrt_backend_parse(const char *name, enum devrt_backend *backend);
/*
 * The backends built into this runtime that devrt_device_open opens, in turn: the one after
 * BACKEND (from DEVRT_BACKEND_AUTO, the first); DEVRT_BACKEND_AUTO after the last.
 */
enum devrt_backend devrt_backend_next(enum devrt_backend backend);

/*
 * PATTERN with each "{target}" replaced by the device's processor: gfx90a on HSA (its target
 * ID without the features), sm_90 on CUDA, host on the emulation. A build that makes one
 * code object per GPU (kernels.gfx90a.hsaco, kernels.gfx1100.hsaco, ...) then names the one
 * for whichever GPU is there with one path: kernels.{target}.hsaco. Returns DEVRT_SUCCESS,
 * or DEVRT_ERROR_INVALID_ARGUMENT when the path does not fit SIZE bytes.
 */
int devrt_device_image_path(const devrt_device *device, const char *pattern, char *path,
                            size_t size);

/* The backend an image needs, from its contents; DEVRT_BACKEND_AUTO if unknown. */
enum devrt_backend devrt_image_backend(const char *path);

int devrt_module_load(devrt_device *device, const char *path, devrt_module **module);
void devrt_module_unload(devrt_module *module);

/* Where the module's exception reports go (default stderr; NULL: nowhere). */
void devrt_module_set_report_file(devrt_module *module, FILE *file);

/*
 * Where devrt_module_load spent its time, step by step, in the order taken: the image
 * (read, and loaded by the backend's driver; an amdgcn code object's metadata read too),
 * the check that its device library speaks this ABI (reads of device memory), the memory
 * the module holds (exception records, RPC mailboxes and buffers, the initial device state,
 * the heap's first reserve), and the writes that set the initial state up and point
 * __devrt_state at it. Each step's time is wall time; reading them takes no device work.
 */
struct devrt_module_info {
    uint64_t load_image_ns;
    uint64_t load_check_ns;
    uint64_t load_memory_ns;
    uint64_t load_state_ns;
};
int devrt_module_get_info(const devrt_module *module, struct devrt_module_info *info);

/*
 * Output. Each devrt_printf, devrt_puts, devrt_putchar or devrt_output_write call of one
 * lane arrives as one unit, whole, while the kernel runs; units of different lanes never
 * interleave. A unit goes to the module's output file (default stdout; NULL discards
 * output), or to its callback if one is set. STREAM says which device context the unit
 * came from. The server thread calls the callback, one unit at a time; the callback may
 * choose the module's output anew (the two calls below), and the units after it go there.
 */
enum devrt_output_stream {
    DEVRT_OUTPUT_RAW = 1,   /* devrt_output_context(): bytes as the device wrote them */
    DEVRT_OUTPUT_PRINTF = 2 /* devrt_printf_output_context(): what the host formatted */
};
typedef void devrt_output_fn(void *context, uint32_t stream, const char *data, size_t size);
/* Output to FILE from now on (a callback set before is dropped). */
void devrt_module_set_output_file(devrt_module *module, FILE *file);
/* Output to FN from now on; FN NULL: back to the output file. */
void devrt_module_set_output_callback(devrt_module *module, devrt_output_fn *fn, void *context);
/*
 * Once devrt_launch, devrt_launch_wait or devrt_stream_wait has returned for a launch, no
 * unit of that launch's output is written or passed to a callback any more: a kernel that
 * runs on past its timeout (CUDA, HSA, HIP cannot stop one) has its later output dropped,
 * so a program may free a callback's context as soon as the launch returns. This counts
 * the units (lanes' messages) the module's kernels sent that were dropped so.
 */
uint64_t devrt_module_output_dropped(devrt_module *module);

/*
 * Check ARGS against the parameters of KERNEL as the image at PATH records them, without a
 * device: BACKEND (or, with DEVRT_BACKEND_AUTO, the image's contents) says how to read it.
 * An amdgcn code object's metadata lists each kernel's arguments, so for HSA a count or a
 * size that does not fit, or a pointer given for a by_value parameter or anything else for
 * a global_buffer one, is DEVRT_ERROR_ARGUMENTS and a kernel it lacks
 * DEVRT_ERROR_NO_KERNEL. A file that cannot be read, or a code object that is not one, is
 * DEVRT_ERROR_IMAGE ("PATH: No such file or directory"). Other images say what their
 * kernels take only once loaded; devrt_launch checks those.
 */
int devrt_image_check_args(const char *path, enum devrt_backend backend, const char *kernel,
                           const struct devrt_arg *args, size_t arg_count);

/*
 * Run KERNEL and wait for it, serving its requests meanwhile. Arguments that do not fit the
 * kernel's parameters, where the image records them, are refused with DEVRT_ERROR_ARGUMENTS
 * before anything runs. On DEVRT_ERROR_EXCEPTION or
 * DEVRT_ERROR_DEVICE_REQUEST, *report (if given) says what happened, and the report line
 * has been written to the module's report file after the kernel's output. The next launch
 * starts clean.
 */
int devrt_launch(devrt_module *module, const char *kernel, const struct devrt_launch_config *config,
                 const struct devrt_arg *args, size_t arg_count,
                 struct devrt_launch_report *report);

/*
 * Asynchronous launches. devrt_launch_async checks what devrt_launch checks before anything
 * runs (the same statuses), queues KERNEL on STREAM (NULL: the device's default stream) and
 * returns once it is queued, with its id in *launch (ids are never 0, never reused on a
 * device). ARGS are taken when it returns: the caller may reuse them.
 *
 * Order. Launches of one stream run one after another in the order queued; launches of one
 * module run one at a time, in the order queued, whatever their streams; launches of
 * different modules on different streams may run at once. devrt_launch runs after every
 * launch of its module queued before it.
 *
 * Reports. devrt_launch_wait waits for one launch, devrt_stream_wait for every launch
 * queued on STREAM (NULL: the default stream) so far; both serve requests meanwhile and
 * report as devrt_launch does: DEVRT_ERROR_EXCEPTION or DEVRT_ERROR_DEVICE_REQUEST with
 * *report (if given) filled in, report->launch naming the launch, and the report line
 * ("kernel K (launch N) raised ...") written to the module's report file after every unit
 * of output the module's kernels sent before the launch ended. devrt_stream_wait writes
 * the line of every launch that failed, in order, and returns the first one's status and
 * report. A launch's report is taken once: waiting again for it is
 * DEVRT_ERROR_INVALID_ARGUMENT. Each launch has a record of its own, so a report names the
 * launch that raised it however many are in flight; a malformed request is told with the
 * first launch of its module whose report is taken after the server refused it.
 *
 * devrt_module_unload waits for the module's launches first; their reports (written then)
 * stay to be taken by a wait, and a wait already under way in another thread keeps its
 * launch (the unload waits for that wait). devrt_stream_destroy waits for the stream's launches,
 * writes their report lines and drops them; devrt_device_close destroys every stream.
 */
int devrt_stream_create(devrt_device *device, devrt_stream **stream);
void devrt_stream_destroy(devrt_stream *stream);
int devrt_launch_async(devrt_module *module, const char *kernel,
                       const struct devrt_launch_config *config, const struct devrt_arg *args,
                       size_t arg_count, devrt_stream *stream, uint64_t *launch);
int devrt_launch_wait(devrt_device *device, uint64_t launch, struct devrt_launch_report *report);
int devrt_stream_wait(devrt_device *device, devrt_stream *stream,
                      struct devrt_launch_report *report);

/* The module's device heap, as the device last left it. */
int devrt_heap_stats(devrt_module *module, struct devrt_heap_stats *stats);

/* Host calls: devrt_hostcall(service, ...) on the device runs FN on the host. */
typedef uint64_t devrt_hostcall_fn(void *context, uint32_t service, const void *data, size_t size);
int devrt_register_hostcall(devrt_device *device, uint32_t service, devrt_hostcall_fn *fn,
                            void *context);

const char *devrt_status_string(int status);
const char *devrt_last_error(void);
const char *devrt_exception_name(uint32_t code);

#ifdef __cplusplus
}
#endif

#endif
