/*
 * The host-emulation backend: a kernel image is a shared object built from kernel C with
 * the device library compiled for the host (libdevrt_emu). Here are its memory, its
 * configuration and the checks of a launch's arguments; the loading of images is
 * emu_image.c's, the lanes that run a launch are emu_waves.c's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <ffi.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <devrt/emu.h>

#include "emu_ffi.h"
#include "emu_image.h"
#include "emu_waves.h"
#include "backend.h"
#include "codeobject.h"

struct emu_device {
    uint32_t wave_size;
    uint32_t schedule; /* enum devrt_emu_schedule, never DEFAULT */
    uint64_t seed;
    uint64_t launches; /* so that each launch of the random schedule draws anew */
};

/*
 * The emulation's memory: small blocks from malloc, zeroed; blocks from 64 KiB on are pages
 * of their own, which the kernel zeroes when they are first touched. A module's heap
 * reserve and RPC buffers, megabytes, then cost nothing at load until they are used, as on
 * a GPU, whose allocator writes nothing either. A header before the block says which.
 */
#define EMU_HEADER 256u /* also the blocks' alignment, as cuMemAlloc's */
#define EMU_MAPPED_FROM (64u << 10)

struct emu_block {
    size_t size; /* of the whole allocation, header included */
    bool mapped;
};

static void *emu_alloc(devrt_device *device, size_t size, enum devrt_memory memory)
{
    (void)device;
    (void)memory;
    size_t rounded = (size + EMU_HEADER - 1) / EMU_HEADER * EMU_HEADER;
    bool mapped = rounded >= EMU_MAPPED_FROM;
    char *base;
    if (mapped) {
        base = mmap(NULL, rounded + EMU_HEADER, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
        if (base == MAP_FAILED)
            return NULL;
    } else {
        base = aligned_alloc(EMU_HEADER, rounded + EMU_HEADER);
        if (!base)
            return NULL;
        memset(base + EMU_HEADER, 0, rounded);
    }
    *(struct emu_block *)base = (struct emu_block){rounded + EMU_HEADER, mapped};
    return base + EMU_HEADER;
}

static void emu_free(devrt_device *device, void *ptr, enum devrt_memory memory)
{
    (void)device;
    (void)memory;
    if (!ptr)
        return;
    char *base = (char *)ptr - EMU_HEADER;
    struct emu_block block = *(struct emu_block *)base;
    if (block.mapped)
        munmap(base, block.size);
    else
        free(base);
}

/* A copy that reports an address the device made up instead of faulting on it. */
static int emu_copy(void *dst, const void *src, size_t size)
{
    struct iovec local = {dst, size};
    struct iovec remote = {(void *)src, size};
    ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (n == (ssize_t)size)
        return 0;
    if (n < 0 && errno == EPERM) { /* no permission to read ourselves: trust the address */
        memcpy(dst, src, size);
        return 0;
    }
    return -1;
}

/*
 * A copy of device memory on the path that serves the device would be work on a GPU (a
 * blit on HSA), which can wait behind the kernel whose waves wait for the reply, and then
 * neither ends. The emulation has no such queue, so it refuses the copy instead, and every
 * emulation test shows a handler that makes one.
 */
static int refuse_while_serving(devrt_device *device, const char *what)
{
    if (!devrt_server_serving(device))
        return 0;
    devrt_fail(DEVRT_ERROR_BACKEND,
               "the emulation refuses to %s device memory while the server serves a request: on "
               "a GPU that copy can wait behind the kernel that waits for the reply",
               what);
    return -1;
}

static int emu_read(devrt_device *device, void *dst, const void *src, size_t size)
{
    if (refuse_while_serving(device, "read") != 0)
        return -1;
    return emu_copy(dst, src, size);
}

/* The server's own reads (raw writes left in place): lanes' memory is the process's. */
static int emu_read_serving(devrt_device *device, void *dst, const void *src, size_t size)
{
    (void)device;
    return emu_copy(dst, src, size);
}

static int emu_write(devrt_device *device, void *dst, const void *src, size_t size)
{
    if (refuse_while_serving(device, "write") != 0)
        return -1;
    memcpy(dst, src, size);
    return 0;
}

static void *emu_alloc(devrt_device *device, size_t size, enum devrt_memory memory);

/* An unsigned number from the environment; *value stays as it is when the variable is unset. */
static int env_number(const char *name, uint64_t *value)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return DEVRT_SUCCESS;
    char *end;
    errno = 0;
    unsigned long long number = strtoull(text, &end, 0);
    if (errno || *end || text[0] == '-')
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "%s=%s: not a number", name, text);
    *value = number;
    return DEVRT_SUCCESS;
}

/* The device options, else the environment (for programs that take no options), else 32 lanes,
 * converged. */
static int emu_configure(const struct devrt_device_options *options, struct emu_device *emu)
{
    uint64_t wave = options->emu_wave_size ? options->emu_wave_size : 32;
    uint64_t seed = options->emu_seed ? options->emu_seed : 1;
    emu->schedule = options->emu_schedule;
    int status = DEVRT_SUCCESS;
    if (!options->emu_wave_size)
        status = env_number("DEVRT_EMU_WAVE", &wave);
    if (status == DEVRT_SUCCESS && !options->emu_seed)
        status = env_number("DEVRT_EMU_SEED", &seed);
    if (status != DEVRT_SUCCESS)
        return status;
    const char *schedule = getenv("DEVRT_EMU_SCHEDULE");
    if (emu->schedule == DEVRT_EMU_SCHEDULE_DEFAULT && schedule && *schedule) {
        if (!strcmp(schedule, "converged"))
            emu->schedule = DEVRT_EMU_SCHEDULE_CONVERGED;
        else if (!strcmp(schedule, "random"))
            emu->schedule = DEVRT_EMU_SCHEDULE_RANDOM;
        else
            return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                              "DEVRT_EMU_SCHEDULE=%s: expected converged or random", schedule);
    }
    if (emu->schedule == DEVRT_EMU_SCHEDULE_DEFAULT)
        emu->schedule = DEVRT_EMU_SCHEDULE_CONVERGED;
    if (emu->schedule > DEVRT_EMU_SCHEDULE_RANDOM)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "unknown emulation schedule %u",
                          emu->schedule);
    if (wave != 1 && wave != 32 && wave != 64)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "the emulation's waves are 1, 32 or 64 lanes wide, not %llu",
                          (unsigned long long)wave);
    emu->wave_size = (uint32_t)wave;
    emu->seed = seed;
    return DEVRT_SUCCESS;
}

/*
 * The emulation offers as many devices as asked for (the option, else $DEVRT_EMU_DEVICES,
 * else one): a program that opens several GPUs is tested on the host. Each is a device of
 * its own; only what the host gives every device (memory, threads) is shared.
 */
#define DEVRT_EMU_MAX_DEVICES 64u

static int emu_open(devrt_device *device, int index)
{
    const struct devrt_device_options *options = devrt_device_open_options(device);
    uint64_t devices = options->emu_devices ? options->emu_devices : 1;
    int status = options->emu_devices ? DEVRT_SUCCESS : env_number("DEVRT_EMU_DEVICES", &devices);
    if (status != DEVRT_SUCCESS)
        return status;
    if (devices == 0 || devices > DEVRT_EMU_MAX_DEVICES)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "the emulation offers 1 to %u devices, not %llu", DEVRT_EMU_MAX_DEVICES,
                          (unsigned long long)devices);
    if (index < 0 || (uint64_t)index >= devices)
        return devrt_fail(DEVRT_ERROR_NO_DEVICE,
                          "the emulation has no device %d (it has %llu: the emu_devices option "
                          "or $DEVRT_EMU_DEVICES sets how many)",
                          index, (unsigned long long)devices);
    struct emu_device *emu = calloc(1, sizeof *emu);
    if (!emu)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for the device");
    status = emu_configure(options, emu);
    if (status != DEVRT_SUCCESS) {
        free(emu);
        return status;
    }
    devrt_device_set_wave_size(device, emu->wave_size);
    struct devrt_rpc_doorbell *doorbell = emu_alloc(device, sizeof *doorbell, DEVRT_MEMORY_HOST);
    devrt_device_set_doorbell(device, doorbell);
    if (!doorbell) {
        free(emu);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for the doorbell");
    }
    devrt_device_set_backend_state(device, emu);
    /* The first backtrace loads the unwinder: here, once, rather than in racing lanes. */
    void *frame;
    backtrace(&frame, 1);
    return DEVRT_SUCCESS;
}

static void emu_describe(const devrt_device *device, struct devrt_device_info *info)
{
    (void)device;
    snprintf(info->name, sizeof info->name, "host");
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    info->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

static void emu_close(devrt_device *device)
{
    emu_free(device, devrt_device_doorbell(device), DEVRT_MEMORY_HOST);
    free(devrt_device_backend_state(device));
}

/* The image's symbol PREFIX followed by KERNEL's name, or NULL. */
static void *kernel_symbol(struct emu_module *m, const char *prefix, const char *kernel)
{
    char name[strlen(prefix) + strlen(kernel) + 1];
    snprintf(name, sizeof name, "%s%s", prefix, kernel);
    return dlsym(m->handle, name);
}

/* The image's kinds are passed on as they are. */
_Static_assert((int)DEVRT_EMU_KIND_POINTER == (int)DEVRT_PARAM_POINTER &&
                   (int)DEVRT_EMU_KIND_SIGNED == (int)DEVRT_PARAM_SIGNED &&
                   (int)DEVRT_EMU_KIND_UNSIGNED == (int)DEVRT_PARAM_UNSIGNED &&
                   (int)DEVRT_EMU_KIND_FLOAT == (int)DEVRT_PARAM_FLOAT &&
                   (int)DEVRT_EMU_KIND_VALUE == (int)DEVRT_PARAM_VALUE,
               "the emulation's kinds are devrt_param_kind's");

/*
 * What DEVRT_KERNELn recorded: the call would otherwise read registers or stack that no
 * argument was put in. A kernel without DEVRT_KERNELn's caller (a plain function, or an
 * image built against an older devrt) is called through libffi, which cannot pass a struct
 * by value: how the host ABI passes one depends on its fields' types.
 */
static int emu_describe_kernel(devrt_module *module, const char *kernel,
                               struct devrt_kernel_description *description)
{
    struct emu_module *m = devrt_module_backend_state(module);
    if (!dlsym(m->handle, kernel))
        return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s: no kernel %s", devrt_module_path(module),
                          kernel);
    if (!kernel_symbol(m, DEVRT_EMU_CALL_PREFIX, kernel))
        description->no_bytes_by_value = "which the emulation passes only to kernels declared "
                                         "with DEVRT_KERNELn against this devrt";
    const struct devrt_emu_signature *signature =
        kernel_symbol(m, DEVRT_EMU_SIGNATURE_PREFIX, kernel);
    if (!signature)
        return DEVRT_SUCCESS; /* declared with DEVRT_KERNEL alone: nothing recorded */
    if (signature->count > DEVRT_EMU_MAX_PARAMETERS)
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s: the signature of kernel %s says %u parameters",
                          devrt_module_path(module), kernel, signature->count);
    description->param_sizes = signature->size;
    description->param_count = signature->count;
    /* Only images built against a devrt that records kinds have them. */
    const struct devrt_emu_parameters *parameters =
        kernel_symbol(m, DEVRT_EMU_PARAMETERS_PREFIX, kernel);
    if (parameters && parameters->count != signature->count)
        return devrt_fail(DEVRT_ERROR_IMAGE,
                          "%s: kernel %s has %u parameters by its signature, %u by its kinds",
                          devrt_module_path(module), kernel, signature->count, parameters->count);
    if (parameters) {
        description->param_kinds = parameters->kind;
        description->param_names = parameters->name;
    }
    return DEVRT_SUCCESS;
}

#define EMU_ARG_ALIGN 64u

/* SIZE rounded up to whole EMU_ARG_ALIGN units. */
static size_t aligned_size(size_t size)
{
    return (size + EMU_ARG_ALIGN - 1) / EMU_ARG_ALIGN * EMU_ARG_ALIGN;
}

static int emu_launch(devrt_module *module, const char *kernel,
                      const struct devrt_launch_config *config, const struct devrt_arg *args,
                      size_t arg_count)
{
    struct emu_module *m = devrt_module_backend_state(module);
    void (*fn)(void) = (void (*)(void))dlsym(m->handle, kernel);
    if (!fn)
        return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s: no kernel %s", devrt_module_path(module),
                          kernel);
    /* Its arguments passed describe_kernel's check (launch.c). */
    devrt_emu_call_fn *call = (devrt_emu_call_fn *)kernel_symbol(m, DEVRT_EMU_CALL_PREFIX, kernel);

    void *values[arg_count ? arg_count : 1];
    ffi_type *types[arg_count ? arg_count : 1];
    /*
     * The caller reads a struct through a pointer to its type, and the bytes given may sit
     * anywhere: each is copied to where any type up to a cache line's alignment may be read
     * (vector types of AVX-512 included).
     */
    size_t copies = 0;
    for (size_t i = 0; i < arg_count; ++i)
        if (args[i].type == DEVRT_ARG_BYTES)
            copies += aligned_size(args[i].size);
    unsigned char *copy = copies ? aligned_alloc(EMU_ARG_ALIGN, copies) : NULL;
    if (copies && !copy)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for %s's arguments", kernel);
    for (size_t i = 0, at = 0; i < arg_count; ++i) {
        values[i] = (void *)devrt_arg_data(&args[i]); /* read only, by libffi or the caller */
        types[i] = devrt_emu_ffi_type(args[i].type);  /* each known: describe_kernel */
        if (args[i].type == DEVRT_ARG_BYTES) {
            values[i] = memcpy(copy + at, values[i], args[i].size);
            at += aligned_size(args[i].size);
        }
    }
    ffi_cif cif;
    if (!call &&
        ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)arg_count, &ffi_type_void, types) != FFI_OK) {
        free(copy);
        return devrt_fail(DEVRT_ERROR_LAUNCH, "cannot prepare a call with %zu arguments",
                          arg_count);
    }

    struct emu_device *emu = devrt_device_backend_state(devrt_module_device(module));
    uint64_t launch = __atomic_fetch_add(&emu->launches, 1u, __ATOMIC_RELAXED);
    struct devrt_emu_grid grid = {
        .enter = m->enter,
        .kernel = fn,
        .call = call,
        .cif = &cif,
        .values = values,
        .block = {config->block[0], config->block[1], config->block[2]},
        .grid = {config->grid[0], config->grid[1], config->grid[2]},
        .wave_size = emu->wave_size,
        .random_seed = emu->schedule == DEVRT_EMU_SCHEDULE_RANDOM
                           ? devrt_emu_random_seed(emu->seed, launch)
                           : 0,
        .deadline = devrt_deadline(config->timeout_ns),
        .cancel = devrt_device_test_stop(devrt_module_device(module)),
    };
    int status = DEVRT_SUCCESS;
    switch (devrt_emu_run_grid(&grid)) {
    case DEVRT_EMU_GRID_DONE: status = DEVRT_SUCCESS; break;
    case DEVRT_EMU_GRID_STOPPED:
        status = devrt_fail(DEVRT_ERROR_TIMEOUT,
                            "kernel %s ran past its timeout of %.3f s: the emulation stopped its "
                            "lanes",
                            kernel, (double)config->timeout_ns / 1e9);
        break;
    case DEVRT_EMU_GRID_NO_MEMORY:
        status =
            devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for the lanes of kernel %s", kernel);
        break;
    case DEVRT_EMU_GRID_NO_THREAD:
        status = devrt_fail(DEVRT_ERROR_LAUNCH, "cannot start a lane thread of kernel %s", kernel);
        break;
    }
    free(copy);
    return status;
}

static uint64_t emu_arm_doorbell(devrt_device *device)
{
    struct devrt_rpc_doorbell *doorbell = devrt_device_doorbell(device);
    __atomic_store_n(&doorbell->sleeping, 1u, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&doorbell->count, __ATOMIC_SEQ_CST);
}

static void emu_wait_doorbell(devrt_device *device, uint64_t armed, uint32_t timeout_ms)
{
    struct devrt_rpc_doorbell *doorbell = devrt_device_doorbell(device);
    if (timeout_ms) {
        struct timespec timeout = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000};
        syscall(SYS_futex, &doorbell->count, FUTEX_WAIT_PRIVATE, (uint32_t)armed, &timeout, NULL,
                0);
    }
    __atomic_store_n(&doorbell->sleeping, 0u, __ATOMIC_SEQ_CST);
}

static void emu_ring_doorbell(devrt_device *device)
{
    struct devrt_rpc_doorbell *doorbell = devrt_device_doorbell(device);
    __atomic_fetch_add(&doorbell->count, 1u, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &doorbell->count, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

const struct devrt_backend_ops devrt_emu_backend = {
    .open = emu_open,
    .close = emu_close,
    .alloc = emu_alloc,
    .free = emu_free,
    .read = emu_read,
    .read_serving = emu_read_serving,
    .write = emu_write,
    .load = devrt_emu_load,
    .unload = devrt_emu_unload,
    .launch = emu_launch,
    .describe_kernel = emu_describe_kernel,
    .stops_kernels = true,
    .arm_doorbell = emu_arm_doorbell,
    .wait_doorbell = emu_wait_doorbell,
    .ring_doorbell = emu_ring_doorbell,
    .describe = emu_describe,
};
