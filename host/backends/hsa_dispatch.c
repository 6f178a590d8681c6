/*
 * Launches on the HSA backend: AQL packets on the device's queue, each with a completion
 * signal and kernel arguments of its own, and the waits for them. A queue that fails, or
 * that devrt stops to end a runaway kernel, is replaced; what a launch puts in the packet
 * is computed by amdgpu_dispatch.c from the code object's metadata, without a GPU.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "amdgpu_dispatch.h"
#include "hsa_backend.h"

static void queue_error(hsa_status_t status, hsa_queue_t *queue, void *data)
{
    (void)queue;
    struct hsa_queue_record *q = data;
    q->status = status;
    /* Pairs with the acquire loads of the waits on the queue's launches (launch_ended). */
    __atomic_store_n(&q->failed, true, __ATOMIC_RELEASE);
}

/* A new queue for B's launches, the current one from now on. Under queue_lock, or alone. */
hsa_status_t devrt_hsa_new_queue(struct hsa_backend *b)
{
    struct hsa_queue_record *q = calloc(1, sizeof *q);
    if (!q)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    q->backend = b;
    hsa_status_t status = devrt_hsa.hsa_queue_create(
        b->gpu, 1024, HSA_QUEUE_TYPE_MULTI, queue_error, q, UINT32_MAX, UINT32_MAX, &q->queue);
    if (status != HSA_STATUS_SUCCESS) {
        free(q);
        return status;
    }
    q->older = b->queue;
    /* Pairs with hsa_enqueue's acquire load, made before it takes queue_lock. */
    __atomic_store_n(&b->queue, q, __ATOMIC_RELEASE);
    return HSA_STATUS_SUCCESS;
}

/*
 * Q failed or must stop: it is inactivated (what runs on it ends, and it takes no more
 * packets) and a new queue replaces it, unless one did already. Its launches fail
 * (launch_ended). Under queue_lock.
 */
static hsa_status_t replace_queue(struct hsa_backend *b, struct hsa_queue_record *q)
{
    if (b->queue != q)
        return HSA_STATUS_SUCCESS;
    devrt_hsa.hsa_queue_inactivate(q->queue);
    return devrt_hsa_new_queue(b);
}

/*
 * A retired queue goes once no launch that was on it remains: ROCr keeps an inactivated
 * queue's scratch until the queue is destroyed (AqlQueue::Inactivate keeps it, the
 * destructor releases it), which on a large GPU is gigabytes a queue. Under queue_lock.
 */
static void destroy_if_done(struct hsa_backend *b, struct hsa_queue_record *q)
{
    if (q == b->queue || q->launches > 0)
        return;
    struct hsa_queue_record **link = &b->queue->older;
    while (*link && *link != q)
        link = &(*link)->older;
    if (!*link)
        return;
    *link = q->older;
    devrt_hsa.hsa_queue_destroy(q->queue);
    free(q);
}

/* The kernel argument memory of a launch of SIZE bytes: a slot of the ring, or its own. */
static int take_kernarg(struct hsa_backend *b, struct hsa_launch *l, size_t size)
{
    l->kernarg_slot = -1;
    pthread_mutex_lock(&b->launches_lock);
    if (size <= DEVRT_HSA_KERNARG_SLOT && b->kernarg_free_count) {
        l->kernarg_slot = (int)b->kernarg_free[--b->kernarg_free_count];
        l->kernarg = b->kernarg_ring + (size_t)l->kernarg_slot * DEVRT_HSA_KERNARG_SLOT;
    }
    pthread_mutex_unlock(&b->launches_lock);
    if (l->kernarg_slot >= 0)
        return DEVRT_SUCCESS;
    if (devrt_hsa.hsa_amd_memory_pool_allocate(b->kernarg, size ? size : 16, 0, &l->kernarg) !=
        HSA_STATUS_SUCCESS)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no kernel argument memory");
    if (devrt_hsa.hsa_amd_agents_allow_access(1, &b->gpu, NULL, l->kernarg) != HSA_STATUS_SUCCESS) {
        devrt_hsa.hsa_amd_memory_pool_free(l->kernarg);
        l->kernarg = NULL;
        return devrt_fail(DEVRT_ERROR_LAUNCH, "HSA: the GPU may not read the kernel arguments");
    }
    if (!devrt_hsa_own(b, l->kernarg, size ? size : 16)) {
        devrt_hsa.hsa_amd_memory_pool_free(l->kernarg);
        l->kernarg = NULL;
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a launch");
    }
    return DEVRT_SUCCESS;
}

/*
 * Everything enqueue took for L, and L. A copy that points the state and has not ended (the
 * launch's queue stopped before it, or the GPU faulted) may still read its word in the
 * kernel argument memory and signal: both are left to it, never reused.
 */
static void free_launch(struct hsa_backend *b, struct hsa_launch *l)
{
    bool copying =
        l->state_copied.handle && devrt_hsa.hsa_signal_load_scacquire(l->state_copied) >= 1;
    pthread_mutex_lock(&b->launches_lock);
    if (l->prev)
        l->prev->next = l->next;
    else if (b->launches == l)
        b->launches = l->next;
    if (l->next)
        l->next->prev = l->prev;
    if (l->kernarg_slot >= 0 && !copying)
        b->kernarg_free[b->kernarg_free_count++] = (uint32_t)l->kernarg_slot;
    pthread_mutex_unlock(&b->launches_lock);
    if (l->kernarg_slot < 0 && l->kernarg && !copying) {
        devrt_hsa_disown(b, l->kernarg);
        devrt_hsa.hsa_amd_memory_pool_free(l->kernarg);
    }
    if (l->state_copied.handle && !copying)
        devrt_hsa.hsa_signal_destroy(l->state_copied);
    if (l->done.handle)
        devrt_hsa.hsa_signal_destroy(l->done);
    if (l->queue) {
        pthread_mutex_lock(&b->queue_lock);
        l->queue->launches--;
        destroy_if_done(b, l->queue);
        pthread_mutex_unlock(&b->queue_lock);
    }
    free(l);
}

/*
 * A barrier-AND packet at INDEX of QUEUE: the packet processor starts nothing after it until
 * DEPENDENCY (none if its handle is 0) is 0, then completes it, with no wave, decrementing
 * DONE (if any). The caller rings the doorbell.
 */
static void put_barrier_and(hsa_queue_t *queue, uint64_t index, hsa_signal_t dependency,
                            hsa_signal_t done)
{
    hsa_barrier_and_packet_t *packet =
        (hsa_barrier_and_packet_t *)queue->base_address + (index & (queue->size - 1));
    memset((char *)packet + 4, 0, sizeof *packet - 4);
    packet->dep_signal[0] = dependency;
    packet->completion_signal = done;
    /* Pairs with the packet processor's acquire of the header: the packet body is written. */
    __atomic_store_n((uint32_t *)packet,
                     HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE |
                         1u << HSA_PACKET_HEADER_BARRIER |
                         HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE,
                     __ATOMIC_RELEASE);
}

/*
 * Whether B's GPU still takes work from the process's queues: a barrier-AND packet with no
 * dependencies, on a queue of the probe's own, which the command processor completes with no
 * wave however full the GPU is, within DEVRT_HSA_PROBE_MS; on a GPU whose queues a fault
 * evicted it never completes. Where no probe can be sent, the GPU is taken to run.
 */
bool devrt_hsa_gpu_runs(struct hsa_backend *b)
{
    pthread_mutex_lock(&b->probe_lock);
    if (!b->probe &&
        (devrt_hsa.hsa_signal_create(0, 0, NULL, &b->probed) != HSA_STATUS_SUCCESS ||
         devrt_hsa.hsa_queue_create(b->gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX,
                                    UINT32_MAX, &b->probe) != HSA_STATUS_SUCCESS)) {
        if (b->probed.handle)
            devrt_hsa.hsa_signal_destroy(b->probed);
        b->probed.handle = 0;
        b->probe = NULL;
        pthread_mutex_unlock(&b->probe_lock);
        return true;
    }
    devrt_hsa.hsa_signal_store_screlease(b->probed, 1);
    uint64_t index = devrt_hsa.hsa_queue_add_write_index_relaxed(b->probe, 1);
    put_barrier_and(b->probe, index, (hsa_signal_t){0}, b->probed);
    devrt_hsa.hsa_signal_store_screlease(b->probe->doorbell_signal, (hsa_signal_value_t)index);
    bool runs = devrt_hsa.hsa_signal_wait_scacquire(b->probed, HSA_SIGNAL_CONDITION_LT, 1,
                                                    b->ticks_per_ms * DEVRT_HSA_PROBE_MS,
                                                    HSA_WAIT_STATE_BLOCKED) < 1;
    pthread_mutex_unlock(&b->probe_lock);
    return runs;
}

/* Whether L ran to its end, or never will: its queue failed or stopped, or the GPU faulted. */
static bool launch_ended(struct hsa_backend *b, const struct hsa_launch *l)
{
    return devrt_hsa.hsa_signal_load_scacquire(l->done) < 1 ||
           __atomic_load_n(&l->queue->failed, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&l->queue->stopped, __ATOMIC_ACQUIRE) || devrt_hsa_faulted(b);
}

/* Whether QUEUE has room for a launch's packets, a barrier-AND and a dispatch; its writers
   hold queue_lock. */
static bool queue_has_room(hsa_queue_t *queue)
{
    return devrt_hsa.hsa_queue_load_write_index_relaxed(queue) -
               devrt_hsa.hsa_queue_load_read_index_scacquire(queue) + 2 <=
           queue->size;
}

/* A full queue drains, unless it failed: then the launch fails with it (devrt_hsa_complete).
   Only one launch is queued at a time (launch.c's lock): the room stays till the packet. */
bool devrt_hsa_queue_full(devrt_device *device)
{
    struct hsa_backend *b = devrt_device_backend_state(device);
    const struct hsa_queue_record *current = __atomic_load_n(&b->queue, __ATOMIC_ACQUIRE);
    return !queue_has_room(current->queue) &&
           !__atomic_load_n(&current->failed, __ATOMIC_ACQUIRE) && !devrt_hsa_faulted(b);
}

bool devrt_hsa_ended(const struct devrt_launch_entry *entry)
{
    const struct hsa_launch *l = entry->backend[0];
    return !l || launch_ended(devrt_hsa_backend_of(entry->module), l);
}

/*
 * Point the module's state at ENTRY's record before its kernel runs, with no wait: an
 * asynchronous copy of the word at CELL (past the kernel arguments), which a barrier-AND
 * packet ahead of the kernel waits for (submit). A copy waited for here could wait for ever:
 * where ROCr copies with blit kernels (HSA_ENABLE_SDMA=0, an APU), one needs a wave slot, a
 * runaway of the module that fills the GPU holds them all, and the unload that would end
 * it needs launch.c's lock, which this holds. launch.c has waited for the module's last
 * launch to end, unless a runaway's: a raise of a runaway may land in the new record.
 */
static int point_state(struct hsa_backend *b, struct devrt_launch_entry *entry,
                       struct hsa_launch *l, struct devrt_exception_record **cell)
{
    *cell = entry->slot;
    if (devrt_hsa.hsa_signal_create(1, 0, NULL, &l->state_copied) == HSA_STATUS_SUCCESS &&
        devrt_hsa.hsa_amd_memory_async_copy(&devrt_module_state(entry->module)->exception, b->gpu,
                                            cell, b->cpu, sizeof *cell, 0, NULL,
                                            l->state_copied) == HSA_STATUS_SUCCESS)
        return DEVRT_SUCCESS;
    if (l->state_copied.handle)
        devrt_hsa.hsa_signal_destroy(l->state_copied);
    l->state_copied.handle = 0;
    return devrt_fail(DEVRT_ERROR_BACKEND, "HSA: cannot point the state at a record");
}

/*
 * Queue the launch: an AQL packet with a completion signal of its own. A launch that needs
 * a record of its own points the state at it first (point_state), after the module's last
 * launch has ended: HSA offers no write in queue order that the host can ask for without a
 * kernel, so the copy goes at once and the kernel waits for it (docs/runtime.md, "Launches").
 */
int devrt_hsa_submit(struct devrt_launch_entry *entry, const struct devrt_arg *args,
                     size_t arg_count)
{
    (void)arg_count; /* devrt_hsa_check_launch has matched ARGS to the kernel's parameters */
    devrt_module *module = entry->module;
    struct hsa_backend *b = devrt_hsa_backend_of(module);
    struct hsa_module *m = devrt_module_backend_state(module);
    /* The queue's address is only for device-side enqueue, which devrt does not use: the
       packet may go to a queue that replaced this one meanwhile. */
    const struct hsa_queue_record *current = __atomic_load_n(&b->queue, __ATOMIC_ACQUIRE);
    struct devrt_amdgpu_agent agent = devrt_hsa_agent_of(b);
    agent.queue_address = (uint64_t)(uintptr_t)current->queue;
    struct devrt_amdgpu_launch launch;
    struct devrt_amdgpu_dispatch dispatch;
    int status = devrt_amdgpu_launch_again(m->metadata, devrt_module_path(module), &agent,
                                           entry->kernel, &entry->config, &launch);
    if (status == DEVRT_SUCCESS)
        status = devrt_amdgpu_dispatch_pack(&launch, args, &dispatch);
    if (status != DEVRT_SUCCESS)
        return status;
    hsa_executable_symbol_t symbol;
    uint64_t object = 0;
    if (devrt_hsa.hsa_executable_get_symbol_by_name(m->executable, dispatch.kernel->symbol, &b->gpu,
                                                    &symbol) != HSA_STATUS_SUCCESS ||
        devrt_hsa.hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                                 &object) != HSA_STATUS_SUCCESS) {
        devrt_amdgpu_dispatch_free(&dispatch);
        return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s: the loader has no kernel %s",
                          devrt_module_path(module), dispatch.kernel->symbol);
    }
    struct hsa_launch *l = calloc(1, sizeof *l);
    if (!l) {
        devrt_amdgpu_dispatch_free(&dispatch);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a launch");
    }
    l->kernel = entry->kernel;
    l->id = entry->id;
    /* The word point_state copies from lives as long as the kernel arguments. */
    size_t cell_at = (dispatch.kernarg_size + 7) & ~(size_t)7;
    status =
        take_kernarg(b, l, entry->new_slot ? cell_at + sizeof entry->slot : dispatch.kernarg_size);
    if (status == DEVRT_SUCCESS &&
        devrt_hsa.hsa_signal_create(1, 0, NULL, &l->done) != HSA_STATUS_SUCCESS)
        status = devrt_fail(DEVRT_ERROR_BACKEND, "HSA: cannot create a completion signal");
    if (status == DEVRT_SUCCESS && entry->new_slot)
        status = point_state(b, entry, l, (void *)((char *)l->kernarg + cell_at));
    if (status != DEVRT_SUCCESS) {
        free_launch(b, l);
        devrt_amdgpu_dispatch_free(&dispatch);
        return status;
    }
    memcpy(l->kernarg, dispatch.kernarg, dispatch.kernarg_size);
    pthread_mutex_lock(&b->launches_lock);
    l->next = b->launches;
    if (b->launches)
        b->launches->prev = l;
    b->launches = l;
    pthread_mutex_unlock(&b->launches_lock);

    pthread_mutex_lock(&b->queue_lock);
    l->queue = b->queue;
    l->queue->launches++;
    hsa_queue_t *queue = b->queue->queue;
    uint64_t index =
        devrt_hsa.hsa_queue_add_write_index_relaxed(queue, l->state_copied.handle ? 2 : 1);
    if (l->state_copied.handle)
        put_barrier_and(queue, index++, l->state_copied, (hsa_signal_t){0});
    hsa_kernel_dispatch_packet_t *packet =
        (hsa_kernel_dispatch_packet_t *)queue->base_address + (index & (queue->size - 1));
    memset((char *)packet + 4, 0, sizeof *packet - 4);
    packet->workgroup_size_x = dispatch.workgroup_size[0];
    packet->workgroup_size_y = dispatch.workgroup_size[1];
    packet->workgroup_size_z = dispatch.workgroup_size[2];
    packet->grid_size_x = dispatch.grid_size[0];
    packet->grid_size_y = dispatch.grid_size[1];
    packet->grid_size_z = dispatch.grid_size[2];
    packet->private_segment_size = dispatch.private_segment_size;
    packet->group_segment_size = dispatch.group_segment_size;
    packet->kernel_object = object;
    packet->kernarg_address = l->kernarg;
    packet->completion_signal = l->done;
    /* The barrier bit: a module's launches, all on this one queue, run one at a time. */
    uint16_t header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE |
                      1u << HSA_PACKET_HEADER_BARRIER |
                      HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE |
                      HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
    uint16_t setup = (uint16_t)(dispatch.dimensions << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS);
    devrt_amdgpu_dispatch_free(&dispatch);
    /* Pairs with the packet processor's acquire of the header: the packet body is written. */
    __atomic_store_n((uint32_t *)packet, header | (uint32_t)setup << 16, __ATOMIC_RELEASE);
    devrt_hsa.hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)index);
    pthread_mutex_unlock(&b->queue_lock);
    entry->backend[0] = l;
    return DEVRT_SUCCESS;
}

/* L failed with its queue: the queue is replaced, and the launch reports why. */
static int queue_failed(struct hsa_backend *b, struct hsa_launch *l)
{
    struct hsa_queue_record *q = l->queue;
    bool stopped = __atomic_load_n(&q->stopped, __ATOMIC_ACQUIRE);
    const char *text = NULL;
    if (!stopped)
        devrt_hsa.hsa_status_string(q->status, &text);
    pthread_mutex_lock(&b->queue_lock);
    hsa_status_t replaced = replace_queue(b, q);
    pthread_mutex_unlock(&b->queue_lock);
    if (replaced != HSA_STATUS_SUCCESS)
        return devrt_hsa_failed(DEVRT_ERROR_LAUNCH, replaced,
                                "the queue failed, and a new one was refused");
    if (stopped)
        return devrt_fail(DEVRT_ERROR_LAUNCH,
                          "kernel %s: stopped with its queue, which devrt ended to stop a kernel "
                          "that ran past its timeout before its module was unloaded",
                          l->kernel);
    return devrt_fail(DEVRT_ERROR_LAUNCH,
                      "kernel %s: the HSA queue failed while it ran or waited "
                      "(%s)",
                      l->kernel, text ? text : "unknown status");
}

int devrt_hsa_complete(struct devrt_launch_entry *entry, uint64_t deadline)
{
    struct hsa_backend *b = devrt_hsa_backend_of(entry->module);
    struct hsa_launch *l = entry->backend[0];
    while (devrt_hsa.hsa_signal_wait_scacquire(l->done, HSA_SIGNAL_CONDITION_LT, 1,
                                               b->ticks_per_ms * 100,
                                               HSA_WAIT_STATE_BLOCKED) >= 1) {
        if (devrt_hsa_stopped(b))
            return devrt_hsa_fault_lost(entry->module, b);
        if (__atomic_load_n(&l->queue->failed, __ATOMIC_ACQUIRE) ||
            __atomic_load_n(&l->queue->stopped, __ATOMIC_ACQUIRE))
            return queue_failed(b, l);
        /* Checked every 100 ms, the wait's bound: a timeout is that late at most. */
        if (deadline && devrt_now_ns() >= deadline)
            return devrt_fail(DEVRT_ERROR_TIMEOUT,
                              "kernel %s ran past its timeout of %.3f s; HSA cannot stop one "
                              "kernel of a queue, so it runs on, and the queue's later work "
                              "waits for it",
                              entry->kernel, (double)entry->config.timeout_ns / 1e9);
    }
    return DEVRT_SUCCESS;
}

void devrt_hsa_release(struct devrt_launch_entry *entry)
{
    if (entry->backend[0])
        free_launch(devrt_hsa_backend_of(entry->module), entry->backend[0]);
    entry->backend[0] = entry->backend[1] = NULL;
}

/*
 * The module goes, and kernels of it run on past their timeouts on the queue: HSA cannot
 * end one kernel, but inactivating its queue ends everything on it. Launches of other
 * modules on that queue fail with it (queue_failed), and a new queue takes what follows.
 */
void devrt_hsa_stop_runaways(devrt_module *module, struct devrt_launch_entry *runaways)
{
    struct hsa_backend *b = devrt_hsa_backend_of(module);
    for (struct devrt_launch_entry *r = runaways; r; r = r->next_runaway) {
        struct hsa_launch *l = r->backend[0];
        if (!l || devrt_hsa.hsa_signal_load_scacquire(l->done) < 1)
            continue;
        __atomic_store_n(&l->queue->stopped, true, __ATOMIC_RELEASE);
        pthread_mutex_lock(&b->queue_lock);
        replace_queue(b, l->queue);
        pthread_mutex_unlock(&b->queue_lock);
    }
}
