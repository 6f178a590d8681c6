/*
 * Fault injection into the server (faults.h), through its hooks (host/runtime/fault_hooks.h).
 * A device's hooks are installed by the first devrt_faults_set on it and stay until its
 * server stops; settings of zero turn them off again, each hook then returning after one
 * relaxed load of `on`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "faults.h"
#include "runtime.h"

/* A device's faults, guarded by its server's lock; the hooks first, found from them. */
struct devrt_faults {
    struct devrt_fault_hooks hooks;
    pthread_cond_t changed; /* the settings changed */
    bool on; /* any setting is set: also read without the lock, so the server pays one load */
    struct devrt_fault_settings settings;
    struct devrt_fault_stats stats;
    uint64_t ring_ns;         /* when the last lost ring came */
    uint64_t pass_after_ring; /* the server's pass count when it woke from that sleep */
    bool awaiting_recovery;
    struct devrt_server_timeline_entry now; /* the hand-back being timed */
    uint64_t hold_start_ns;                 /* when hold_ends_until first held a packet back */
    /* While any setting is on (count_launch_events); atomic: see hook_launch_event. */
    uint64_t launch_events[3];
    bool stop; /* atomic: devrt_device_test_stop's flag */
};

/* The server's faults; only where the hooks are this library's, as every hook's are. */
static struct devrt_faults *faults_of(const struct devrt_server *server)
{
    return (struct devrt_faults *)devrt_faults_of(server);
}

static bool faults_on(const struct devrt_server *server)
{
    return __atomic_load_n(&faults_of(server)->on, __ATOMIC_RELAXED);
}

static uint32_t state_flags(const devrt_device *device, const struct devrt_fault_settings *s)
{
    return device->ops->read_serving && !s->stream_output ? DEVRT_STATE_OUTPUT_BY_ADDRESS : 0;
}

static uint32_t hook_state_flags(devrt_device *device)
{
    pthread_mutex_lock(&device->server.lock);
    uint32_t flags = state_flags(device, &faults_of(&device->server)->settings);
    pthread_mutex_unlock(&device->server.lock);
    return flags;
}

static bool hook_no_ready_ring(devrt_device *device)
{
    pthread_mutex_lock(&device->server.lock);
    bool none = faults_of(&device->server)->settings.no_ready_ring;
    pthread_mutex_unlock(&device->server.lock);
    return none;
}

static struct devrt_faults *install(struct devrt_server *server);

void devrt_faults_set(devrt_device *device, const struct devrt_fault_settings *settings)
{
    struct devrt_server *server = &device->server;
    pthread_mutex_lock(&server->lock);
    struct devrt_faults *faults = install(server);
    faults->settings = settings ? *settings : (struct devrt_fault_settings){0};
    faults->stats = (struct devrt_fault_stats){0};
    faults->awaiting_recovery = false;
    faults->now = (struct devrt_server_timeline_entry){0};
    faults->hold_start_ns = 0;
    __atomic_store_n(&faults->stop, false, __ATOMIC_RELEASE);
    const struct devrt_fault_settings *s = &faults->settings;
    bool on = s->drop_doorbells || s->no_poll_recovery || s->stall_ms || s->hand_back_delay_us ||
              s->buffer_budget || s->unbounded_buffer || s->drain_keeps_bound ||
              s->keep_refused_message || s->leak_unloaded_modules ||
              (s->timeline && s->timeline_capacity) || s->before_reclaim || s->hold_ends_until ||
              s->count_launch_events || s->stop_after || s->no_ready_ring || s->ring_only;
    server->buffer_budget = s->unbounded_buffer ? SIZE_MAX
                            : s->buffer_budget  ? s->buffer_budget
                                                : DEVRT_SERVER_BUFFER_BUDGET;
    server->buffered_peak = server->buffered;
    server->deferred_packets = server->deferred_unread = 0;
    server->packets_taken = 0;
    server->found_by_ring = 0;
    server->stale_favourites = 0;
    server->packets_after_end = server->stale_after_end = 0;
    server->drain_keeps_bound = s->drain_keeps_bound;
    __atomic_store_n(&faults->on, on, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&faults->changed);
    /* The device reads the flags at every write: the next ones follow the setting. */
    uint32_t flags = state_flags(device, s);
    for (devrt_module *m = server->modules; m; m = m->next)
        device->ops->write(device, &m->state->flags, &flags, sizeof flags);
    pthread_mutex_unlock(&server->lock);
}

void devrt_faults_get(devrt_device *device, struct devrt_fault_stats *stats)
{
    struct devrt_server *server = &device->server;
    pthread_mutex_lock(&server->lock);
    const struct devrt_faults *faults = faults_of(server);
    *stats = faults ? faults->stats : (struct devrt_fault_stats){0};
    stats->buffered_bytes = server->buffered;
    stats->buffered_peak = server->buffered_peak;
    stats->buffer_bound = server->buffer_budget;
    stats->deferred_packets = server->deferred_packets;
    stats->deferred_unread = server->deferred_unread;
    stats->packets_taken = server->packets_taken;
    stats->found_by_ring = server->found_by_ring;
    stats->stale_favourites = server->stale_favourites;
    stats->packets_after_end = server->packets_after_end;
    stats->stale_after_end = server->stale_after_end;
    if (faults) {
        stats->launches_held =
            __atomic_load_n(&faults->launch_events[DEVRT_LAUNCH_HELD], __ATOMIC_ACQUIRE);
        stats->waits_taken =
            __atomic_load_n(&faults->launch_events[DEVRT_LAUNCH_WAIT_TAKEN], __ATOMIC_ACQUIRE);
        stats->detach_waits =
            __atomic_load_n(&faults->launch_events[DEVRT_LAUNCH_DETACH_WAITS], __ATOMIC_ACQUIRE);
    }
    pthread_mutex_unlock(&server->lock);
}

static void hook_wait_doorbell(devrt_device *device, uint64_t armed, uint32_t timeout_ms)
{
    struct devrt_server *server = &device->server;
    if (!timeout_ms || !faults_on(server)) {
        device->ops->wait_doorbell(device, armed, timeout_ms);
        return;
    }
    uint64_t start = devrt_now_ns(), limit = (uint64_t)timeout_ms * 1000000u;
    device->ops->wait_doorbell(device, armed, timeout_ms);
    uint64_t woke = devrt_now_ns();
    struct devrt_faults *faults = faults_of(server);
    pthread_mutex_lock(&server->lock);
    faults->now.woke = woke;
    /*
     * Woken before the poll's end with a request waiting: its ring, which is lost if a drop
     * is due. A ring with none behind it is late: the device read the sleeping flag before
     * the pass that served its request cleared it, and nothing waits on it.
     */
    if (woke - start < limit && faults->settings.drop_doorbells &&
        devrt_server_has_request(server)) {
        faults->settings.drop_doorbells--;
        faults->stats.doorbells_dropped++;
        faults->ring_ns = woke;
        if (faults->settings.no_poll_recovery) {
            while (faults->settings.no_poll_recovery && !server->stop)
                pthread_cond_wait(&faults->changed, &server->lock);
        } else {
            /* As if nothing had rung: the rest of the poll interval. */
            pthread_mutex_unlock(&server->lock);
            devrt_sleep_ns(limit - (woke - start));
            pthread_mutex_lock(&server->lock);
            faults->pass_after_ring = server->passes;
            faults->awaiting_recovery = true;
        }
    }
    pthread_mutex_unlock(&server->lock);
}

/* The timeline's steps (faults.h); the server's lock is held. */
static bool hook_pass(struct devrt_server *server)
{
    if (!faults_on(server))
        return true;
    if (faults_of(server)->settings.timeline)
        faults_of(server)->now.pass = devrt_now_ns();
    return !faults_of(server)->settings.ring_only;
}

static void hook_step(struct devrt_server *server, enum devrt_server_step step)
{
    if (!faults_on(server) || !faults_of(server)->settings.timeline)
        return;
    struct devrt_server_timeline_entry *now = &faults_of(server)->now;
    uint64_t *stamp[] = {[DEVRT_SERVER_LOOK] = &now->pass,
                         [DEVRT_SERVER_SEEN] = &now->seen,
                         [DEVRT_SERVER_READ] = &now->read,
                         [DEVRT_SERVER_HANDLED] = &now->handled};
    *stamp[step] = devrt_now_ns();
}

static void record_timeline(struct devrt_faults *faults)
{
    faults->now.handed = devrt_now_ns();
    if (faults->stats.timeline_entries < faults->settings.timeline_capacity)
        faults->settings.timeline[faults->stats.timeline_entries++] = faults->now;
    faults->now.woke = 0;
    faults->now.handled = 0;
}

/* The timeline's last step: stamped once the replies and the inbox store are written. */
static void hook_handed(struct devrt_server *server)
{
    if (faults_on(server) && faults_of(server)->settings.timeline)
        record_timeline(faults_of(server));
}

static void hook_hand_back(struct devrt_server *server)
{
    if (!faults_on(server))
        return;
    struct devrt_faults *faults = faults_of(server);
    if (faults->awaiting_recovery) {
        faults->awaiting_recovery = false;
        faults->stats.recovered = true;
        faults->stats.recovery_passes = server->passes - faults->pass_after_ring;
        faults->stats.recovery_ns = devrt_now_ns() - faults->ring_ns;
    }
    if (faults->settings.stall_ms) {
        faults->stats.stalls++;
        devrt_sleep_ns((uint64_t)faults->settings.stall_ms * 1000000u);
        faults->settings.stall_ms = 0;
    }
    if (faults->settings.hand_back_delay_us) {
        faults->stats.delayed_hand_backs++;
        devrt_sleep_ns((uint64_t)faults->settings.hand_back_delay_us * 1000u);
    }
}

/*
 * Until the server holds hold_ends_until bytes, no message ends. Once it does, or once the
 * failsafe's time has passed (the waves cannot send that much at once), never again.
 */
static bool hook_hold_end(struct devrt_server *server)
{
    if (!faults_on(server))
        return false;
    struct devrt_faults *faults = faults_of(server);
    size_t until = faults->settings.hold_ends_until;
    if (!until)
        return false;
    uint64_t now = devrt_now_ns();
    if (!faults->hold_start_ns)
        faults->hold_start_ns = now;
    if (server->buffered >= until) {
        faults->stats.hold_reached = true;
    } else if (now - faults->hold_start_ns >= (uint64_t)faults->settings.hold_limit_ms * 1000000u) {
        faults->stats.hold_gave_up = true;
    } else {
        return true;
    }
    faults->settings.hold_ends_until = 0;
    return false;
}

static bool hook_keep_refused(const struct devrt_server *server)
{
    return faults_on(server) && faults_of(server)->settings.keep_refused_message;
}

static bool hook_leak_module(struct devrt_server *server)
{
    if (!faults_on(server))
        return false;
    pthread_mutex_lock(&server->lock);
    bool leak = faults_of(server)->settings.leak_unloaded_modules;
    pthread_mutex_unlock(&server->lock);
    return leak;
}

static void hook_before_reclaim(devrt_module *module)
{
    struct devrt_server *server = &module->device->server;
    if (!faults_on(server))
        return;
    pthread_mutex_lock(&server->lock);
    struct devrt_fault_settings s = faults_of(server)->settings;
    pthread_mutex_unlock(&server->lock);
    if (s.before_reclaim)
        s.before_reclaim(module, s.before_reclaim_arg);
}

static void hook_launch_event(devrt_module *module, enum devrt_launch_event event)
{
    struct devrt_server *server = &module->device->server;
    if (!faults_on(server))
        return;
    /* Atomic, not under the server's lock: launch.c may hold the launches' lock here. */
    __atomic_fetch_add(&faults_of(server)->launch_events[event], 1u, __ATOMIC_RELEASE);
}

/*
 * stop_after's stop comes as a packet is deferred for the bound, once the test's flag is
 * set. From then on every packet of the running kernel is held (hook_hold_all), so that
 * the port of that packet still waits on the bound when the kernel is known to have ended,
 * however slowly the stopped lanes notice: what the drain of an ended kernel must take.
 */
static void hook_deferred(struct devrt_server *server)
{
    if (!faults_on(server))
        return;
    struct devrt_faults *faults = faults_of(server);
    if (faults->settings.stop_after && !__atomic_load_n(&faults->stop, __ATOMIC_RELAXED) &&
        __atomic_load_n(faults->settings.stop_after, __ATOMIC_ACQUIRE)) {
        faults->stats.stopped = true;
        __atomic_store_n(&faults->stop, true, __ATOMIC_RELEASE);
    }
}

static bool hook_hold_all(const struct devrt_server *server)
{
    return faults_on(server) && __atomic_load_n(&faults_of(server)->stop, __ATOMIC_RELAXED) &&
           faults_of(server)->settings.stop_after;
}

static const bool *hook_stop_flag(struct devrt_server *server)
{
    return &faults_of(server)->stop;
}

static void hook_stop(struct devrt_server *server)
{
    pthread_cond_broadcast(&faults_of(server)->changed); /* a server held by a setting */
}

static void hook_release(struct devrt_server *server)
{
    struct devrt_faults *faults = faults_of(server);
    __atomic_store_n(&server->fault_hooks, NULL, __ATOMIC_RELAXED);
    pthread_cond_destroy(&faults->changed);
    free(faults);
}

static const struct devrt_fault_hooks hooks = {
    .wait_doorbell = hook_wait_doorbell,
    .pass = hook_pass,
    .step = hook_step,
    .keep_refused = hook_keep_refused,
    .hand_back = hook_hand_back,
    .handed = hook_handed,
    .hold_end = hook_hold_end,
    .state_flags = hook_state_flags,
    .no_ready_ring = hook_no_ready_ring,
    .leak_module = hook_leak_module,
    .before_reclaim = hook_before_reclaim,
    .launch_event = hook_launch_event,
    .stop_flag = hook_stop_flag,
    .deferred = hook_deferred,
    .hold_all = hook_hold_all,
    .stop = hook_stop,
    .release = hook_release,
};

/* The server's faults, made and installed the first time; the server's lock is held. */
static struct devrt_faults *install(struct devrt_server *server)
{
    struct devrt_faults *faults = faults_of(server);
    if (faults)
        return faults;
    faults = calloc(1, sizeof *faults);
    if (!faults) {
        fprintf(stderr, "devrt_faults_set: out of memory\n");
        abort();
    }
    faults->hooks = hooks;
    pthread_cond_init(&faults->changed, NULL);
    /* Release: the server thread reads the pointer without the lock (runtime.h). */
    __atomic_store_n(&server->fault_hooks, &faults->hooks, __ATOMIC_RELEASE);
    return faults;
}
