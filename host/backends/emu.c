/*
 * The host-emulation backend: a kernel image is a shared object built from kernel C with
 * the device library compiled for the host (libdevrt_emu). Each lane is a host thread and
 * a wave is one lane; workgroups run side by side up to a bound on live threads.
 */
#include <dlfcn.h>
#include <errno.h>
#include <ffi.h>
#include <limits.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <devrt/emu.h>

#include "runtime.h"

/* Threads alive at once; whole workgroups are started until it is reached. */
#define DEVRT_EMU_MAX_LANES 512u

struct emu_module {
    void *handle;
    devrt_emu_enter_fn *enter;
};

struct emu_group {
    pthread_mutex_t lock;
    pthread_cond_t released;
    uint32_t live;    /* lanes that have not ended */
    uint32_t arrived; /* lanes waiting at the barrier */
    uint64_t generation;
};

struct emu_lane {
    struct devrt_emu_lane lane; /* first: the device sees only this part */
    struct emu_group *group;
    jmp_buf ended;
    void (*kernel)(void);
    ffi_cif *cif;
    void **values;
    devrt_emu_enter_fn *enter;
};

static void *emu_alloc(devrt_device *device, size_t size, enum devrt_memory memory)
{
    (void)device;
    (void)memory;
    size_t rounded = (size + 63) / 64 * 64;
    void *ptr = aligned_alloc(64, rounded);
    if (ptr)
        memset(ptr, 0, rounded);
    return ptr;
}

static void emu_free(devrt_device *device, void *ptr, enum devrt_memory memory)
{
    (void)device;
    (void)memory;
    free(ptr);
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

static int emu_read(devrt_device *device, void *dst, const void *src, size_t size)
{
    (void)device;
    return emu_copy(dst, src, size);
}

static int emu_write(devrt_device *device, void *dst, const void *src, size_t size)
{
    (void)device;
    memcpy(dst, src, size);
    return 0;
}

static void *emu_alloc(devrt_device *device, size_t size, enum devrt_memory memory);

static int emu_open(devrt_device *device, int index)
{
    if (index != 0)
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "the emulation backend has one device, 0");
    device->wave_size = 1;
    device->doorbell = emu_alloc(device, sizeof *device->doorbell, DEVRT_MEMORY_HOST);
    if (!device->doorbell)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for the doorbell");
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
    free(device->doorbell);
}

static int emu_load(devrt_module *module, const char *path, struct devrt_state ***state_variable)
{
    struct emu_module *m = calloc(1, sizeof *m);
    if (!m)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a module");
    /* An image is a file: without a slash dlopen would search the library path instead. */
    char local[4096];
    if (!strchr(path, '/') && snprintf(local, sizeof local, "./%s", path) < (int)sizeof local)
        path = local;
    m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!m->handle) {
        free(m);
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s", dlerror());
    }
    *state_variable = dlsym(m->handle, DEVRT_STATE_SYMBOL);
    m->enter = (devrt_emu_enter_fn *)dlsym(m->handle, DEVRT_EMU_ENTER_SYMBOL);
    if (!*state_variable || !m->enter) {
        dlclose(m->handle);
        free(m);
        return devrt_fail(DEVRT_ERROR_IMAGE,
                          "%s: not an emulation image (no %s or %s); link it with libdevrt_emu",
                          path, DEVRT_STATE_SYMBOL, DEVRT_EMU_ENTER_SYMBOL);
    }
    module->backend = m;
    return DEVRT_SUCCESS;
}

static void emu_unload(devrt_module *module)
{
    struct emu_module *m = module->backend;
    dlclose(m->handle);
    free(m);
}

static void release_barrier(struct emu_group *group)
{
    group->arrived = 0;
    group->generation++;
    pthread_cond_broadcast(&group->released);
}

/* A workgroup barrier that lanes which have ended no longer hold up. */
static void emu_barrier(struct devrt_emu_lane *public_lane)
{
    struct emu_group *group = ((struct emu_lane *)public_lane)->group;
    pthread_mutex_lock(&group->lock);
    uint64_t generation = group->generation;
    if (++group->arrived == group->live)
        release_barrier(group);
    else
        while (generation == group->generation)
            pthread_cond_wait(&group->released, &group->lock);
    pthread_mutex_unlock(&group->lock);
}

__attribute__((noreturn)) static void emu_end_wave(struct devrt_emu_lane *public_lane)
{
    longjmp(((struct emu_lane *)public_lane)->ended, 1);
}

static void lane_ended(struct emu_group *group)
{
    pthread_mutex_lock(&group->lock);
    group->live--;
    if (group->arrived && group->arrived == group->live)
        release_barrier(group);
    pthread_mutex_unlock(&group->lock);
}

static void *lane_main(void *arg)
{
    struct emu_lane *lane = arg;
    lane->enter(&lane->lane);
    if (setjmp(lane->ended) == 0)
        ffi_call(lane->cif, lane->kernel, NULL, lane->values);
    lane_ended(lane->group);
    return NULL;
}

static ffi_type *ffi_type_of(enum devrt_arg_type type)
{
    switch (type) {
    case DEVRT_ARG_POINTER: return &ffi_type_pointer;
    case DEVRT_ARG_I32: return &ffi_type_sint32;
    case DEVRT_ARG_U32: return &ffi_type_uint32;
    case DEVRT_ARG_I64: return &ffi_type_sint64;
    case DEVRT_ARG_U64: return &ffi_type_uint64;
    case DEVRT_ARG_F32: return &ffi_type_float;
    case DEVRT_ARG_F64: return &ffi_type_double;
    }
    return NULL;
}

static uint64_t count3(const uint32_t v[3])
{
    return (uint64_t)v[0] * v[1] * v[2];
}

/* Run `count` workgroups from `first` on, each lane a thread; wait for all of them. */
static int run_groups(struct emu_lane *lanes, struct emu_group *groups, pthread_t *threads,
                      const struct emu_lane *proto, const struct devrt_launch_config *config,
                      uint64_t first, uint64_t count)
{
    uint32_t block = (uint32_t)count3(config->block);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1u << 20);
    size_t started = 0;
    int status = DEVRT_SUCCESS;
    for (uint64_t g = 0; g < count && status == DEVRT_SUCCESS; ++g) {
        uint64_t flat = first + g;
        struct emu_group *group = &groups[g];
        pthread_mutex_init(&group->lock, NULL);
        pthread_cond_init(&group->released, NULL);
        group->live = block;
        group->arrived = 0;
        group->generation = 0;
        for (uint32_t i = 0; i < block; ++i) {
            struct emu_lane *lane = &lanes[g * block + i];
            *lane = *proto;
            lane->group = group;
            lane->lane.workgroup[0] = (uint32_t)(flat % config->grid[0]);
            lane->lane.workgroup[1] = (uint32_t)(flat / config->grid[0] % config->grid[1]);
            lane->lane.workgroup[2] = (uint32_t)(flat / config->grid[0] / config->grid[1]);
            lane->lane.workitem[0] = i % config->block[0];
            lane->lane.workitem[1] = i / config->block[0] % config->block[1];
            lane->lane.workitem[2] = i / config->block[0] / config->block[1];
            if (pthread_create(&threads[started], &attr, lane_main, lane) != 0) {
                /* Lanes that never start must not hold up the barrier of those that did. */
                for (uint32_t rest = i; rest < block; ++rest)
                    lane_ended(group);
                status = devrt_fail(DEVRT_ERROR_LAUNCH, "cannot start lane thread %zu", started);
                break;
            }
            started++;
        }
    }
    for (size_t i = 0; i < started; ++i)
        pthread_join(threads[i], NULL);
    pthread_attr_destroy(&attr);
    for (uint64_t g = 0; g < count; ++g) {
        pthread_mutex_destroy(&groups[g].lock);
        pthread_cond_destroy(&groups[g].released);
    }
    return status;
}

/*
 * Against the signature DEVRT_KERNELn recorded: the call through libffi would otherwise
 * read registers or stack that no argument was put in.
 */
static int check_signature(devrt_module *module, const char *kernel, const struct devrt_arg *args,
                           size_t arg_count)
{
    struct emu_module *m = module->backend;
    size_t length = sizeof DEVRT_EMU_SIGNATURE_PREFIX + strlen(kernel);
    char *name = malloc(length);
    if (!name)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a symbol name");
    snprintf(name, length, "%s%s", DEVRT_EMU_SIGNATURE_PREFIX, kernel);
    const struct devrt_emu_signature *signature = dlsym(m->handle, name);
    free(name);
    if (!signature)
        return DEVRT_SUCCESS; /* declared with DEVRT_KERNEL alone: nothing recorded */
    if (signature->count > DEVRT_EMU_MAX_PARAMETERS)
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s: the signature of kernel %s says %u parameters",
                          module->path, kernel, signature->count);
    return devrt_check_arguments(kernel, signature->size, signature->count, args, arg_count);
}

static int emu_launch(devrt_module *module, const char *kernel,
                      const struct devrt_launch_config *config, const struct devrt_arg *args,
                      size_t arg_count)
{
    struct emu_module *m = module->backend;
    void (*fn)(void) = (void (*)(void))dlsym(m->handle, kernel);
    if (!fn)
        return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s: no kernel %s", module->path, kernel);
    int status = check_signature(module, kernel, args, arg_count);
    if (status != DEVRT_SUCCESS)
        return status;

    ffi_type *types[arg_count ? arg_count : 1];
    void *values[arg_count ? arg_count : 1];
    for (size_t i = 0; i < arg_count; ++i) {
        types[i] = ffi_type_of(args[i].type);
        if (!types[i])
            return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "argument %zu has no known type", i);
        values[i] = (void *)&args[i].value;
    }
    ffi_cif cif;
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)arg_count, &ffi_type_void, types) != FFI_OK)
        return devrt_fail(DEVRT_ERROR_LAUNCH, "cannot prepare a call with %zu arguments",
                          arg_count);

    struct emu_lane proto = {
        .lane = {.workgroup_size = {config->block[0], config->block[1], config->block[2]},
                 .num_workgroups = {config->grid[0], config->grid[1], config->grid[2]},
                 .barrier = emu_barrier,
                 .end_wave = emu_end_wave},
        .kernel = fn,
        .cif = &cif,
        .values = values,
        .enter = m->enter,
    };
    uint64_t block = count3(config->block);
    uint64_t groups_total = count3(config->grid);
    uint64_t per_batch = block >= DEVRT_EMU_MAX_LANES ? 1 : DEVRT_EMU_MAX_LANES / block;
    if (per_batch > groups_total)
        per_batch = groups_total;
    struct emu_lane *lanes = calloc(per_batch * block, sizeof *lanes);
    struct emu_group *groups = calloc(per_batch, sizeof *groups);
    pthread_t *threads = calloc(per_batch * block, sizeof *threads);
    if (!lanes || !groups || !threads)
        status = devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for %llu lanes",
                            (unsigned long long)(per_batch * block));
    for (uint64_t first = 0; status == DEVRT_SUCCESS && first < groups_total; first += per_batch) {
        uint64_t count = groups_total - first < per_batch ? groups_total - first : per_batch;
        status = run_groups(lanes, groups, threads, &proto, config, first, count);
    }
    free(lanes);
    free(groups);
    free(threads);
    return status;
}

static uint64_t emu_arm_doorbell(devrt_device *device)
{
    __atomic_store_n(&device->doorbell->sleeping, 1u, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&device->doorbell->count, __ATOMIC_SEQ_CST);
}

static void emu_wait_doorbell(devrt_device *device, uint64_t armed, uint32_t timeout_ms)
{
    if (timeout_ms) {
        struct timespec timeout = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000};
        syscall(SYS_futex, &device->doorbell->count, FUTEX_WAIT_PRIVATE, (uint32_t)armed, &timeout,
                NULL, 0);
    }
    __atomic_store_n(&device->doorbell->sleeping, 0u, __ATOMIC_SEQ_CST);
}

static void emu_ring_doorbell(devrt_device *device)
{
    __atomic_fetch_add(&device->doorbell->count, 1u, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &device->doorbell->count, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

const struct devrt_backend_ops devrt_emu_backend = {
    .kind = DEVRT_BACKEND_EMU,
    .open = emu_open,
    .close = emu_close,
    .alloc = emu_alloc,
    .free = emu_free,
    .read = emu_read,
    .write = emu_write,
    .load = emu_load,
    .unload = emu_unload,
    .launch = emu_launch,
    .arm_doorbell = emu_arm_doorbell,
    .wait_doorbell = emu_wait_doorbell,
    .ring_doorbell = emu_ring_doorbell,
    .describe = emu_describe,
};
