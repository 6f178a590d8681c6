/*
 * The host-emulation backend: a kernel image is a shared object built from kernel C with
 * the device library compiled for the host (libdevrt_emu). Each lane is a host thread; a
 * wave is 1, 32 or 64 of them, scheduled independently; workgroups run side by side up to
 * a bound on live threads.
 *
 * Lanes of a wave meet at every lane-mask operation (device/arch/emu.h) in a gathering,
 * under the wave's lock. A gathering over an explicit mask closes once every live lane of
 * the mask is in it. A gathering where lanes take the active mask (implicitly) is keyed
 * by the caller's whole call stack, the call site it would be once everything is inlined
 * as on a GPU, and closes once every other live lane of the wave is held elsewhere (in
 * another gathering, at the barrier, or sleeping in a poll): it never waits for a lane
 * that cannot come. The random schedule also closes it early, with whoever is there.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <ffi.h>
#include <limits.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <signal.h>
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
#include "runtime.h"

/* Threads alive at once; whole workgroups are started until it is reached. */
#define DEVRT_EMU_MAX_LANES 512u

struct emu_device {
    uint32_t wave_size;
    uint32_t schedule; /* enum devrt_emu_schedule, never DEFAULT */
    uint64_t seed;
    uint64_t launches; /* so that each launch of the random schedule draws anew */
};

struct emu_module {
    void *handle;
    devrt_emu_enter_fn *enter;
    int copy; /* the private copy the image was loaded from (open_copy), else -1 */
    struct devrt_state **state_variable;
    struct emu_module *next_loaded; /* among every module loaded, on any device */
};

struct emu_group {
    pthread_mutex_t lock;
    pthread_cond_t released;
    uint32_t live;    /* lanes that have not ended */
    uint32_t arrived; /* lanes waiting at the barrier */
    uint64_t generation;
};

/* Lanes of one wave meeting at one lane-mask operation. */
struct emu_gathering {
    struct emu_gathering *next; /* among the wave's open gatherings */
    uint64_t site;              /* taking the active mask: the call stack's hash, else 0 */
    uint64_t mask;              /* over an explicit mask: the mask, else 0 */
    uint64_t present;
    uint64_t ballot;
    uint32_t first; /* the value of the lowest lane present */
    uint32_t first_lane;
    uint32_t readers; /* lanes present that have not yet taken the result */
    bool closed;
};

struct emu_lane;

/*
 * Stopping a launch past its timeout. Lanes stop at their next call into the runtime (a
 * lane-mask operation, the barrier, a poll's sleep), and a lane running kernel code alone,
 * a bare spin loop for instance, is sent EMU_STOP_SIGNAL, whose handler ends it there. A
 * lane inside the runtime holds its locks, so the handler leaves it to stop on its way out.
 */
#define EMU_STOP_SIGNAL (SIGRTMIN + 4)

struct emu_stop {
    pthread_mutex_t lock;
    pthread_cond_t lane_ended;
    uint64_t running; /* lane threads started that have not ended; under lock */
    bool stopped;     /* atomic: the lanes must end */
};

/* Every field is under lock. Bits are lanes of the wave. */
struct emu_wave {
    pthread_mutex_t lock;
    uint64_t live;       /* lanes that have not ended */
    uint64_t waiting;    /* lanes held in a gathering or at the barrier */
    uint64_t at_barrier; /* of those, the ones at the barrier */
    uint64_t slept;      /* lanes that slept in a poll since they last met others */
    struct emu_gathering *open;
    uint64_t random; /* the random schedule's generator; 0 when converged */
    struct emu_lane *lane[64];
};

struct emu_lane {
    struct devrt_emu_lane lane; /* first: the device sees only this part */
    struct emu_group *group;
    struct emu_wave *wave;
    pthread_cond_t woken; /* signalled when a gathering of this lane closes */
    bool slept;           /* this lane's own copy of its bit in wave->slept */
    uint64_t random;      /* for the random schedule's delays; 0 when converged */
    jmp_buf ended;
    struct emu_stop *stop;
    volatile sig_atomic_t in_runtime; /* in a call into the runtime: no stop by signal */
    bool done;                        /* the thread has ended; under stop->lock */
    void (*kernel)(void);
    devrt_emu_call_fn *call; /* DEVRT_KERNELn's caller; NULL: through libffi (cif) */
    ffi_cif *cif;
    void **values;
    devrt_emu_enter_fn *enter;
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
    uint64_t devices = device->options.emu_devices ? device->options.emu_devices : 1;
    int status =
        device->options.emu_devices ? DEVRT_SUCCESS : env_number("DEVRT_EMU_DEVICES", &devices);
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
    status = emu_configure(&device->options, emu);
    if (status != DEVRT_SUCCESS) {
        free(emu);
        return status;
    }
    device->wave_size = emu->wave_size;
    device->doorbell = emu_alloc(device, sizeof *device->doorbell, DEVRT_MEMORY_HOST);
    if (!device->doorbell) {
        free(emu);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for the doorbell");
    }
    device->backend = emu;
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
    emu_free(device, device->doorbell, DEVRT_MEMORY_HOST);
    free(device->backend);
}

/*
 * dlopen maps a file once per process, so a second module of an image already loaded (on
 * this device or another) would share the first one's __devrt_state, and with it the first
 * module's channel and heap. Such an image is loaded again from a private copy, as a GPU
 * loads each module into memory of its own. dlopen also takes a name it has mapped already
 * for the same object: the copy's name, /proc/self/fd/N, stays unique only while N stays
 * open, so the copy's descriptor lives as long as the module. Every load is checked against
 * the modules loaded (loaded_modules), whatever the reason two could share a state. The
 * lock makes "loaded already?", the load and the check one step for threads loading at once.
 */
static pthread_mutex_t image_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_module *loaded_modules; /* under image_lock */

/* dlopen a copy of PATH in an anonymous file, which no other load can share. */
static void *open_copy(const char *path, int *copy)
{
    int in = open(path, O_RDONLY | O_CLOEXEC);
    int out = memfd_create("devrt-emu-image", MFD_CLOEXEC);
    void *handle = NULL;
    char buffer[65536], name[64];
    ssize_t n = 0;
    if (in >= 0 && out >= 0) {
        while ((n = read(in, buffer, sizeof buffer)) > 0)
            if (write(out, buffer, (size_t)n) != n) {
                n = -1;
                break;
            }
    }
    if (in < 0 || out < 0 || n < 0) {
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: cannot copy it to load it a second time: %s", path,
                   strerror(errno));
    } else {
        snprintf(name, sizeof name, "/proc/self/fd/%d", out);
        handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            devrt_fail(DEVRT_ERROR_IMAGE, "%s (a copy of %s)", dlerror(), path);
    }
    if (in >= 0)
        close(in);
    if (handle) {
        *copy = out;
    } else if (out >= 0) {
        close(out);
    }
    return handle;
}

/* Whether a module loaded already has the state variable at STATE; under image_lock. */
static bool state_taken(struct devrt_state **state)
{
    for (const struct emu_module *m = loaded_modules; m; m = m->next_loaded)
        if (m->state_variable == state)
            return true;
    return false;
}

static int open_image(struct emu_module *m, const char *path)
{
    void *loaded = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (loaded) {
        dlclose(loaded); /* RTLD_NOLOAD counted a reference too */
        m->handle = open_copy(path, &m->copy);
    } else {
        m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!m->handle)
            devrt_fail(DEVRT_ERROR_IMAGE, "%s", dlerror());
    }
    if (!m->handle)
        return DEVRT_ERROR_IMAGE;
    m->state_variable = dlsym(m->handle, DEVRT_STATE_SYMBOL);
    m->enter = (devrt_emu_enter_fn *)dlsym(m->handle, DEVRT_EMU_ENTER_SYMBOL);
    int status = DEVRT_SUCCESS;
    if (!m->state_variable || !m->enter)
        status = devrt_fail(DEVRT_ERROR_IMAGE,
                            "%s: not an emulation image (no %s or %s); link it with libdevrt_emu",
                            path, DEVRT_STATE_SYMBOL, DEVRT_EMU_ENTER_SYMBOL);
    else if (state_taken(m->state_variable))
        status = devrt_fail(DEVRT_ERROR_IMAGE,
                            "%s: the loader gave this module the %s of a module loaded already; "
                            "their channels and heaps would be one",
                            path, DEVRT_STATE_SYMBOL);
    return status;
}

static void close_image(struct emu_module *m)
{
    if (m->handle)
        dlclose(m->handle);
    if (m->copy >= 0)
        close(m->copy);
}

static int emu_load(devrt_module *module, const char *path, struct devrt_state ***state_variable)
{
    struct emu_module *m = calloc(1, sizeof *m);
    if (!m)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a module");
    m->copy = -1;
    /* An image is a file: without a slash dlopen would search the library path instead. */
    char local[4096];
    if (!strchr(path, '/') && snprintf(local, sizeof local, "./%s", path) < (int)sizeof local)
        path = local;
    pthread_mutex_lock(&image_lock);
    int status = open_image(m, path);
    if (status == DEVRT_SUCCESS) {
        m->next_loaded = loaded_modules;
        loaded_modules = m;
    }
    pthread_mutex_unlock(&image_lock);
    if (status != DEVRT_SUCCESS) {
        close_image(m);
        free(m);
        return status;
    }
    *state_variable = m->state_variable;
    module->backend = m;
    return DEVRT_SUCCESS;
}

static void emu_unload(devrt_module *module)
{
    struct emu_module *m = module->backend;
    pthread_mutex_lock(&image_lock);
    for (struct emu_module **p = &loaded_modules; *p; p = &(*p)->next_loaded)
        if (*p == m) {
            *p = m->next_loaded;
            break;
        }
    close_image(m);
    pthread_mutex_unlock(&image_lock);
    free(m);
}

static uint64_t next_random(uint64_t *state)
{
    /* xorshift64: enough to vary groupings, and reproducible from the seed. */
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return (x ^ (x >> 31)) | 1; /* never 0, the converged schedule's mark */
}

/*
 * Where the caller takes the active mask: its whole call stack, hashed. Device functions
 * are not inlined on the host as they are on a GPU, so lanes calling one function from
 * different places would otherwise meet inside it and share a mask that their callers
 * then use apart.
 */
static uint64_t call_site(void)
{
    void *frames[64];
    int count = backtrace(frames, 64);
    uint64_t hash = 0xcbf29ce484222325ull;
    for (int i = 0; i < count; ++i)
        hash = (hash ^ (uint64_t)(uintptr_t)frames[i]) * 0x100000001b3ull;
    return hash | 1;
}

static bool can_close(const struct emu_wave *wave, const struct emu_gathering *gathering)
{
    uint64_t missing = wave->live & ~gathering->present;
    if (gathering->mask)
        return (missing & gathering->mask) == 0;
    return (missing & ~(wave->waiting | wave->slept)) == 0;
}

static void close_gathering(struct emu_wave *wave, struct emu_gathering **link)
{
    struct emu_gathering *gathering = *link;
    *link = gathering->next;
    gathering->closed = true;
    /* Let go, not held: until each wakes, a wave-mate's next gathering must wait for it. */
    wave->waiting &= ~gathering->present;
    for (uint64_t lanes = gathering->present; lanes; lanes &= lanes - 1)
        pthread_cond_signal(&wave->lane[__builtin_ctzll(lanes)]->woken);
}

/* After any change in the wave: close every gathering that waits for no one who can come. */
static void settle(struct emu_wave *wave)
{
    for (struct emu_gathering **link = &wave->open; *link;) {
        if (can_close(wave, *link))
            close_gathering(wave, link);
        else
            link = &(*link)->next;
    }
}

/*
 * Every live lane waits in a gathering that cannot close: the lanes of some explicit mask
 * wait for one another at different operations. A GPU would hang; say where, and stop.
 */
static void check_deadlock(struct emu_wave *wave, const struct emu_lane *lane)
{
    /* A closed gathering lets its lanes go at once: every waiting lane is in an open one. */
    if (!wave->open || (wave->live & ~wave->waiting) || wave->at_barrier)
        return;
    fprintf(stderr,
            "devrt emu: the lanes of a wave of workgroup (%u,%u,%u) wait for each other "
            "forever:\n",
            lane->lane.workgroup[0], lane->lane.workgroup[1], lane->lane.workgroup[2]);
    for (const struct emu_gathering *g = wave->open; g; g = g->next)
        fprintf(stderr, "  lanes %#llx wait over mask %#llx\n", (unsigned long long)g->present,
                (unsigned long long)g->mask);
    abort();
}

__attribute__((noreturn)) static void emu_end_wave(struct devrt_emu_lane *public_lane);

/* A call into the runtime begins: a stop signal now waits for runtime_leave. */
static void runtime_enter(struct emu_lane *lane)
{
    lane->in_runtime = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * The call ends. Left first, then checked: a signal either finds the lane out of the
 * runtime and ends it, or came before, and the check sees the stop it followed.
 */
static void runtime_leave(struct emu_lane *lane)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    lane->in_runtime = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&lane->stop->stopped, __ATOMIC_ACQUIRE))
        emu_end_wave(&lane->lane);
}

static void emu_meet(struct devrt_emu_lane *public_lane, uint64_t mask, int predicate,
                     uint32_t value, struct devrt_emu_meeting *out)
{
    struct emu_lane *lane = (struct emu_lane *)public_lane;
    struct emu_wave *wave = lane->wave;
    uint32_t id = public_lane->lane_id;
    uint64_t bit = 1ull << id;
    if (mask && !(mask & bit)) {
        fprintf(stderr,
                "devrt emu: lane %u takes part in an operation over mask %#llx, which "
                "does not name it\n",
                id, (unsigned long long)mask);
        abort();
    }
    runtime_enter(lane);
    uint64_t site = mask ? 0 : call_site();
    /* Vary who arrives first. */
    if (lane->random && next_random(&lane->random) & 1)
        sched_yield();

    pthread_mutex_lock(&wave->lock);
    struct emu_gathering *gathering = wave->open;
    while (gathering && (gathering->site != site || gathering->mask != mask))
        gathering = gathering->next;
    if (!gathering) {
        gathering = calloc(1, sizeof *gathering);
        if (!gathering) {
            fprintf(stderr, "devrt emu: no memory for lanes to meet\n");
            abort();
        }
        gathering->site = site;
        gathering->mask = mask;
        gathering->first_lane = UINT32_MAX;
        gathering->next = wave->open;
        wave->open = gathering;
    }
    gathering->present |= bit;
    gathering->readers++;
    if (predicate)
        gathering->ballot |= bit;
    if (id < gathering->first_lane) {
        gathering->first_lane = id;
        gathering->first = value;
    }
    wave->waiting |= bit;
    wave->slept &= ~bit;
    lane->slept = false;
    if (!mask && wave->random && next_random(&wave->random) % 4 == 0) {
        struct emu_gathering **link = &wave->open;
        while (*link != gathering)
            link = &(*link)->next;
        close_gathering(wave, link);
    }
    settle(wave);
    check_deadlock(wave, lane);
    while (!gathering->closed)
        pthread_cond_wait(&lane->woken, &wave->lock);
    *out = (struct devrt_emu_meeting){gathering->present, gathering->ballot, gathering->first};
    if (--gathering->readers == 0)
        free(gathering);
    pthread_mutex_unlock(&wave->lock);
    runtime_leave(lane);
}

static void emu_sleep(struct devrt_emu_lane *public_lane)
{
    struct emu_lane *lane = (struct emu_lane *)public_lane;
    runtime_enter(lane);
    if (!lane->slept && lane->lane.wave_size > 1) { /* else the wave knows already */
        struct emu_wave *wave = lane->wave;
        pthread_mutex_lock(&wave->lock);
        wave->slept |= 1ull << public_lane->lane_id;
        lane->slept = true;
        settle(wave);
        pthread_mutex_unlock(&wave->lock);
    }
    runtime_leave(lane);
}

static void release_barrier(struct emu_group *group)
{
    group->arrived = 0;
    group->generation++;
    pthread_cond_broadcast(&group->released);
}

/* Whether the lane is held at the barrier, for the gatherings of its wave-mates. */
static void mark_barrier(struct emu_lane *lane, bool held)
{
    struct emu_wave *wave = lane->wave;
    uint64_t bit = 1ull << lane->lane.lane_id;
    pthread_mutex_lock(&wave->lock);
    if (held) {
        wave->waiting |= bit;
        wave->at_barrier |= bit;
        settle(wave);
    } else {
        wave->waiting &= ~bit;
        wave->at_barrier &= ~bit;
    }
    pthread_mutex_unlock(&wave->lock);
}

/* A workgroup barrier that lanes which have ended no longer hold up. */
static void emu_barrier(struct devrt_emu_lane *public_lane)
{
    struct emu_lane *lane = (struct emu_lane *)public_lane;
    struct emu_group *group = lane->group;
    runtime_enter(lane);
    mark_barrier(lane, true);
    pthread_mutex_lock(&group->lock);
    uint64_t generation = group->generation;
    if (++group->arrived == group->live)
        release_barrier(group);
    else
        while (generation == group->generation)
            pthread_cond_wait(&group->released, &group->lock);
    pthread_mutex_unlock(&group->lock);
    mark_barrier(lane, false);
    runtime_leave(lane);
}

__attribute__((noreturn)) static void emu_end_wave(struct devrt_emu_lane *public_lane)
{
    longjmp(((struct emu_lane *)public_lane)->ended, 1);
}

/* The lane has ended (or never started): it leaves every later gathering and barrier. */
static void lane_ended(struct emu_lane *lane)
{
    struct emu_wave *wave = lane->wave;
    uint64_t bit = 1ull << lane->lane.lane_id;
    pthread_mutex_lock(&wave->lock);
    wave->live &= ~bit;
    wave->slept &= ~bit;
    settle(wave);
    check_deadlock(wave, lane);
    pthread_mutex_unlock(&wave->lock);

    struct emu_group *group = lane->group;
    pthread_mutex_lock(&group->lock);
    group->live--;
    if (group->arrived && group->arrived == group->live)
        release_barrier(group);
    pthread_mutex_unlock(&group->lock);
}

/* The lane this thread runs, for the stop signal's handler. */
static _Thread_local struct emu_lane *running_lane;
/* What the program had installed for the stop signal: it still gets the signals not ours. */
static struct sigaction program_action;

static void stop_signalled(int signal, siginfo_t *info, void *context)
{
    struct emu_lane *lane = running_lane;
    if (lane && __atomic_load_n(&lane->stop->stopped, __ATOMIC_ACQUIRE)) {
        if (!lane->in_runtime)
            longjmp(lane->ended, 1); /* outside the runtime: no host lock of devrt's is held */
        return;                      /* the lane ends on its way out of the runtime */
    }
    if (program_action.sa_flags & SA_SIGINFO) {
        program_action.sa_sigaction(signal, info, context);
    } else if (program_action.sa_handler == SIG_DFL) {
        /* What the signal would have done without devrt: end the process. */
        struct sigaction fallback = {.sa_handler = SIG_DFL};
        sigemptyset(&fallback.sa_mask);
        sigaction(signal, &fallback, NULL);
        raise(signal);
    } else if (program_action.sa_handler != SIG_IGN) {
        program_action.sa_handler(signal);
    }
}

static void install_stop_handler(void)
{
    /* Read first: a signal that comes as soon as the handler is in finds it. */
    sigaction(EMU_STOP_SIGNAL, NULL, &program_action);
    struct sigaction action = {.sa_sigaction = stop_signalled, .sa_flags = SA_RESTART | SA_SIGINFO};
    sigemptyset(&action.sa_mask);
    sigaction(EMU_STOP_SIGNAL, &action, NULL);
}

static void *lane_main(void *arg)
{
    struct emu_lane *lane = arg;
    lane->in_runtime = 1;
    running_lane = lane;
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, EMU_STOP_SIGNAL);
    pthread_sigmask(SIG_UNBLOCK, &stop, NULL);
    lane->enter(&lane->lane);
    if (setjmp(lane->ended) == 0) {
        lane->in_runtime = 0;
        /* Stopped before it started: it ends here, as at any call into the runtime. */
        if (!__atomic_load_n(&lane->stop->stopped, __ATOMIC_ACQUIRE)) {
            if (lane->call)
                lane->call(lane->values);
            else
                ffi_call(lane->cif, lane->kernel, NULL, lane->values);
        }
    }
    lane->in_runtime = 1;
    lane_ended(lane);
    pthread_mutex_lock(&lane->stop->lock);
    lane->done = true;
    if (--lane->stop->running == 0)
        pthread_cond_signal(&lane->stop->lane_ended);
    pthread_mutex_unlock(&lane->stop->lock);
    return NULL;
}

/*
 * Wait for the STARTED lane threads of THREADS and LANES; past DEADLINE (CLOCK_MONOTONIC
 * nanoseconds, 0: none) stop them. Returns whether it stopped them.
 */
static bool wait_lanes(struct emu_stop *stop, struct emu_lane *const *lanes,
                       const pthread_t *threads, size_t started, uint64_t deadline)
{
    bool stopped = false;
    pthread_mutex_lock(&stop->lock);
    while (deadline && stop->running && !stopped) {
        struct timespec until = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
        if (pthread_cond_timedwait(&stop->lane_ended, &stop->lock, &until) == ETIMEDOUT &&
            stop->running) {
            stopped = true;
            __atomic_store_n(&stop->stopped, true, __ATOMIC_RELEASE);
            /* Under the lock: a thread not done has not exited, so its id is good. */
            for (size_t i = 0; i < started; ++i)
                if (!lanes[i]->done)
                    pthread_kill(threads[i], EMU_STOP_SIGNAL);
        }
    }
    pthread_mutex_unlock(&stop->lock);
    for (size_t i = 0; i < started; ++i)
        pthread_join(threads[i], NULL);
    return stopped;
}

static uint64_t count3(const uint32_t v[3])
{
    return (uint64_t)v[0] * v[1] * v[2];
}

/* The lanes of a launch, a batch of workgroups at a time. */
struct emu_batch {
    struct emu_lane *lanes;
    struct emu_group *groups;
    struct emu_wave *waves;
    pthread_t *threads;
    struct emu_lane **started; /* the lane of each thread */
    struct emu_stop stop;
    uint64_t deadline; /* CLOCK_MONOTONIC nanoseconds; 0: none */
    uint32_t waves_per_group;
    uint32_t wave_size;
    uint64_t random_seed; /* 0: converged */
};

/* Run `count` workgroups from `first` on, each lane a thread; wait for all of them. */
static int run_groups(struct emu_batch *batch, const struct emu_lane *proto,
                      const struct devrt_launch_config *config, uint64_t first, uint64_t count)
{
    uint32_t block = (uint32_t)count3(config->block);
    uint32_t width = batch->wave_size;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1u << 20);
    size_t started = 0;
    int status = DEVRT_SUCCESS;
    for (uint64_t g = 0; g < count; ++g) {
        uint64_t flat = first + g;
        struct emu_group *group = &batch->groups[g];
        pthread_mutex_init(&group->lock, NULL);
        pthread_cond_init(&group->released, NULL);
        group->live = block;
        group->arrived = 0;
        group->generation = 0;
        for (uint32_t w = 0; w < batch->waves_per_group; ++w) {
            struct emu_wave *wave = &batch->waves[g * batch->waves_per_group + w];
            memset(wave, 0, sizeof *wave);
            pthread_mutex_init(&wave->lock, NULL);
            uint32_t lanes = block - w * width < width ? block - w * width : width;
            wave->live = lanes == 64 ? ~0ull : (1ull << lanes) - 1;
            if (batch->random_seed)
                wave->random = mix(batch->random_seed ^ (flat * batch->waves_per_group + w));
        }
        /* Every lane of the group is known to its wave before any of them runs. */
        for (uint32_t i = 0; i < block; ++i) {
            struct emu_lane *lane = &batch->lanes[g * block + i];
            *lane = *proto;
            lane->group = group;
            lane->wave = &batch->waves[g * batch->waves_per_group + i / width];
            lane->wave->lane[i % width] = lane;
            lane->lane.wave_size = width;
            lane->lane.lane_id = i % width;
            pthread_cond_init(&lane->woken, NULL);
            if (batch->random_seed)
                lane->random = mix(batch->random_seed ^ ~(flat * block + i));
            lane->lane.workgroup[0] = (uint32_t)(flat % config->grid[0]);
            lane->lane.workgroup[1] = (uint32_t)(flat / config->grid[0] % config->grid[1]);
            lane->lane.workgroup[2] = (uint32_t)(flat / config->grid[0] / config->grid[1]);
            lane->lane.workitem[0] = i % config->block[0];
            lane->lane.workitem[1] = i / config->block[0] % config->block[1];
            lane->lane.workitem[2] = i / config->block[0] / config->block[1];
        }
    }
    /*
     * Lane threads start with the stop signal blocked, as their creator has it now:
     * lane_main unblocks it once the handler can find its lane. Before that (a loaded
     * machine may take longer than the timeout to run a new thread) the handler would take
     * it for the program's signal, whose default ends the process.
     */
    sigset_t stop_signal, creator_mask;
    sigemptyset(&stop_signal);
    sigaddset(&stop_signal, EMU_STOP_SIGNAL);
    pthread_sigmask(SIG_BLOCK, &stop_signal, &creator_mask);
    for (uint64_t g = 0; g < count; ++g) {
        for (uint32_t i = 0; i < block; ++i) {
            struct emu_lane *lane = &batch->lanes[g * block + i];
            if (status != DEVRT_SUCCESS) {
                /* Lanes that never start must not hold up those that did. */
                lane_ended(lane);
                continue;
            }
            pthread_mutex_lock(&batch->stop.lock);
            batch->stop.running++;
            if (pthread_create(&batch->threads[started], &attr, lane_main, lane) != 0) {
                batch->stop.running--;
                status = devrt_fail(DEVRT_ERROR_LAUNCH, "cannot start lane thread %zu", started);
            } else {
                batch->started[started++] = lane;
            }
            pthread_mutex_unlock(&batch->stop.lock);
            if (status != DEVRT_SUCCESS)
                lane_ended(lane);
        }
    }
    pthread_sigmask(SIG_SETMASK, &creator_mask, NULL);
    if (wait_lanes(&batch->stop, batch->started, batch->threads, started, batch->deadline) &&
        status == DEVRT_SUCCESS)
        status = DEVRT_ERROR_TIMEOUT;
    pthread_attr_destroy(&attr);
    for (uint64_t g = 0; g < count; ++g) {
        pthread_mutex_destroy(&batch->groups[g].lock);
        pthread_cond_destroy(&batch->groups[g].released);
        for (uint32_t w = 0; w < batch->waves_per_group; ++w)
            pthread_mutex_destroy(&batch->waves[g * batch->waves_per_group + w].lock);
        for (uint32_t i = 0; i < block; ++i)
            pthread_cond_destroy(&batch->lanes[g * block + i].woken);
    }
    return status;
}

/* The image's symbol PREFIX followed by KERNEL's name, or NULL. */
static void *kernel_symbol(struct emu_module *m, const char *prefix, const char *kernel)
{
    char name[strlen(prefix) + strlen(kernel) + 1];
    snprintf(name, sizeof name, "%s%s", prefix, kernel);
    return dlsym(m->handle, name);
}

/*
 * Against the signature DEVRT_KERNELn recorded: the call would otherwise read registers or
 * stack that no argument was put in. A kernel without DEVRT_KERNELn's caller (a plain
 * function, or an image built against an older devrt) is called through libffi, which
 * cannot pass a struct by value: how the host ABI passes one depends on its fields' types.
 */
static int check_signature(devrt_module *module, const char *kernel, const struct devrt_arg *args,
                           size_t arg_count, devrt_emu_call_fn **call)
{
    struct emu_module *m = module->backend;
    *call = (devrt_emu_call_fn *)kernel_symbol(m, DEVRT_EMU_CALL_PREFIX, kernel);
    if (!*call)
        for (size_t i = 0; i < arg_count; ++i)
            if (!devrt_emu_ffi_type(args[i].type))
                return devrt_fail(DEVRT_ERROR_ARGUMENTS,
                                  "kernel %s: argument %zu is %zu bytes by value, which the "
                                  "emulation passes only to kernels declared with DEVRT_KERNELn "
                                  "against this devrt",
                                  kernel, i + 1, devrt_arg_size(&args[i]));
    const struct devrt_emu_signature *signature =
        kernel_symbol(m, DEVRT_EMU_SIGNATURE_PREFIX, kernel);
    if (!signature)
        return DEVRT_SUCCESS; /* declared with DEVRT_KERNEL alone: nothing recorded */
    if (signature->count > DEVRT_EMU_MAX_PARAMETERS)
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s: the signature of kernel %s says %u parameters",
                          module->path, kernel, signature->count);
    return devrt_check_arguments(kernel, signature->size, signature->count, args, arg_count);
}

/* What emu_launch refuses before it starts a lane, for launches queued to run later. */
static int emu_check(devrt_module *module, const char *kernel, const struct devrt_arg *args,
                     size_t arg_count)
{
    struct emu_module *m = module->backend;
    if (!dlsym(m->handle, kernel))
        return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s: no kernel %s", module->path, kernel);
    devrt_emu_call_fn *call;
    return check_signature(module, kernel, args, arg_count, &call);
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
    struct emu_module *m = module->backend;
    void (*fn)(void) = (void (*)(void))dlsym(m->handle, kernel);
    if (!fn)
        return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s: no kernel %s", module->path, kernel);
    devrt_emu_call_fn *call;
    int status = check_signature(module, kernel, args, arg_count, &call);
    if (status != DEVRT_SUCCESS)
        return status;

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
        types[i] = devrt_emu_ffi_type(args[i].type);  /* each known: check_signature */
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

    struct emu_device *emu = module->device->backend;
    struct emu_lane proto = {
        .lane = {.workgroup_size = {config->block[0], config->block[1], config->block[2]},
                 .num_workgroups = {config->grid[0], config->grid[1], config->grid[2]},
                 .barrier = emu_barrier,
                 .end_wave = emu_end_wave,
                 .meet = emu_meet,
                 .sleep = emu_sleep},
        .kernel = fn,
        .call = call,
        .cif = &cif,
        .values = values,
        .enter = m->enter,
    };
    static pthread_once_t stop_handler = PTHREAD_ONCE_INIT;
    if (config->timeout_ns)
        pthread_once(&stop_handler, install_stop_handler);
    uint64_t block = count3(config->block);
    uint64_t groups_total = count3(config->grid);
    uint64_t per_batch = block >= DEVRT_EMU_MAX_LANES ? 1 : DEVRT_EMU_MAX_LANES / block;
    if (per_batch > groups_total)
        per_batch = groups_total;
    uint64_t launch = __atomic_fetch_add(&emu->launches, 1u, __ATOMIC_RELAXED);
    struct emu_batch batch = {
        .waves_per_group = (uint32_t)((block + emu->wave_size - 1) / emu->wave_size),
        .wave_size = emu->wave_size,
        .random_seed = emu->schedule == DEVRT_EMU_SCHEDULE_RANDOM
                           ? mix(emu->seed * 0x9e3779b97f4a7c15ull + launch)
                           : 0,
        .deadline = devrt_deadline(config->timeout_ns),
    };
    pthread_mutex_init(&batch.stop.lock, NULL);
    pthread_condattr_t clock;
    pthread_condattr_init(&clock);
    pthread_condattr_setclock(&clock, CLOCK_MONOTONIC);
    pthread_cond_init(&batch.stop.lane_ended, &clock);
    pthread_condattr_destroy(&clock);
    proto.stop = &batch.stop;
    batch.lanes = calloc(per_batch * block, sizeof *batch.lanes);
    batch.groups = calloc(per_batch, sizeof *batch.groups);
    batch.waves = calloc(per_batch * batch.waves_per_group, sizeof *batch.waves);
    batch.threads = calloc(per_batch * block, sizeof *batch.threads);
    batch.started = calloc(per_batch * block, sizeof *batch.started);
    if (!batch.lanes || !batch.groups || !batch.waves || !batch.threads || !batch.started)
        status = devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for %llu lanes",
                            (unsigned long long)(per_batch * block));
    for (uint64_t first = 0; status == DEVRT_SUCCESS && first < groups_total; first += per_batch) {
        uint64_t count = groups_total - first < per_batch ? groups_total - first : per_batch;
        status = run_groups(&batch, &proto, config, first, count);
    }
    if (status == DEVRT_ERROR_TIMEOUT)
        status = devrt_fail(DEVRT_ERROR_TIMEOUT,
                            "kernel %s ran past its timeout of %.3f s: the emulation stopped its "
                            "lanes",
                            kernel, (double)config->timeout_ns / 1e9);
    pthread_cond_destroy(&batch.stop.lane_ended);
    pthread_mutex_destroy(&batch.stop.lock);
    free(batch.started);
    free(batch.lanes);
    free(batch.groups);
    free(batch.waves);
    free(batch.threads);
    free(copy);
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
    .check = emu_check,
    .arm_doorbell = emu_arm_doorbell,
    .wait_doorbell = emu_wait_doorbell,
    .ring_doorbell = emu_ring_doorbell,
    .describe = emu_describe,
};
