/*
 * The RPC server: one thread per device takes the packets its kernels send, has them
 * assembled into messages (message_assembly.c), checks everything the device wrote, and
 * runs the handler of each request. It never trusts device data: a malformed packet is
 * refused, recorded as the launch's device error, and the port is handed back so the device
 * cannot hang on it.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "message_assembly.h"
#include "poll_policy.h"
#include "runtime.h"
#include "trace.h"

static int serve_echo(struct devrt_request *request)
{
    for (uint32_t lane = 0; lane < DEVRT_RPC_MAX_LANES; ++lane) {
        if (!(request->lane_mask >> lane & 1))
            continue;
        const struct devrt_lane_message *m = &request->lane[lane];
        request->reply[lane].word[0] = devrt_rpc_checksum(m->data, m->length);
        request->reply[lane].word[1] = m->length;
    }
    return 0;
}

static int serve_hostcall(struct devrt_request *request)
{
    struct devrt_server *server = &request->module->device->server;
    for (uint32_t lane = 0; lane < DEVRT_RPC_MAX_LANES; ++lane) {
        if (!(request->lane_mask >> lane & 1))
            continue;
        const struct devrt_lane_message *m = &request->lane[lane];
        const struct devrt_hostcall_entry *entry = NULL;
        for (size_t i = 0; i < server->hostcall_count; ++i)
            if (server->hostcalls[i].service == m->arg)
                entry = &server->hostcalls[i];
        if (!entry) {
            snprintf(request->error, sizeof request->error,
                     "host call to service %u, which nobody registered", m->arg);
            return -1;
        }
        request->reply[lane].word[0] = entry->fn(entry->context, m->arg, m->data, m->length);
    }
    return 0;
}

static devrt_request_handler *const handlers[DEVRT_RPC_OPCODE_END] = {
    [DEVRT_RPC_ECHO] = serve_echo,
    [DEVRT_RPC_HOSTCALL] = serve_hostcall,
    [DEVRT_RPC_HEAP_GROW] = devrt_serve_heap_grow,
    [DEVRT_RPC_OUTPUT] = devrt_serve_output,
    [DEVRT_RPC_PRINTF] = devrt_serve_printf,
};

bool devrt_server_handles(uint32_t opcode)
{
    return opcode != 0 && opcode < DEVRT_RPC_OPCODE_END && handlers[opcode];
}

static void record_request_error(devrt_module *module, uint32_t port, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* The device whose request this thread's handler is serving, or NULL. */
static _Thread_local const devrt_device *serving;

bool devrt_server_serving(const devrt_device *device)
{
    return serving == device;
}

static void record_request_error(devrt_module *module, uint32_t port, const char *format, ...)
{
    pthread_mutex_lock(&module->error_lock);
    if (module->request_errors++ == 0) {
        int n = snprintf(module->request_error, sizeof module->request_error, "port %u: ", port);
        va_list args;
        va_start(args, format);
        vsnprintf(module->request_error + n, sizeof module->request_error - (size_t)n, format,
                  args);
        va_end(args);
    }
    pthread_mutex_unlock(&module->error_lock);
}

/*
 * The one-word replies (DEVRT_RPC_WANT_WORD) of the request `tag` names, the first word of
 * each lane's reply packet (0 if it was refused, when REPLY holds nothing), written after
 * everything else the server writes to the buffer: each half's release store pairs with
 * the acquire fence that follows the polling lane's load of it, and a lane that sees its
 * reply owns the port again (rpc.h).
 */
static void answer_words(struct devrt_rpc_buffer *buffer, uint64_t lanes, uint32_t tag,
                         const struct devrt_rpc_packet *reply)
{
    bool refused = devrt_rpc_tag_status(tag) != DEVRT_RPC_OK;
    for (; lanes; lanes &= lanes - 1) {
        uint32_t lane = (uint32_t)__builtin_ctzll(lanes);
        uint64_t word = refused ? 0 : reply[lane].word[0];
        __atomic_store_n(&buffer->reply[lane].half[0], devrt_rpc_reply_half(tag, (uint32_t)word),
                         __ATOMIC_RELEASE);
        __atomic_store_n(&buffer->reply[lane].half[1],
                         devrt_rpc_reply_half(tag, (uint32_t)(word >> 32)), __ATOMIC_RELEASE);
    }
}

/* Serve one port if the device handed it over; returns whether it did. */
static bool serve_port(devrt_module *module, uint32_t index)
{
    struct devrt_rpc_channel *channel = &module->host_channel;
    struct devrt_port_state *port = &module->ports[index];
    if (devrt_backpressure_skips(&module->device->server, port, module->ended_drains > 0))
        return false;
    /* seq_cst: see server_main; on x86 as cheap as acquire. Pairs with the device's flip. */
    uint32_t outbox = __atomic_load_n(&channel->outbox[index], __ATOMIC_SEQ_CST);
    uint32_t inbox = __atomic_load_n(&channel->inbox[index], __ATOMIC_RELAXED);
    if (!devrt_rpc_owns(DEVRT_RPC_SERVER, inbox, outbox))
        return false;
    devrt_faults_step(&module->device->server, DEVRT_SERVER_SEEN);

    struct devrt_rpc_buffer *buffer = &channel->buffers[index];
    /* The fields only: the rest of the header's line is padding. */
    struct devrt_rpc_header header = {0};
    memcpy(&header, &buffer->header, offsetof(struct devrt_rpc_header, unused));
    /* Over the bound on buffered messages the device keeps the port and waits. */
    if (!devrt_backpressure_admits(&module->device->server, port, header.flags,
                                   module->ended_drains > 0))
        return false;

    char why[256];
    uint32_t status = DEVRT_RPC_OK;
    struct devrt_trace *trace = devrt_trace_of(module->device);
    uint64_t trace_start = DEVRT_TRACING(trace) ? devrt_now_ns() : 0;
    /* What the trace says of the request: the header's, until a handler has run. */
    uint32_t opcode = header.opcode, units = 0;
    uint64_t lane_mask = header.lane_mask, bytes = 0;
    /* The handler's replies; only the lanes of an accepted request are zeroed, read or
       written back. */
    struct devrt_rpc_packet reply[DEVRT_RPC_MAX_LANES];
    const char *error =
        devrt_message_accept_packet(module, port, &header, buffer->packet, why, sizeof why);
    devrt_faults_step(&module->device->server, DEVRT_SERVER_READ);
    if (error) {
        record_request_error(module, index, "%s", error);
        status = DEVRT_RPC_REFUSED;
        if (!devrt_faults_keep_refused(&module->device->server))
            devrt_message_forget(&module->device->server, port);
    } else if (!(header.flags & DEVRT_RPC_MORE)) {
        for (uint64_t lanes = port->lane_mask; lanes; lanes &= lanes - 1)
            reply[__builtin_ctzll(lanes)] = (struct devrt_rpc_packet){0};
        struct devrt_request request = {
            .module = module,
            .opcode = port->opcode,
            .lane_mask = port->lane_mask,
            .record = header.record,
            .lane = port->lane,
            .reply = reply,
        };
        serving = module->device;
        int refused = handlers[port->opcode](&request);
        serving = NULL;
        devrt_faults_step(&module->device->server, DEVRT_SERVER_HANDLED);
        opcode = request.opcode;
        lane_mask = request.lane_mask;
        units = request.units;
        bytes = request.bytes;
        if (refused != 0) {
            record_request_error(module, index, "opcode %u: %s", port->opcode, request.error);
            status = DEVRT_RPC_REFUSED;
        }
        if (header.flags & DEVRT_RPC_WANT_REPLY)
            for (uint64_t lanes = port->lane_mask; lanes; lanes &= lanes - 1)
                buffer->packet[__builtin_ctzll(lanes)] = reply[__builtin_ctzll(lanes)];
        devrt_message_forget(&module->device->server, port);
    }
    /* Delays and stalls of the hand-back come before either of its forms. */
    devrt_faults_hand_back(&module->device->server);
    /*
     * A refused request is answered too, every lane it names (a buffer has a slot for each
     * of 64, more than the wave may have): those lanes are polling their slots.
     */
    if ((header.flags & (DEVRT_RPC_MORE | DEVRT_RPC_WANT_WORD)) == DEVRT_RPC_WANT_WORD)
        answer_words(buffer, header.lane_mask, devrt_rpc_tag(outbox, status), reply);
    __atomic_store_n(&channel->inbox[index], devrt_rpc_flip(DEVRT_RPC_SERVER, outbox, status),
                     __ATOMIC_RELEASE);
    devrt_faults_handed(&module->device->server);
    module->packets_taken++;
    module->device->server.packets_taken++;
    /* A message's last packet, or a refusal: one event a request, not one a packet. */
    if (DEVRT_TRACING(trace) && (status != DEVRT_RPC_OK || !(header.flags & DEVRT_RPC_MORE))) {
        module->trace_served_ns = devrt_now_ns();
        devrt_trace_request(trace, trace_start, module->trace_served_ns, index, opcode, lane_mask,
                            units, bytes, status != DEVRT_RPC_OK);
    }
    return true;
}

/*
 * Serve the ports of one module once; returns the number of packets taken. What the ready
 * ring announced before its flip was seen is served here if it has come, and forgotten
 * either way: a pass finds every flip, so the ring's look at those ports is only a
 * shortcut, and a flip that never comes (a client that announced and died) costs nothing.
 */
static size_t serve_module(devrt_module *module)
{
    size_t taken = 0;
    for (uint32_t i = 0; i < module->host_channel.port_count; ++i)
        taken += serve_port(module, i);
    for (uint32_t i = 0; i < module->pending_count; ++i)
        module->ports[module->pending[i]].announced = 0;
    module->pending_count = 0;
    return taken;
}

/* What a look at a port the ready ring announced found (look_announced). */
enum devrt_announced {
    DEVRT_ANNOUNCED_TAKEN, /* a packet: served */
    DEVRT_ANNOUNCED_GONE,  /* the flip is there but was served already, or the bound holds it
                              back: a pass's then */
    DEVRT_ANNOUNCED_LATER  /* the flip has still to arrive (the entry and the flip are two
                              stores, which the host may see in either order) */
};

/* Serve PORT, which the ready ring says was flipped to OUTBOX, if its flip is there. */
static enum devrt_announced look_announced(devrt_module *module, uint32_t port, uint32_t outbox)
{
    if (serve_port(module, port)) {
        module->device->server.found_by_ring++;
        return DEVRT_ANNOUNCED_TAKEN;
    }
    uint32_t seen = __atomic_load_n(&module->host_channel.outbox[port], __ATOMIC_RELAXED);
    return (seen & DEVRT_RPC_COUNT_MASK) == outbox ? DEVRT_ANNOUNCED_GONE : DEVRT_ANNOUNCED_LATER;
}

/*
 * The module's ready ring, from the server's position on, and the ports announced before
 * their flip (include/devrt/rpc.h): a look costs the same whatever the number of ports. A
 * port is on the pending list exactly while its `announced` is set (to the latest value the
 * ring gave it, never 0: no flip counts to 0); the list is looked at first, and a port
 * leaves it once its flip has come. An entry is written when it carries its position's lap;
 * the lap before (a zeroed ring's 0 before the first) means its client has still to store
 * it, and the server stops there. Any other lap (a client a whole ring ahead overwrote it,
 * or a rogue device wrote it) is skipped, as is an entry naming no port or no flip: the
 * passes serve its port.
 */
static size_t serve_ring(devrt_module *module)
{
    const struct devrt_rpc_channel *channel = &module->host_channel;
    if (!channel->ring)
        return 0;
    size_t taken = 0;
    for (uint32_t i = 0; i < module->pending_count;) {
        struct devrt_port_state *state = &module->ports[module->pending[i]];
        enum devrt_announced look = look_announced(module, module->pending[i], state->announced);
        taken += look == DEVRT_ANNOUNCED_TAKEN;
        if (look == DEVRT_ANNOUNCED_LATER) {
            ++i;
        } else {
            state->announced = 0;
            module->pending[i] = module->pending[--module->pending_count];
        }
    }
    uint32_t size = channel->ring_size;
    for (uint32_t looked = 0; looked < size; ++looked) {
        uint32_t head = module->ring_head;
        /* Acquire: pairs with nothing (the store is relaxed), but orders the look at the
           port after it, so that the port is not read older than the entry. */
        uint64_t entry = __atomic_load_n(&channel->ring[head & (size - 1)], __ATOMIC_ACQUIRE);
        uint32_t lap = devrt_rpc_ring_entry_lap(entry);
        if (lap != devrt_rpc_ring_lap(head, size) && lap == devrt_rpc_ring_lap(head - size, size))
            break;
        module->ring_head = head + 1;
        uint32_t port = devrt_rpc_ring_entry_port(entry);
        uint32_t outbox = devrt_rpc_ring_entry_outbox(entry);
        if (lap != devrt_rpc_ring_lap(head, size) || port >= channel->port_count || !outbox)
            continue;
        /*
         * The lines serve_port reads one after another, each a miss of the CPU's caches (the
         * device wrote them), asked for at once: the outbox, the header and the first packet.
         * Once per announcement: a pending port's later looks would fetch lines the device
         * may still be writing.
         */
        __builtin_prefetch(&channel->outbox[port]);
        __builtin_prefetch(&channel->buffers[port].header);
        __builtin_prefetch(&channel->buffers[port].packet[0]);
        enum devrt_announced look = look_announced(module, port, outbox);
        taken += look == DEVRT_ANNOUNCED_TAKEN;
        struct devrt_port_state *state = &module->ports[port];
        if (look == DEVRT_ANNOUNCED_LATER && !state->announced)
            module->pending[module->pending_count++] = port;
        /* A pending port waits for the latest announcement, which its look then settles. */
        if (look == DEVRT_ANNOUNCED_LATER || state->announced)
            state->announced = outbox;
    }
    return taken;
}

/*
 * Every module's ready ring, under the server's lock; returns the packets taken. *RINGS_ONLY
 * says whether looking at the rings alone can find the next request: some module has a
 * ring, no message is unfinished and no packet has been held back for the bound since the
 * last pass. A streaming message's later packets and a held-back packet are found by passes
 * (the ring announces a packet once, and the bound may hold it back then).
 */
static size_t serve_rings(struct devrt_server *server, bool *rings_only)
{
    size_t taken = 0;
    bool rings = false;
    pthread_mutex_lock(&server->lock);
    devrt_faults_step(server, DEVRT_SERVER_LOOK);
    for (devrt_module *m = server->modules; m; m = m->next) {
        taken += serve_ring(m);
        rings |= m->host_channel.ring != NULL;
    }
    *rings_only = rings && !server->buffered && !server->deferred_since_pass;
    pthread_mutex_unlock(&server->lock);
    return taken;
}

static size_t serve_all(struct devrt_server *server)
{
    size_t taken = 0;
    pthread_mutex_lock(&server->lock);
    server->pass_ns = 0; /* read once a pass needs it (backpressure.c) */
    server->deferred_since_pass = false;
    if (devrt_faults_pass(server))
        for (devrt_module *m = server->modules; m; m = m->next)
            taken += serve_module(m);
    server->passes++;
    pthread_cond_broadcast(&server->pass_done);
    pthread_mutex_unlock(&server->lock);
    return taken;
}

/* A spinning thread's pause: it leaves the core's other thread the pipeline. */
static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static bool should_stop(struct devrt_server *server)
{
    pthread_mutex_lock(&server->lock);
    bool stop = server->stop;
    pthread_mutex_unlock(&server->lock);
    return stop;
}

void devrt_server_expect(devrt_device *device, int64_t delta)
{
    struct devrt_server *server = &device->server;
    /*
     * Before the signal, which the server's check under idle_lock then sees or waits for.
     * Only a rise from 0 can find the server waiting: a launch beside others takes no lock.
     */
    if (__atomic_add_fetch(&server->callers, delta, __ATOMIC_SEQ_CST) != delta || delta <= 0)
        return;
    pthread_mutex_lock(&server->idle_lock);
    pthread_cond_signal(&server->work);
    pthread_mutex_unlock(&server->idle_lock);
}

/*
 * With no kernel that may call it, the server blocks until one may (0 % of a CPU, where a
 * poll would wake it every DEVRT_SERVER_POLL_MS); returns whether it had none.
 */
static bool wait_for_callers(struct devrt_server *server)
{
    pthread_mutex_lock(&server->idle_lock);
    bool none = __atomic_load_n(&server->callers, __ATOMIC_SEQ_CST) == 0;
    while (__atomic_load_n(&server->callers, __ATOMIC_SEQ_CST) == 0 &&
           !__atomic_load_n(&server->stopping, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&server->work, &server->idle_lock);
    pthread_mutex_unlock(&server->idle_lock);
    return none;
}

/*
 * Idle, the server sleeps on the doorbell while a kernel may call it, the timeout only
 * bounding a missed wake-up; with none, it blocks until a launch is queued.
 */
static void *server_main(void *arg)
{
    devrt_device *device = arg;
    struct devrt_server *server = &device->server;
    uint64_t passed_ns = 0;
    while (!should_stop(server)) {
        bool rings_only = false;
        size_t taken = serve_rings(server, &rings_only);
        if (taken && rings_only) {
            server->last_taken_ns = devrt_now_ns();
            continue;
        }
        /*
         * Between a busy kernel's requests the server looks at the rings alone, a look that
         * costs the same for any number of ports; a pass over every port (for clients that
         * do not announce) comes once every DEVRT_SERVER_PASS_NS. While messages stream or
         * the bound holds packets back, it passes as well, as before the rings.
         */
        uint64_t now = devrt_now_ns();
        if (rings_only && now - server->last_taken_ns < devrt_server_poll_policy.spin_ns &&
            now - passed_ns < DEVRT_SERVER_PASS_NS &&
            __atomic_load_n(&server->callers, __ATOMIC_RELAXED) > 0) {
            /* A yield, not a pause: on the emulation the lanes that will send the next
               request are threads that may be waiting for this CPU. */
            sched_yield();
            continue;
        }
        passed_ns = now;
        if (serve_all(server) + taken) {
            server->last_taken_ns = devrt_now_ns();
            continue;
        }
        if (wait_for_callers(server))
            continue;
        uint64_t armed = device->ops->arm_doorbell(device);
        /*
         * Devices ring only while the flag is set. Set after arming, so that a device that
         * reads it (and so synchronizes with this) rings after the arming store and its 1
         * stays. An exchange, seq_cst like the rescan's outbox loads (serve_port): with the
         * device's seq_cst flip and load of the flag (devrt_arch_ring_doorbell) it is
         * Dekker's pattern, so the rescan sees the flip of any device that read 0. The
         * arming store alone (HSA: a release store) would let the rescan's loads pass it,
         * and the server would sleep out its timeout on a request it missed. (A fence
         * would say the same, but GCC's ThreadSanitizer refuses fences.)
         */
        __atomic_exchange_n(&device->doorbell->sleeping, 1u, __ATOMIC_SEQ_CST);
        size_t rescued = serve_all(server);
        struct devrt_trace *trace = devrt_trace_of(device);
        uint64_t slept = DEVRT_TRACING(trace) && !rescued ? devrt_now_ns() : 0;
        devrt_faults_wait_doorbell(device, armed, rescued ? 0 : DEVRT_SERVER_POLL_MS);
        if (slept)
            devrt_trace_sleep(trace, slept, devrt_now_ns(), DEVRT_SERVER_POLL_MS);
        /* Relaxed: a device that still reads 1 rings once more, which costs only that. */
        __atomic_store_n(&device->doorbell->sleeping, 0u, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* Where the server runs (placement.c), chosen from the option, the environment, the GPU. */
static int place_server(devrt_device *device, pthread_attr_t *attr)
{
    struct devrt_server *server = &device->server;
    char local[256], why[320];
    bool known =
        device->ops->local_cpus && device->ops->local_cpus(device, local, sizeof local) == 0;
    cpu_set_t allowed;
    bool limited = sched_getaffinity(0, sizeof allowed, &allowed) == 0;
    if (devrt_server_choose_cpus(device->options.server_cpus, getenv("DEVRT_SERVER_CPUS"),
                                 known ? local : NULL, limited ? &allowed : NULL, &server->placed,
                                 why, sizeof why) != 0)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "%s", why);
    if (server->placed.placement == DEVRT_SERVER_ANYWHERE)
        return DEVRT_SUCCESS;
    int error = pthread_attr_setaffinity_np(attr, sizeof server->placed.set, &server->placed.set);
    if (error != 0)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "cannot place the server on CPUs %s: %s",
                          server->placed.list, strerror(error));
    return DEVRT_SUCCESS;
}

int devrt_server_start(devrt_device *device)
{
    struct devrt_server *server = &device->server;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for the server thread");
    int status = place_server(device, &attr);
    if (status != DEVRT_SUCCESS) {
        pthread_attr_destroy(&attr);
        return status;
    }
    server->last_taken_ns = devrt_now_ns();
    pthread_mutex_init(&server->lock, NULL);
    pthread_cond_init(&server->pass_done, NULL);
    pthread_mutex_init(&server->idle_lock, NULL);
    pthread_cond_init(&server->work, NULL);
    server->buffer_budget = DEVRT_SERVER_BUFFER_BUDGET;
    int error = pthread_create(&server->thread, &attr, server_main, device);
    pthread_attr_destroy(&attr);
    if (error == EINVAL && server->placed.placement != DEVRT_SERVER_ANYWHERE)
        status =
            devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                       "cannot place the server on CPUs %s (from %s): none of them is "
                       "available to this process",
                       server->placed.list, devrt_server_placement_name(server->placed.placement));
    else if (error != 0)
        status =
            devrt_fail(DEVRT_ERROR_BACKEND, "cannot start the server thread: %s", strerror(error));
    /* Named here, not by the thread: it has its name when devrt_device_open returns. */
    if (status == DEVRT_SUCCESS)
        pthread_setname_np(server->thread, "devrt-server");
    if (status != DEVRT_SUCCESS) {
        pthread_cond_destroy(&server->pass_done);
        pthread_mutex_destroy(&server->lock);
        pthread_cond_destroy(&server->work);
        pthread_mutex_destroy(&server->idle_lock);
    }
    return status;
}

uint64_t devrt_server_cpu_ns(const devrt_device *device)
{
    clockid_t clock;
    struct timespec t;
    if (pthread_getcpuclockid(device->server.thread, &clock) != 0 || clock_gettime(clock, &t) != 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void devrt_server_stop(devrt_device *device)
{
    struct devrt_server *server = &device->server;
    pthread_mutex_lock(&server->lock);
    server->stop = true;
    devrt_faults_stop(server);
    pthread_mutex_unlock(&server->lock);
    pthread_mutex_lock(&server->idle_lock);
    __atomic_store_n(&server->stopping, true, __ATOMIC_RELEASE);
    pthread_cond_signal(&server->work);
    pthread_mutex_unlock(&server->idle_lock);
    device->ops->ring_doorbell(device);
    pthread_join(server->thread, NULL);
    free(server->hostcalls);
    devrt_text_free(&server->output);
    devrt_text_free(&server->window);
    devrt_text_free(&server->scratch);
    devrt_message_free_spares(server);
    devrt_faults_release(server);
    pthread_cond_destroy(&server->pass_done);
    pthread_mutex_destroy(&server->lock);
    pthread_cond_destroy(&server->work);
    pthread_mutex_destroy(&server->idle_lock);
}

void devrt_server_attach(devrt_device *device, devrt_module *module)
{
    struct devrt_server *server = &device->server;
    pthread_mutex_lock(&server->lock);
    module->next = server->modules;
    server->modules = module;
    pthread_mutex_unlock(&server->lock);
}

void devrt_server_detach(devrt_device *device, devrt_module *module)
{
    struct devrt_server *server = &device->server;
    pthread_mutex_lock(&server->lock);
    for (devrt_module **p = &server->modules; *p; p = &(*p)->next) {
        if (*p == module) {
            *p = module->next;
            break;
        }
    }
    for (uint32_t i = 0; i < module->host_channel.port_count; ++i)
        devrt_message_forget(server, &module->ports[i]);
    pthread_mutex_unlock(&server->lock);
}

static bool module_idle(const devrt_module *module)
{
    const struct devrt_rpc_channel *channel = &module->host_channel;
    for (uint32_t i = 0; i < channel->port_count; ++i) {
        uint32_t outbox = __atomic_load_n(&channel->outbox[i], __ATOMIC_ACQUIRE);
        if (devrt_rpc_owns(DEVRT_RPC_SERVER, __atomic_load_n(&channel->inbox[i], __ATOMIC_RELAXED),
                           outbox))
            return false;
    }
    return true;
}

bool devrt_server_has_request(const struct devrt_server *server)
{
    for (const devrt_module *m = server->modules; m; m = m->next)
        if (!module_idle(m))
            return true;
    return false;
}

/* Whether the module's kernels are still known to have ended (devrt_server_drain). */
static bool still_ended(const devrt_module *module, bool ended, uint64_t queued)
{
    return ended && (queued == DEVRT_DRAIN_ENDED ||
                     __atomic_load_n(&module->launches_queued, __ATOMIC_RELAXED) == queued);
}

void devrt_server_drain(devrt_device *device, devrt_module *module, bool ended, uint64_t queued)
{
    struct devrt_server *server = &device->server;
    pthread_mutex_lock(&server->lock);
    bool counted = false;
    while (!module_idle(module)) {
        /* A launch queued meanwhile may be running: its messages are held to the bound. */
        if (counted != still_ended(module, ended, queued)) {
            counted = !counted;
            module->ended_drains += counted ? 1 : -1;
        }
        device->ops->ring_doorbell(device);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 10 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&server->pass_done, &server->lock, &until);
    }
    /*
     * The kernels are gone: a message they left unfinished will never be completed. Only
     * a packet taken since the last look can have left one (the ports' state is megabytes).
     */
    if (counted)
        module->ended_drains--;
    /* Under the lock the server takes packets with: none of a later launch's is taken now. */
    if (!still_ended(module, ended, queued) || module->packets_taken == module->packets_drained) {
        pthread_mutex_unlock(&server->lock);
        return;
    }
    module->packets_drained = module->packets_taken;
    for (uint32_t i = 0; i < module->host_channel.port_count; ++i) {
        if (module->ports[i].streaming) {
            devrt_message_forget(server, &module->ports[i]);
            record_request_error(module, i, "the kernel ended in the middle of a message");
        }
    }
    pthread_mutex_unlock(&server->lock);
}

uint64_t devrt_server_served_ns(devrt_device *device, devrt_module *module)
{
    pthread_mutex_lock(&device->server.lock);
    uint64_t served = module->trace_served_ns;
    pthread_mutex_unlock(&device->server.lock);
    return served;
}

/*
 * A wave that ends while it holds a port (a lane raising between devrt_printf_begin and
 * devrt_printf_end; on AMD s_endpgm ends the whole wave) leaves the port's state word
 * LOCKED, and after as many such launches as there are ports every request would wait
 * forever. Once the kernel has ended and been drained no wave holds a port, so every LOCKED
 * word is a leak: it gets the outbox value the device last wrote (host memory, which the
 * dead wave may have flipped since it took the port) and SETTLED, since drained means the
 * server has handed every port back. Like the exception record, this assumes no other
 * launch of the module is running.
 */
int devrt_server_reclaim_ports(devrt_device *device, devrt_module *module)
{
    const struct devrt_rpc_channel *channel = &module->host_channel;
    size_t bytes = channel->port_count * sizeof(uint32_t);
    uint32_t *state = malloc(bytes);
    if (!state)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory to check the RPC ports");
    int status = DEVRT_SUCCESS;
    if (device->ops->read(device, state, channel->state, bytes) != 0) {
        status = devrt_fail(DEVRT_ERROR_BACKEND, "cannot read the RPC ports' state");
    } else {
        bool leaked = false;
        for (uint32_t i = 0; i < channel->port_count; ++i) {
            if (!devrt_rpc_port_state_locked(state[i]))
                continue;
            /* The kernel has ended: the relaxed load pairs with nothing still running. */
            uint32_t outbox = __atomic_load_n(&channel->outbox[i], __ATOMIC_RELAXED);
            state[i] = devrt_rpc_port_state_of(outbox, true);
            leaked = true;
        }
        if (leaked && device->ops->write(device, channel->state, state, bytes) != 0)
            status = devrt_fail(DEVRT_ERROR_BACKEND, "cannot take back the RPC ports");
    }
    free(state);
    return status;
}

/*
 * The doorbell of a device that cannot wake a host thread (CUDA, and what devrt is attached
 * to): the device sets doorbell->count after each request and the server polls it, with
 * the sleeps of devrt_server_poll_policy (poll_policy.c) between looks. A look reads that
 * one word; the ports are scanned only once it is set.
 */
uint64_t devrt_polled_arm_doorbell(devrt_device *device)
{
    (void)device;
    return 0;
}

void devrt_polled_ring_doorbell(devrt_device *device)
{
    __atomic_store_n(&device->doorbell->count, 1u, __ATOMIC_SEQ_CST);
}

void devrt_polled_wait_doorbell(devrt_device *device, uint64_t armed, uint32_t timeout_ms)
{
    (void)armed;
    if (!timeout_ms)
        return;
    static _Thread_local bool slack_set;
    if (!slack_set) {
        /* Sleeps of microseconds, not the default 50 us of timer slack. */
        prctl(PR_SET_TIMERSLACK, 1000ul, 0ul, 0ul, 0ul);
        slack_set = true;
    }
    uint32_t *word = &device->doorbell->count;
    const struct devrt_poll_policy *policy = &devrt_server_poll_policy;
    /* Written by this thread only (server_main): the server is the one caller. */
    uint64_t quiet_since = device->server.last_taken_ns;
    uint64_t start = devrt_now_ns(), limit = (uint64_t)timeout_ms * 1000000u;
    uint64_t sleep = devrt_poll_first_sleep(policy, start - quiet_since);
    while (!__atomic_load_n(word, __ATOMIC_ACQUIRE)) {
        uint64_t now = devrt_now_ns();
        if (now - start >= limit)
            return;
        sleep = devrt_poll_sleep(policy, now - quiet_since, sleep);
        if (!sleep) {
            relax();
            sleep = devrt_poll_first_sleep(policy, 0);
            continue;
        }
        struct timespec pause = {0, (long)sleep};
        nanosleep(&pause, NULL);
        sleep *= 2;
    }
    /* A full barrier: the server's next look at the ports comes after the clear. */
    __atomic_exchange_n(word, 0u, __ATOMIC_SEQ_CST);
}

int devrt_register_hostcall(devrt_device *device, uint32_t service, devrt_hostcall_fn *fn,
                            void *context)
{
    if (!device || !fn)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "devrt_register_hostcall: no device or function");
    struct devrt_server *server = &device->server;
    pthread_mutex_lock(&server->lock);
    int status = DEVRT_SUCCESS;
    size_t i = 0;
    while (i < server->hostcall_count && server->hostcalls[i].service != service)
        ++i;
    if (i == server->hostcall_count) {
        struct devrt_hostcall_entry *grown =
            realloc(server->hostcalls, (i + 1) * sizeof *server->hostcalls);
        if (grown) {
            server->hostcalls = grown;
            server->hostcall_count++;
        } else {
            status = devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a host call");
        }
    }
    if (status == DEVRT_SUCCESS)
        server->hostcalls[i] = (struct devrt_hostcall_entry){service, fn, context};
    pthread_mutex_unlock(&server->lock);
    return status;
}
