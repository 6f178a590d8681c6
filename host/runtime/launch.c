/*
 * Launches: streams, the order of a module's launches, each launch's exception record, and
 * taking a launch's report (devrt_launch, devrt_launch_async, the waits).
 *
 * - Records. Each launch has an exception record in host-visible memory (a slot, from the
 *   module's pool, slots.c), so the host resets and reads it without a copy. The state block points
 *   at the current one; a launch gets a slot of its own, and the state is pointed at it in
 *   stream order (backend: a stream write, or a store before the launch runs), only when
 *   the module's last launch's report is still untaken or that launch raised. A run of
 *   synchronous launches that raise nothing reuses one slot and touches no device memory.
 * - The claim word (abi.h) holds the slot of the last launch that raised: that slot is
 *   never handed out again until another launch raises.
 * - Order. A module's launches run in the order queued: the backends with queues order them
 *   themselves (enqueue), the others run on one thread per stream, each launch waiting for
 *   the module's earlier ones (module_order), and devrt_launch on the caller's thread.
 * - Reports. Taking a launch's report waits for it, drains the server if the module's
 *   kernels left requests, flushes the output, then reads the slot: its output is written
 *   before its report line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime.h"
#include "slots.h"
#include "trace.h"

static bool has_queues(const devrt_device *device)
{
    return device->ops->submit != NULL;
}

/*
 * E to the backend's queue, after everything the module queued before it: the launch
 * before it on another stream and the latest kernel past its timeout are waited for on E's
 * stream, then the state is pointed at E's record, then the kernel goes. Where the backend
 * writes the state at once rather than in stream order, it must wait for the launch before
 * to end first: a raise of that launch would otherwise land in E's record. DEVRT_ENQUEUE_NOT_YET,
 * with nothing done, while E must wait. Under the lock.
 */
static int enqueue(devrt_module *module, struct devrt_launch_entry *e, const struct devrt_arg *args,
                   size_t arg_count)
{
    const struct devrt_backend_ops *ops = module->device->ops;
    if (ops->queue_full && ops->queue_full(module->device))
        return DEVRT_ENQUEUE_NOT_YET;
    /* Not past a runaway: it may never end. The queue still runs E after it. */
    if (e->new_slot && !ops->state_in_stream_order && e->after && !e->after_runaway &&
        !ops->ended(e->after))
        return DEVRT_ENQUEUE_NOT_YET;
    int status = DEVRT_SUCCESS;
    if (ops->order_after && e->after && e->after->stream != e->stream)
        status = ops->order_after(e, e->after);
    if (status == DEVRT_SUCCESS && ops->order_after && e->after_runaway)
        status = ops->order_after(e, e->after_runaway);
    if (status == DEVRT_SUCCESS && e->new_slot && ops->point_state)
        status = ops->point_state(e);
    if (status == DEVRT_SUCCESS)
        status = ops->submit(e, args, arg_count);
    return status;
}

void devrt_launches_init(devrt_device *device)
{
    struct devrt_launches *l = &device->launches;
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->changed, NULL);
    l->next_id = 1;
}

struct devrt_exception_record *devrt_launches_attach(devrt_module *module)
{
    struct devrt_launches *l = &module->device->launches;
    pthread_mutex_lock(&l->lock);
    module->slot = devrt_slot_take(module);
    pthread_mutex_unlock(&l->lock);
    return module->slot;
}

static void list_append(struct devrt_launch_list *list, struct devrt_launch_entry *e,
                        enum devrt_launch_list_kind kind)
{
    e->link[kind] = (struct devrt_launch_link){.prev = list->tail};
    *(list->tail ? &list->tail->link[kind].next : &list->head) = e;
    list->tail = e;
}

static void list_remove(struct devrt_launch_list *list, struct devrt_launch_entry *e,
                        enum devrt_launch_list_kind kind)
{
    struct devrt_launch_link *link = &e->link[kind];
    *(link->prev ? &link->prev->link[kind].next : &list->head) = link->next;
    *(link->next ? &link->next->link[kind].prev : &list->tail) = link->prev;
}

static void link_entry(devrt_device *device, struct devrt_launch_entry *e)
{
    list_append(&device->launches.launches, e, DEVRT_LAUNCHES_OF_DEVICE);
    list_append(&e->stream->launches, e, DEVRT_LAUNCHES_OF_STREAM);
}

static void unlink_entry(devrt_device *device, struct devrt_launch_entry *e)
{
    list_remove(&device->launches.launches, e, DEVRT_LAUNCHES_OF_DEVICE);
    list_remove(&e->stream->launches, e, DEVRT_LAUNCHES_OF_STREAM);
}

static void free_entry(struct devrt_launch_entry *e)
{
    free((char *)e->kernel);
    free(e->args);
    free(e->run_error);
    free(e->result);
    free(e);
}

/* The launches of a backend without queues, run on their stream's thread. */
static void run_entry(struct devrt_launch_entry *e)
{
    devrt_module *module = e->module;
    devrt_device *device = module->device;
    int status = DEVRT_SUCCESS;
    bool traced = DEVRT_TRACING(devrt_trace_of(device));
    if (traced)
        e->started_ns = devrt_now_ns();
    if (e->new_slot &&
        device->ops->write(device, &module->state->exception, &e->slot, sizeof e->slot) != 0)
        status = devrt_fail(DEVRT_ERROR_BACKEND, "cannot point the state at a launch's record");
    if (status == DEVRT_SUCCESS)
        status = device->ops->launch(module, e->kernel, &e->config, e->args, e->arg_count);
    if (traced)
        e->ended_ns = devrt_now_ns();
    e->run_status = status;
    if (status != DEVRT_SUCCESS)
        e->run_error = strdup(devrt_last_error());
    /*
     * Past its timeout the lanes were stopped, perhaps holding ports or the heap's grow locks.
     * Take them back here, before the module's next launch can start (it waits for this one
     * to count as run), not when this one's result is taken, which may be after it.
     */
    if (status == DEVRT_ERROR_TIMEOUT) {
        /* The module's next launch waits for this one to count as run. */
        devrt_server_drain(device, module, true, DEVRT_DRAIN_ENDED);
        if (devrt_server_reclaim_ports(device, module) != DEVRT_SUCCESS ||
            devrt_heap_reclaim_locks(module) != DEVRT_SUCCESS) {
            free(e->run_error);
            e->run_error = strdup(devrt_last_error());
            e->run_status = DEVRT_ERROR_BACKEND;
        }
    }
}

/* Runs E once the module's earlier launches have run; the lock is held on entry and exit. */
static void run_in_order(struct devrt_launches *l, struct devrt_launch_entry *e)
{
    devrt_module *module = e->module;
    if (module->launches_run != e->module_order)
        devrt_faults_launch_event(module, DEVRT_LAUNCH_HELD);
    while (module->launches_run != e->module_order)
        pthread_cond_wait(&l->changed, &l->lock);
    pthread_mutex_unlock(&l->lock);
    run_entry(e);
    pthread_mutex_lock(&l->lock);
    e->ran = true;
    module->launches_run++;
    pthread_cond_broadcast(&l->changed);
}

static void *stream_main(void *arg)
{
    devrt_stream *s = arg;
    struct devrt_launches *l = &s->device->launches;
    pthread_setname_np(pthread_self(), "devrt-stream");
    pthread_mutex_lock(&l->lock);
    for (;;) {
        while (!s->stop && !s->next_to_run)
            pthread_cond_wait(&s->work, &l->lock);
        struct devrt_launch_entry *e = s->next_to_run;
        if (!e)
            break;
        run_in_order(l, e);
        s->next_to_run = e->link[DEVRT_LAUNCHES_OF_STREAM].next;
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

/* Under the lock. NULL with the error set. */
static devrt_stream *new_stream(devrt_device *device, bool with_queue)
{
    devrt_stream *s = calloc(1, sizeof *s);
    if (!s) {
        devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a stream");
        return NULL;
    }
    s->device = device;
    s->number = device->launches.streams_made++;
    pthread_cond_init(&s->work, NULL);
    if (with_queue && device->ops->stream_create && device->ops->stream_create(s) != 0) {
        pthread_cond_destroy(&s->work);
        free(s);
        return NULL;
    }
    s->next = device->launches.streams;
    device->launches.streams = s;
    return s;
}

/* The stream a launch goes on; under the lock. NULL with the error set. */
static devrt_stream *stream_for(devrt_device *device, devrt_stream *stream)
{
    if (stream)
        return stream;
    /* The default stream is the backend's own queue (stream->backend NULL). */
    if (!device->launches.default_stream) {
        device->launches.default_stream = new_stream(device, false);
        if (device->launches.default_stream)
            device->launches.default_stream->is_default = true;
    }
    return device->launches.default_stream;
}

/*
 * Give E its order, its slot and its place after the module's last launch, and hand it to
 * the backend's queue or the stream's thread. Under the lock; on failure nothing is queued.
 */
static int queue_entry(devrt_module *module, struct devrt_launch_entry *e,
                       const struct devrt_arg *args, size_t arg_count)
{
    devrt_device *device = module->device;
    struct devrt_launches *l = &device->launches;
    int lost = devrt_device_check_lost(device);
    if (lost != DEVRT_SUCCESS)
        return lost;
    if (!module->slot_owner && module->slot && module->slot != module->raised_slot) {
        e->slot = module->slot;
        e->new_slot = false;
        memset(e->slot, 0, sizeof *e->slot);
    } else {
        e->slot = devrt_slot_take(module);
        if (!e->slot)
            return DEVRT_ERROR_OUT_OF_MEMORY;
        e->new_slot = true;
    }
    e->module = module;
    /*
     * Counted before the enqueue, which may start the kernel at once: a drain that read the
     * count before knows then that the module's kernels may run again.
     */
    e->module_order = __atomic_fetch_add(&module->launches_queued, 1, __ATOMIC_RELAXED);
    /* Until conclude knows it ended, or a runaway's release: the server stays awake. */
    devrt_server_expect(device, 1);
    if (DEVRT_TRACING(devrt_trace_of(device)))
        e->queued_ns = devrt_now_ns();
    e->after = module->last;
    /*
     * A kernel that ran on past its timeout is still before it, its report taken or not.
     * The latest is enough: it was itself queued after the earlier ones.
     */
    e->after_runaway = module->runaways;
    if (e->id)
        e->id = l->next_id++;
    if (has_queues(device)) {
        int status = enqueue(module, e, args, arg_count);
        e->after = e->after_runaway = NULL;
        if (status != DEVRT_SUCCESS) {
            __atomic_fetch_sub(&module->launches_queued, 1, __ATOMIC_RELAXED);
            devrt_server_expect(device, -1);
            if (status == DEVRT_ENQUEUE_NOT_YET && e->new_slot) {
                /* Nothing was written: the module's record stays as it was. */
                devrt_slot_give_back(module, e->slot);
            } else if (e->new_slot) {
                devrt_slot_give_back(module, e->slot);
                /* The state may point at it or not: the next launch points it anew. */
                module->slot = NULL;
                module->slot_owner = NULL;
            }
            return status;
        }
    }
    e->after = e->after_runaway = NULL;
    module->slot = e->slot;
    module->slot_owner = e;
    module->last = e;
    if (e->id) {
        link_entry(device, e);
        devrt_stream *s = e->stream;
        if (!has_queues(device)) {
            if (!s->next_to_run)
                s->next_to_run = e;
            pthread_cond_signal(&s->work);
        }
    }
    return DEVRT_SUCCESS;
}

/*
 * queue_entry, under the lock; while the backend must wait before it can queue E (the
 * module's last launch has yet to end), the lock is let go between the tries, so that the
 * device's other launches, waits and reports go on meanwhile.
 */
static int queue_entry_when_ready(devrt_module *module, struct devrt_launch_entry *e,
                                  const struct devrt_arg *args, size_t arg_count)
{
    struct devrt_launches *l = &module->device->launches;
    struct timespec pause = {0, 50000};
    int status;
    bool held = false;
    while ((status = queue_entry(module, e, args, arg_count)) == DEVRT_ENQUEUE_NOT_YET) {
        if (!held)
            devrt_faults_launch_event(module, DEVRT_LAUNCH_HELD);
        held = true;
        pthread_mutex_unlock(&l->lock);
        nanosleep(&pause, NULL);
        pthread_mutex_lock(&l->lock);
    }
    return status;
}

/* Wait for E to end: the backend's queue, or the thread that runs it. */
static int wait_ended(struct devrt_launch_entry *e)
{
    devrt_device *device = e->module->device;
    if (has_queues(device))
        return device->ops->complete(e, devrt_deadline(e->config.timeout_ns));
    struct devrt_launches *l = &device->launches;
    pthread_mutex_lock(&l->lock);
    while (!e->ran)
        pthread_cond_wait(&l->changed, &l->lock);
    pthread_mutex_unlock(&l->lock);
    if (e->run_status != DEVRT_SUCCESS)
        return devrt_fail(e->run_status, "%s", e->run_error ? e->run_error : "launch failed");
    return DEVRT_SUCCESS;
}

/* The report of a launch that ran, from its record and the module's refused requests. */
static int make_report(struct devrt_launch_entry *e, bool raised, bool read_strings,
                       struct devrt_launch_report *report)
{
    devrt_module *module = e->module;
    int status = DEVRT_SUCCESS;
    memset(report, 0, sizeof *report);
    report->launch = e->id;
    if (raised) {
        devrt_describe_exception(module, e->kernel, &e->config, e->slot, read_strings, report);
        status = DEVRT_ERROR_EXCEPTION;
    }
    pthread_mutex_lock(&module->error_lock);
    if (status == DEVRT_SUCCESS && module->request_errors) {
        report->code = DEVRT_EXCEPTION_DEVICE_ERROR;
        snprintf(report->message, sizeof report->message, "%s", module->request_error);
        snprintf(report->text, sizeof report->text,
                 "kernel %s sent %u malformed request%s; the first: %s", e->kernel,
                 module->request_errors, module->request_errors == 1 ? "" : "s",
                 module->request_error);
        status = DEVRT_ERROR_DEVICE_REQUEST;
    }
    module->request_errors = 0;
    module->request_error[0] = '\0';
    pthread_mutex_unlock(&module->error_lock);
    if (status != DEVRT_SUCCESS && e->id) {
        /* "kernel K ..." becomes "kernel K (launch N) ...". */
        char text[sizeof report->text];
        size_t head = strlen("kernel ") + strlen(e->kernel);
        if (strlen(report->text) >= head) {
            snprintf(text, sizeof text, "kernel %s (launch %" PRIu64 ")%s", e->kernel, e->id,
                     report->text + head);
            memcpy(report->text, text, sizeof text);
        }
    }
    return status;
}

/*
 * E's kernel runs on past its timeout: a copy of E keeps its backend handles (its event or
 * completion signal), which the module's later launches are ordered after (queue_entry),
 * on any stream. Under the lock. Without memory for the copy, the handles are left to the
 * kernel and only its own stream or queue orders what follows.
 */
static void keep_runaway(struct devrt_launch_entry *e)
{
    devrt_module *module = e->module;
    struct devrt_launch_entry *kept = calloc(1, sizeof *kept);
    devrt_stream *stream = stream_for(module->device, NULL); /* outlives E's own */
    if (!kept || !stream) {
        free(kept);
        return;
    }
    kept->module = module;
    kept->stream = stream;
    kept->module_order = e->module_order;
    /* Its timeout for the unload's last wait; its name may go with E. */
    kept->config = e->config;
    kept->kernel = "(run past its timeout)";
    memcpy(kept->backend, e->backend, sizeof kept->backend);
    memset(e->backend, 0, sizeof e->backend);
    /* Reports are taken in any order: the list is kept in the launches' order. */
    struct devrt_launch_entry **at = &module->runaways;
    while (*at && (*at)->module_order > kept->module_order)
        at = &(*at)->next_runaway;
    kept->next_runaway = *at;
    *at = kept;
}

/*
 * The runaways queued before the launch of module order ORDER, which has ended after
 * them: their handles go back to the backend. Under the lock.
 */
static void release_runaways(devrt_module *module, uint64_t order)
{
    struct devrt_launch_entry **at = &module->runaways;
    while (*at) {
        struct devrt_launch_entry *r = *at;
        if (r->module_order >= order) {
            at = &r->next_runaway;
            continue;
        }
        *at = r->next_runaway;
        if (module->device->ops->release)
            module->device->ops->release(r);
        free(r);
        devrt_server_expect(module->device, -1);
    }
}

/*
 * Wait for E, make its report and write its line, then give back its slot and the
 * backend's hold on it. E stays linked; nobody else takes it meanwhile.
 */
static int conclude(struct devrt_launch_entry *e, struct devrt_launch_report *report)
{
    devrt_module *module = e->module;
    devrt_device *device = module->device;
    struct devrt_launches *l = &device->launches;
    int status = wait_ended(e);
    /*
     * Past its timeout the emulation has stopped the kernel's lanes; a backend with queues
     * cannot, and the kernel runs on: it may still send requests and write its record.
     */
    bool stopped = status == DEVRT_ERROR_TIMEOUT && !has_queues(device);
    bool running = status == DEVRT_ERROR_TIMEOUT && !stopped;
    /* Nothing of the device can be read any more: what the server has is all there is. */
    bool lost = status == DEVRT_ERROR_DEVICE_LOST;
    /* The launch has ended (an event, a join): its stores to the record are visible. */
    bool recorded = !running && __atomic_load_n(&e->slot->word, __ATOMIC_ACQUIRE) != 0;
    bool raised = status == DEVRT_SUCCESS && recorded;
    /*
     * A raise that came before the timeout is reported with it: a whole record, whose
     * detail_ready the raising lane stores last with release (the kernel may still run).
     * A kernel that runs on may still raise later; that is never reported, as its output
     * after this is not.
     */
    bool raised_in_time = status == DEVRT_ERROR_TIMEOUT &&
                          __atomic_load_n(&e->slot->detail_ready, __ATOMIC_ACQUIRE) &&
                          __atomic_load_n(&e->slot->word, __ATOMIC_RELAXED) != 0;
    pthread_mutex_lock(&l->lock);
    bool last = module->last == e;
    uint64_t queued = module->launches_queued;
    bool ports_owed = module->ports_owed;
    pthread_mutex_unlock(&l->lock);
    /*
     * Everything the kernel sent, its output included, is taken before anything is reported.
     * Not from a kernel that runs on: it may keep the ports busy, and the drain would never
     * end; the server goes on serving it, and what it sent so far is flushed below. A
     * stopped kernel was drained as soon as it ended (run_entry).
     */
    struct devrt_trace *trace = devrt_trace_of(device);
    /* The host sees a queued kernel end when its wait returns; the emulation's, itself. */
    uint64_t ended_ns = DEVRT_TRACING(trace) && !e->ended_ns ? devrt_now_ns() : e->ended_ns;
    if (!running && !stopped && !lost)
        devrt_server_drain(device, module, last, queued);
    /*
     * The launch lasts until the server has finished what its kernel sent: a request may
     * still be served as the kernel ends, or be left to the drain. Only the module's last
     * launch: a later one's requests may have been served since.
     */
    if (DEVRT_TRACING(trace) && last) {
        uint64_t served = devrt_server_served_ns(device, module);
        ended_ns = served > ended_ns ? served : ended_ns;
    }
    /* Once the launch has returned, none of its output reaches the program (docs/output.md). */
    if (running)
        devrt_output_mute(module, e->slot);
    devrt_output_flush(module);
    /*
     * A raise or a fault (DEVRT_ERROR_LAUNCH) ends waves that may hold ports. When no other
     * launch of the module runs, the ports still locked are theirs: take them back. (A stop's
     * were taken back as soon as it ended: run_entry.) Under the lock, and only while no
     * launch has been queued since: a launch queued meanwhile may already hold ports, which
     * the take-back would free under it. The module then owes the take-back, and the next
     * of its launches concluded with none after it makes it.
     */
    if (last && (raised || status == DEVRT_ERROR_LAUNCH || ports_owed)) {
        char why[256];
        snprintf(why, sizeof why, "%s", devrt_last_error());
        devrt_faults_before_reclaim(module);
        int reclaimed = DEVRT_SUCCESS;
        pthread_mutex_lock(&l->lock);
        bool alone = module->last == e && module->launches_queued == queued;
        if (alone)
            reclaimed = devrt_server_reclaim_ports(device, module);
        module->ports_owed = !alone;
        pthread_mutex_unlock(&l->lock);
        if (status != DEVRT_SUCCESS)
            devrt_fail(status, "%s", why);
        else if (reclaimed != DEVRT_SUCCESS)
            status = reclaimed;
    }
    if (stopped) {
        /* The stop cut the kernel's last messages short: the timeout is its report. */
        pthread_mutex_lock(&module->error_lock);
        module->request_errors = 0;
        module->request_error[0] = '\0';
        pthread_mutex_unlock(&module->error_lock);
    }
    struct devrt_launch_report local;
    if (!report)
        report = &local;
    char timeout[256] = "";
    if (status == DEVRT_SUCCESS) {
        status = make_report(e, raised, true, report);
    } else if (raised_in_time) {
        snprintf(timeout, sizeof timeout, "%s", devrt_last_error());
        make_report(e, true, !running, report);
    } else {
        memset(report, 0, sizeof *report);
        if (lost) {
            /* The report names the launch and the fault, as an exception's does. */
            report->launch = e->id;
            snprintf(report->text, sizeof report->text, "%s", devrt_last_error());
        }
    }

    pthread_mutex_lock(&l->lock);
    if (recorded && e->module_order >= module->raised_order) {
        module->raised_slot = e->slot;
        module->raised_order = e->module_order;
    }
    if (running) {
        /* The kernel may still write its record: the slot is never handed out again (the
           module frees it at unload), and the next launch points the state at a new one. */
        if (module->slot_owner == e) {
            module->slot_owner = NULL;
            module->slot = NULL;
        }
        keep_runaway(e);
    } else if (module->slot_owner == e) {
        module->slot_owner = NULL;
    } else {
        devrt_slot_give_back(module, e->slot);
    }
    if (module->last == e)
        module->last = NULL;
    if (!running) {
        devrt_server_expect(device, -1);
        if (device->ops->release)
            device->ops->release(e);
        /* E was ordered after every runaway older than it: those have ended. */
        if (status != DEVRT_ERROR_TIMEOUT)
            release_runaways(module, e->module_order);
    }
    pthread_mutex_unlock(&l->lock);

    if (DEVRT_TRACING(trace)) {
        devrt_trace_launch(trace, e, e->queued_ns, e->started_ns, ended_ns, status);
        if (status == DEVRT_ERROR_EXCEPTION || status == DEVRT_ERROR_DEVICE_REQUEST ||
            raised_in_time)
            devrt_trace_exception(trace, e, ended_ns, report->text);
    }
    if (status == DEVRT_ERROR_EXCEPTION || status == DEVRT_ERROR_DEVICE_REQUEST || raised_in_time) {
        if (module->report_file) {
            fprintf(module->report_file, "%s\n", report->text);
            fflush(module->report_file);
        }
        if (raised_in_time)
            return devrt_fail(status, "%s; before it, %s", timeout, report->text);
        return devrt_fail(status, "%s", report->text);
    }
    return status;
}

/* Take E's report, made now or when its module was unloaded, and free E. */
static int take(struct devrt_launch_entry *e, struct devrt_launch_report *report)
{
    devrt_device *device = e->stream->device;
    struct devrt_launches *l = &device->launches;
    int status;
    if (e->finished) {
        status = e->status;
        if (report && e->result)
            *report = *e->result;
        if (status != DEVRT_SUCCESS)
            devrt_fail(status, "%s",
                       e->result && e->result->text[0] ? e->result->text
                       : e->run_error                  ? e->run_error
                                                       : "launch failed");
    } else {
        status = conclude(e, report);
    }
    pthread_mutex_lock(&l->lock);
    unlink_entry(device, e);
    /* An unload waiting for the wait that had E (devrt_launches_detach) looks again. */
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->lock);
    free_entry(e);
    return status;
}

bool devrt_launches_detach(devrt_module *module)
{
    devrt_device *device = module->device;
    struct devrt_launches *l = &device->launches;
    pthread_mutex_lock(&l->lock);
    for (;;) {
        struct devrt_launch_entry *e = l->launches.head;
        while (e && (e->module != module || e->finished))
            e = e->link[DEVRT_LAUNCHES_OF_DEVICE].next;
        if (!e)
            break;
        /* A wait has it and concludes it: once that wait has unlinked it, look again. */
        if (e->taken) {
            devrt_faults_launch_event(module, DEVRT_LAUNCH_DETACH_WAITS);
            pthread_cond_wait(&l->changed, &l->lock);
            continue;
        }
        e->detaching = true;
        pthread_mutex_unlock(&l->lock);
        struct devrt_launch_report *result = calloc(1, sizeof *result);
        int status = conclude(e, result);
        if (status != DEVRT_SUCCESS && status != DEVRT_ERROR_EXCEPTION &&
            status != DEVRT_ERROR_DEVICE_REQUEST && !e->run_error)
            e->run_error = strdup(devrt_last_error());
        pthread_mutex_lock(&l->lock);
        e->finished = true;
        e->status = status;
        e->result = result;
        e->module = NULL;
        e->detaching = false;
        pthread_cond_broadcast(&l->changed);
    }
    /*
     * The module's code and memory go next: a kernel that runs on past its timeout must end
     * first, where the backend can end it (HSA ends its queue). Where it cannot (CUDA), the
     * kernel gets one more timeout to end; if it still runs, the module's code, memory and
     * records are left to it, and the caller is told (module.c).
     */
    bool stopped = module->runaways && device->ops->stop_runaways;
    bool left = false;
    if (stopped) {
        device->ops->stop_runaways(module, module->runaways);
    } else if (module->runaways && !device->ops->complete) {
        left = true;
    } else if (module->runaways) {
        pthread_mutex_unlock(&l->lock);
        for (struct devrt_launch_entry *r = module->runaways; r; r = r->next_runaway) {
            /* Never without a bound (a deadline of 0 is none): no timeout, one look. */
            uint64_t timeout = r->config.timeout_ns;
            uint64_t deadline = timeout ? devrt_deadline(timeout) : devrt_now_ns();
            left |= device->ops->complete(r, deadline) == DEVRT_ERROR_TIMEOUT;
        }
        pthread_mutex_lock(&l->lock);
    }
    while (module->runaways) {
        struct devrt_launch_entry *r = module->runaways;
        module->runaways = r->next_runaway;
        /* A kernel left running keeps its handles, which its end would signal. */
        if (!left && device->ops->release)
            device->ops->release(r);
        free(r);
        devrt_server_expect(device, -1);
    }
    if (!left) { /* else a kernel left running may still raise into its record */
        devrt_slots_free(module);
    }
    pthread_mutex_unlock(&l->lock);
    return left;
}

int devrt_launches_check(devrt_module *module, const char *kernel,
                         const struct devrt_launch_config *config,
                         struct devrt_launch_report *report)
{
    devrt_device *device = module->device;
    struct devrt_launches *l = &device->launches;
    /* The kernels ran as one launch that has ended, whose record is the module's current. */
    struct devrt_launch_entry e = {
        .module = module, .kernel = kernel, .config = *config, .ran = true};
    pthread_mutex_lock(&l->lock);
    /* One check at a time: each takes the record the state points at, and the next starts
       clean. */
    while (module->checking)
        pthread_cond_wait(&l->changed, &l->lock);
    module->checking = true;
    e.slot = module->slot;
    e.module_order = __atomic_fetch_add(&module->launches_queued, 1, __ATOMIC_RELAXED);
    devrt_server_expect(device, 1); /* conclude counts the check's kernels ended */
    module->launches_run++;
    module->slot_owner = &e;
    module->last = &e;
    pthread_mutex_unlock(&l->lock);
    int status = conclude(&e, report);
    /*
     * A record that raised stays in the claim word, so no lane can claim it again: the
     * kernels the program launches next get a fresh one, which the state points at now,
     * while none of them runs. One that did not raise is clean and stays.
     */
    pthread_mutex_lock(&l->lock);
    if (module->slot == module->raised_slot) {
        struct devrt_exception_record *fresh = devrt_slot_take(module);
        if (!fresh ||
            device->ops->write(device, &module->state->exception, &fresh, sizeof fresh) != 0) {
            if (fresh)
                devrt_slot_give_back(module, fresh);
            status =
                devrt_fail(DEVRT_ERROR_BACKEND,
                           "%s: cannot point the state at a new exception record", module->path);
        } else {
            devrt_slot_give_back(module, module->slot);
            module->slot = fresh;
        }
    }
    module->checking = false;
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->lock);
    return status;
}

int devrt_launch(devrt_module *module, const char *kernel, const struct devrt_launch_config *config,
                 const struct devrt_arg *args, size_t arg_count, struct devrt_launch_report *report)
{
    int status = devrt_validate_launch(module, kernel, config, args, arg_count);
    if (status != DEVRT_SUCCESS)
        return status;
    devrt_device *device = module->device;
    struct devrt_launches *l = &device->launches;
    struct devrt_launch_entry e = {.kernel = kernel, .config = *config};
    pthread_mutex_lock(&l->lock);
    if (has_queues(device)) {
        e.stream = stream_for(device, NULL);
        status = e.stream ? queue_entry_when_ready(module, &e, args, arg_count)
                          : DEVRT_ERROR_OUT_OF_MEMORY;
    } else {
        status = queue_entry(module, &e, args, arg_count);
        if (status == DEVRT_SUCCESS) {
            /* On the caller's thread: the arguments are the caller's until it returns. */
            e.args = (struct devrt_arg *)args;
            e.arg_count = arg_count;
            run_in_order(l, &e);
            e.args = NULL;
        }
    }
    pthread_mutex_unlock(&l->lock);
    if (status != DEVRT_SUCCESS)
        return status;
    status = conclude(&e, report);
    e.kernel = NULL;
    free(e.run_error);
    return status;
}

/*
 * ARGS for a launch that runs after the caller returns, in one block: the array, then the
 * bytes of each DEVRT_ARG_BYTES, which the caller may free at once. NULL without memory.
 */
static struct devrt_arg *copy_args(const struct devrt_arg *args, size_t arg_count)
{
    size_t size = arg_count * sizeof *args;
    for (size_t i = 0; i < arg_count; ++i)
        if (args[i].type == DEVRT_ARG_BYTES)
            size += args[i].size;
    struct devrt_arg *copy = malloc(size);
    if (!copy)
        return NULL;
    memcpy(copy, args, arg_count * sizeof *args);
    char *bytes = (char *)(copy + arg_count);
    for (size_t i = 0; i < arg_count; ++i)
        if (args[i].type == DEVRT_ARG_BYTES) {
            copy[i].value.pointer = memcpy(bytes, args[i].value.pointer, args[i].size);
            bytes += args[i].size;
        }
    return copy;
}

int devrt_launch_async(devrt_module *module, const char *kernel,
                       const struct devrt_launch_config *config, const struct devrt_arg *args,
                       size_t arg_count, devrt_stream *stream, uint64_t *launch)
{
    if (launch)
        *launch = 0;
    int status = devrt_validate_launch(module, kernel, config, args, arg_count);
    if (status != DEVRT_SUCCESS)
        return status;
    devrt_device *device = module->device;
    if (stream && stream->device != device)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "devrt_launch_async: the stream belongs to another device");
    struct devrt_launch_entry *e = calloc(1, sizeof *e);
    char *name = strdup(kernel);
    struct devrt_arg *copy = NULL;
    if (e && name && !has_queues(device) && arg_count)
        copy = copy_args(args, arg_count);
    if (!e || !name || (!has_queues(device) && arg_count && !copy)) {
        free(e);
        free(name);
        free(copy);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a launch");
    }
    e->kernel = name;
    e->config = *config;
    e->args = copy;
    e->arg_count = copy ? arg_count : 0;
    e->id = 1; /* asynchronous: queue_entry gives the real one */
    struct devrt_launches *l = &device->launches;
    pthread_mutex_lock(&l->lock);
    e->stream = stream_for(device, stream);
    status = e->stream ? DEVRT_SUCCESS : DEVRT_ERROR_OUT_OF_MEMORY;
    if (status == DEVRT_SUCCESS && !has_queues(device) && !e->stream->thread_started) {
        if (pthread_create(&e->stream->thread, NULL, stream_main, e->stream) != 0)
            status = devrt_fail(DEVRT_ERROR_BACKEND, "cannot start a stream's thread");
        else
            e->stream->thread_started = true;
    }
    if (status == DEVRT_SUCCESS)
        status = queue_entry_when_ready(module, e, args, arg_count);
    uint64_t id = e->id;
    pthread_mutex_unlock(&l->lock);
    if (status != DEVRT_SUCCESS) {
        free_entry(e);
        return status;
    }
    if (launch)
        *launch = id;
    return DEVRT_SUCCESS;
}

int devrt_launch_wait(devrt_device *device, uint64_t launch, struct devrt_launch_report *report)
{
    if (!device)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_launch_wait: no device");
    struct devrt_launches *l = &device->launches;
    pthread_mutex_lock(&l->lock);
    struct devrt_launch_entry *e;
    for (;;) {
        e = l->launches.head;
        while (e && e->id != launch)
            e = e->link[DEVRT_LAUNCHES_OF_DEVICE].next;
        /* Its module's unload concludes it: the report is ours once that is done. */
        if (!e || !e->detaching)
            break;
        pthread_cond_wait(&l->changed, &l->lock);
    }
    bool waitable = e && !e->taken;
    if (waitable) {
        e->taken = true;
        /* Not of a launch its module's unload concluded: that module is gone. */
        if (!e->finished)
            devrt_faults_launch_event(e->module, DEVRT_LAUNCH_WAIT_TAKEN);
    }
    pthread_mutex_unlock(&l->lock);
    if (!waitable)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "launch %" PRIu64 " is not in flight (never queued, or its report "
                          "was taken already)",
                          launch);
    return take(e, report);
}

int devrt_stream_wait(devrt_device *device, devrt_stream *stream,
                      struct devrt_launch_report *report)
{
    if (!device || (stream && stream->device != device))
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_stream_wait: no device, or the "
                                                        "stream belongs to another");
    struct devrt_launches *l = &device->launches;
    pthread_mutex_lock(&l->lock);
    devrt_stream *s = stream ? stream : l->default_stream;
    uint64_t last = s && s->launches.tail ? s->launches.tail->id : 0;
    pthread_mutex_unlock(&l->lock);
    int first = DEVRT_SUCCESS;
    char why[1024] = "";
    for (;;) {
        pthread_mutex_lock(&l->lock);
        struct devrt_launch_entry *e = s ? s->launches.head : NULL;
        while (e && e->taken)
            e = e->link[DEVRT_LAUNCHES_OF_STREAM].next;
        if (e && e->id <= last && e->detaching) {
            pthread_cond_wait(&l->changed, &l->lock); /* as in devrt_launch_wait */
            pthread_mutex_unlock(&l->lock);
            continue;
        }
        if (e && e->id <= last)
            e->taken = true;
        else
            e = NULL;
        pthread_mutex_unlock(&l->lock);
        if (!e)
            break;
        struct devrt_launch_report local;
        int status = take(e, first == DEVRT_SUCCESS ? report : &local);
        if (status != DEVRT_SUCCESS && first == DEVRT_SUCCESS) {
            first = status;
            snprintf(why, sizeof why, "%s", devrt_last_error());
        }
    }
    if (first != DEVRT_SUCCESS)
        return devrt_fail(first, "%s", why);
    if (report)
        memset(report, 0, sizeof *report);
    return DEVRT_SUCCESS;
}

int devrt_stream_create(devrt_device *device, devrt_stream **stream)
{
    if (!device || !stream)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_stream_create: missing argument");
    *stream = NULL;
    int lost = devrt_device_check_lost(device);
    if (lost != DEVRT_SUCCESS)
        return lost;
    pthread_mutex_lock(&device->launches.lock);
    *stream = new_stream(device, true);
    pthread_mutex_unlock(&device->launches.lock);
    return *stream ? DEVRT_SUCCESS : DEVRT_ERROR_BACKEND;
}

static void destroy_stream(devrt_stream *s)
{
    devrt_device *device = s->device;
    struct devrt_launches *l = &device->launches;
    /* Every launch on it is waited for; their lines are written, their reports dropped. */
    devrt_stream_wait(device, s, NULL);
    pthread_mutex_lock(&l->lock);
    s->stop = true;
    pthread_cond_signal(&s->work);
    for (devrt_stream **p = &l->streams; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    if (l->default_stream == s)
        l->default_stream = NULL;
    pthread_mutex_unlock(&l->lock);
    if (s->thread_started)
        pthread_join(s->thread, NULL);
    if (s->backend && device->ops->stream_destroy)
        device->ops->stream_destroy(s);
    pthread_cond_destroy(&s->work);
    free(s);
}

void devrt_stream_destroy(devrt_stream *stream)
{
    if (stream)
        destroy_stream(stream);
}

void devrt_launches_fini(devrt_device *device)
{
    struct devrt_launches *l = &device->launches;
    while (l->streams)
        destroy_stream(l->streams);
    pthread_cond_destroy(&l->changed);
    pthread_mutex_destroy(&l->lock);
}
