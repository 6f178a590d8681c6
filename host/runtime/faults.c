/*
 * Fault injection into the server (faults.h). Each hook starts with one relaxed load of
 * `on`: a server without faults pays that load and nothing else.
 */
#include "faults.h"
#include "runtime.h"

static bool faults_on(const struct devrt_server *server)
{
    return __atomic_load_n(&server->faults.on, __ATOMIC_RELAXED);
}

static uint32_t state_flags(const devrt_device *device, const struct devrt_fault_settings *s)
{
    return device->ops->read_serving && !s->stream_output ? DEVRT_STATE_OUTPUT_BY_ADDRESS : 0;
}

uint32_t devrt_faults_state_flags(devrt_device *device)
{
    pthread_mutex_lock(&device->server.lock);
    uint32_t flags = state_flags(device, &device->server.faults.settings);
    pthread_mutex_unlock(&device->server.lock);
    return flags;
}

void devrt_faults_set(devrt_device *device, const struct devrt_fault_settings *settings)
{
    struct devrt_server *server = &device->server;
    struct devrt_faults *faults = &server->faults;
    pthread_mutex_lock(&server->lock);
    faults->settings = settings ? *settings : (struct devrt_fault_settings){0};
    faults->stats = (struct devrt_fault_stats){0};
    faults->awaiting_recovery = false;
    faults->now = (struct devrt_server_timeline_entry){0};
    const struct devrt_fault_settings *s = &faults->settings;
    bool on = s->drop_doorbells || s->no_poll_recovery || s->stall_ms || s->hand_back_delay_us ||
              s->buffer_budget || s->unbounded_buffer || s->drain_keeps_bound ||
              s->keep_refused_message || s->leak_unloaded_modules ||
              (s->timeline && s->timeline_capacity);
    server->buffer_budget = s->unbounded_buffer ? SIZE_MAX
                            : s->buffer_budget  ? s->buffer_budget
                                                : DEVRT_SERVER_BUFFER_BUDGET;
    server->buffered_peak = server->buffered;
    server->deferred_packets = 0;
    server->packets_taken = 0;
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
    *stats = server->faults.stats;
    stats->buffered_bytes = server->buffered;
    stats->buffered_peak = server->buffered_peak;
    stats->buffer_bound = server->buffer_budget;
    stats->deferred_packets = server->deferred_packets;
    stats->packets_taken = server->packets_taken;
    stats->stale_favourites = server->stale_favourites;
    stats->packets_after_end = server->packets_after_end;
    stats->stale_after_end = server->stale_after_end;
    pthread_mutex_unlock(&server->lock);
}

void devrt_faults_wait_doorbell(devrt_device *device, uint64_t armed, uint32_t timeout_ms)
{
    struct devrt_server *server = &device->server;
    if (!timeout_ms || !faults_on(server)) {
        device->ops->wait_doorbell(device, armed, timeout_ms);
        return;
    }
    uint64_t start = devrt_now_ns(), limit = (uint64_t)timeout_ms * 1000000u;
    device->ops->wait_doorbell(device, armed, timeout_ms);
    uint64_t woke = devrt_now_ns();
    struct devrt_faults *faults = &server->faults;
    pthread_mutex_lock(&server->lock);
    faults->now.woke = woke;
    /* Woken before the poll's end: a ring, which is lost if a drop is due. */
    if (woke - start < limit && faults->settings.drop_doorbells) {
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
void devrt_faults_pass(struct devrt_server *server)
{
    if (faults_on(server) && server->faults.settings.timeline)
        server->faults.now.pass = devrt_now_ns();
}

void devrt_faults_seen(struct devrt_server *server)
{
    if (faults_on(server) && server->faults.settings.timeline)
        server->faults.now.seen = devrt_now_ns();
}

static void record_timeline(struct devrt_faults *faults)
{
    faults->now.handed = devrt_now_ns();
    if (faults->stats.timeline_entries < faults->settings.timeline_capacity)
        faults->settings.timeline[faults->stats.timeline_entries++] = faults->now;
    faults->now.woke = 0;
}

void devrt_faults_hand_back(struct devrt_server *server)
{
    if (!faults_on(server))
        return;
    struct devrt_faults *faults = &server->faults;
    if (faults->settings.timeline)
        record_timeline(faults);
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

bool devrt_faults_keep_refused(const struct devrt_server *server)
{
    return faults_on(server) && server->faults.settings.keep_refused_message;
}

bool devrt_faults_leak_module(struct devrt_server *server)
{
    if (!faults_on(server))
        return false;
    pthread_mutex_lock(&server->lock);
    bool leak = server->faults.settings.leak_unloaded_modules;
    pthread_mutex_unlock(&server->lock);
    return leak;
}
