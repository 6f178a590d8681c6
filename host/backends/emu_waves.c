/*
 * The emulation's wave scheduler (emu_waves.h): each lane is a host thread; a wave is 1, 32
 * or 64 of them, scheduled independently; workgroups run side by side up to a bound on live
 * threads.
 *
 * Lanes of a wave meet at every lane-mask operation (device/arch/emu.h) in a gathering,
 * under the wave's lock. A gathering over an explicit mask closes once every live lane of
 * the mask is in it. A gathering where lanes take the active mask (implicitly) is keyed
 * by the caller's whole call stack, the call site it would be once everything is inlined
 * as on a GPU, and closes once every other live lane of the wave is held elsewhere (in
 * another gathering, at the barrier, or sleeping in a poll): it never waits for a lane
 * that cannot come. The random schedule also closes it early, with whoever is there.
 */
#include <errno.h>
#include <execinfo.h>
#include <ffi.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_waves.h"

/* Threads alive at once; whole workgroups are started until it is reached. */
#define DEVRT_EMU_MAX_LANES 512u

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
 * Stopping a grid past its deadline or once cancelled. Lanes stop at their next call into the
 * runtime (a lane-mask operation, the barrier, a poll's sleep), and a lane running kernel code
 * alone, a bare spin loop for instance, is sent EMU_STOP_SIGNAL, whose handler ends it there. A
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

/*
 * The lane this thread runs, for the stop signal's handler: this copy's own, so that a
 * second copy of the scheduler in the process (emu_waves.h) tells its lanes from ours.
 * Initial-exec: the handler reads it on any thread, and a copy in a library loaded with
 * dlopen would otherwise allocate the thread's slot inside the handler.
 */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct emu_lane *running_lane;
/*
 * What was installed for the stop signal before us: the program's handler, or a second
 * copy's, whose lanes its own handler must stop. It still gets the signals not ours.
 */
static struct sigaction previous_action;

static void stop_signalled(int signal, siginfo_t *info, void *context)
{
    struct emu_lane *lane = running_lane;
    if (lane && __atomic_load_n(&lane->stop->stopped, __ATOMIC_ACQUIRE)) {
        if (!lane->in_runtime)
            longjmp(lane->ended, 1); /* outside the runtime: no host lock of devrt's is held */
        return;                      /* the lane ends on its way out of the runtime */
    }
    if (previous_action.sa_flags & SA_SIGINFO) {
        previous_action.sa_sigaction(signal, info, context);
    } else if (previous_action.sa_handler == SIG_DFL) {
        /* What the signal would have done without devrt: end the process. */
        struct sigaction fallback = {.sa_handler = SIG_DFL};
        sigemptyset(&fallback.sa_mask);
        sigaction(signal, &fallback, NULL);
        raise(signal);
    } else if (previous_action.sa_handler != SIG_IGN) {
        previous_action.sa_handler(signal);
    }
}

static void install_stop_handler(void)
{
    /* Read first: a signal that comes as soon as the handler is in finds it. */
    sigaction(EMU_STOP_SIGNAL, NULL, &previous_action);
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

static uint64_t monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* How often a wait for lanes looks at a cancel flag, which no one signals the condvar for. */
#define EMU_CANCEL_POLL_NS 10000000u

/*
 * Wait for the STARTED lane threads of THREADS and LANES; past DEADLINE (CLOCK_MONOTONIC
 * nanoseconds, 0: none), or once *CANCEL (may be NULL) is set, stop them. Returns whether
 * it stopped them.
 */
static bool wait_lanes(struct emu_stop *stop, struct emu_lane *const *lanes,
                       const pthread_t *threads, size_t started, uint64_t deadline,
                       const bool *cancel)
{
    bool stopped = false;
    pthread_mutex_lock(&stop->lock);
    while ((deadline || cancel) && stop->running && !stopped) {
        uint64_t wake = deadline;
        if (cancel) {
            uint64_t poll = monotonic_ns() + EMU_CANCEL_POLL_NS;
            if (!wake || poll < wake)
                wake = poll;
        }
        struct timespec until = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
        pthread_cond_timedwait(&stop->lane_ended, &stop->lock, &until);
        /* Read after the wait: a wait that ends at the deadline finds the clock past it. */
        bool past = deadline && monotonic_ns() >= deadline;
        if (stop->running && (past || (cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE)))) {
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
    const bool *cancel;
    uint32_t waves_per_group;
    uint32_t wave_size;
    uint64_t random_seed; /* 0: converged */
};

/* Run `count` workgroups from `first` on, each lane a thread; wait for all of them. */
static enum devrt_emu_grid_result run_groups(struct emu_batch *batch, const struct emu_lane *proto,
                                             const struct devrt_emu_grid *config, uint64_t first,
                                             uint64_t count)
{
    uint32_t block = (uint32_t)count3(config->block);
    uint32_t width = batch->wave_size;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1u << 20);
    size_t started = 0;
    enum devrt_emu_grid_result status = DEVRT_EMU_GRID_DONE;
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
            if (status != DEVRT_EMU_GRID_DONE) {
                /* Lanes that never start must not hold up those that did. */
                lane_ended(lane);
                continue;
            }
            pthread_mutex_lock(&batch->stop.lock);
            batch->stop.running++;
            if (pthread_create(&batch->threads[started], &attr, lane_main, lane) != 0) {
                batch->stop.running--;
                status = DEVRT_EMU_GRID_NO_THREAD;
            } else {
                batch->started[started++] = lane;
            }
            pthread_mutex_unlock(&batch->stop.lock);
            if (status != DEVRT_EMU_GRID_DONE)
                lane_ended(lane);
        }
    }
    pthread_sigmask(SIG_SETMASK, &creator_mask, NULL);
    if (wait_lanes(&batch->stop, batch->started, batch->threads, started, batch->deadline,
                   batch->cancel) &&
        status == DEVRT_EMU_GRID_DONE)
        status = DEVRT_EMU_GRID_STOPPED;
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

uint64_t devrt_emu_random_seed(uint64_t seed, uint64_t launch)
{
    return mix(seed * 0x9e3779b97f4a7c15ull + launch);
}

enum devrt_emu_grid_result devrt_emu_run_grid(const struct devrt_emu_grid *grid)
{
    struct emu_lane proto = {
        .lane = {.workgroup_size = {grid->block[0], grid->block[1], grid->block[2]},
                 .num_workgroups = {grid->grid[0], grid->grid[1], grid->grid[2]},
                 .barrier = emu_barrier,
                 .end_wave = emu_end_wave,
                 .meet = emu_meet,
                 .sleep = emu_sleep},
        .kernel = grid->kernel,
        .call = grid->call,
        .cif = grid->cif,
        .values = grid->values,
        .enter = grid->enter,
    };
    /* Only a grid that can be stopped needs it: the program's own signal stays untouched. */
    static pthread_once_t stop_handler = PTHREAD_ONCE_INIT;
    if (grid->deadline || grid->cancel)
        pthread_once(&stop_handler, install_stop_handler);
    uint64_t block = count3(grid->block);
    uint64_t groups_total = count3(grid->grid);
    uint64_t per_batch = block >= DEVRT_EMU_MAX_LANES ? 1 : DEVRT_EMU_MAX_LANES / block;
    if (per_batch > groups_total)
        per_batch = groups_total;
    struct emu_batch batch = {
        .waves_per_group = (uint32_t)((block + grid->wave_size - 1) / grid->wave_size),
        .wave_size = grid->wave_size,
        .random_seed = grid->random_seed,
        .deadline = grid->deadline,
        .cancel = grid->cancel,
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
    enum devrt_emu_grid_result status = DEVRT_EMU_GRID_DONE;
    if (!batch.lanes || !batch.groups || !batch.waves || !batch.threads || !batch.started)
        status = DEVRT_EMU_GRID_NO_MEMORY;
    for (uint64_t first = 0; status == DEVRT_EMU_GRID_DONE && first < groups_total;
         first += per_batch) {
        uint64_t count = groups_total - first < per_batch ? groups_total - first : per_batch;
        status = run_groups(&batch, &proto, grid, first, count);
    }
    pthread_cond_destroy(&batch.stop.lane_ended);
    pthread_mutex_destroy(&batch.stop.lock);
    free(batch.started);
    free(batch.lanes);
    free(batch.groups);
    free(batch.waves);
    free(batch.threads);
    return status;
}
