/*
 * User-mode queues and their packet processor: a thread per queue that takes AQL packets
 * in order, once the doorbell names them and their header is valid, as the command
 * processor does. Each dispatch runs on a thread of its own: one without the barrier bit
 * starts while the ones before it still run, as the command processor overlaps them, and
 * one with the bit waits until every earlier dispatch of the queue has ended (the HSA
 * specification's barrier bit; $DEVRT_HSASIM_PLANT=clear_barrier ignores the bit, as if
 * the packets had none); a barrier-AND packet the processor completes itself, no wave
 * needed. It takes a packet's header with acquire and publishes its end with
 * release through the completion signal. A queue error, or the GPU's eviction after a
 * memory fault, stops it for good.
 */
#include <stdlib.h>
#include <string.h>

#include "hsasim.h"

struct queue {
    hsa_queue_t queue;  /* first: the handle devrt holds points at it */
    struct queue *next; /* among the live queues, under queues_lock */
    struct hsasim_agent *gpu;
    uint64_t read_index, write_index;
    void (*callback)(hsa_status_t, hsa_queue_t *, void *);
    void *data;
    pthread_t thread;
    bool stop;   /* atomic: destroyed */
    bool cancel; /* atomic: the running kernel must stop (devrt_emu_grid's cancel) */
    bool joined; /* the processor has ended; by inactivate or destroy */
    bool failed; /* atomic: a dispatch failed the queue, which takes nothing more */
    pthread_mutex_t lock;
    pthread_cond_t ended; /* a dispatch of the queue ended */
    unsigned running;     /* dispatches started and not ended, under lock */
    bool ignore_barriers; /* $DEVRT_HSASIM_PLANT=clear_barrier */
};

/* The live queues, for the eviction that preempts a GPU's (hsasim_preempt_queues). */
static pthread_mutex_t queues_lock = PTHREAD_MUTEX_INITIALIZER;
static struct queue *queues;

/*
 * A memory fault's eviction unmaps every queue of the process on the GPU, which preempts
 * their waves (amdkfd's evict_process_queues_cpsch): the lanes of what runs there stop, as
 * at a queue's destruction, wherever they are (holding a port, a line half sent).
 */
void hsasim_preempt_queues(const struct hsasim_agent *gpu)
{
    pthread_mutex_lock(&queues_lock);
    for (struct queue *q = queues; q; q = q->next)
        if (q->gpu == gpu)
            __atomic_store_n(&q->cancel, true, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&queues_lock);
}

/* A dispatch of the queue, run by a thread of its own. */
struct run {
    struct queue *q;
    hsa_kernel_dispatch_packet_t packet;
};

/* Stops the processor and what it runs, and waits for both: a queue unmapped by the kernel
   driver (amdkfd's destroy_queue and update_queue preempt it) runs nothing on return. */
static void stop_processor(struct queue *q)
{
    __atomic_store_n(&q->stop, true, __ATOMIC_RELEASE);
    __atomic_store_n(&q->cancel, true, __ATOMIC_RELEASE);
    hsasim_signal_notify(hsasim_signal(q->queue.doorbell_signal));
    if (!q->joined)
        pthread_join(q->thread, NULL);
    q->joined = true;
}

static uint16_t header_type(uint16_t header)
{
    return (uint16_t)(header >> HSA_PACKET_HEADER_TYPE &
                      ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1));
}

/* Waits until packet INDEX may be taken; false once the queue is destroyed. */
static bool wait_packet(struct queue *q, uint64_t index, uint16_t *header)
{
    hsa_kernel_dispatch_packet_t *slot =
        (hsa_kernel_dispatch_packet_t *)q->queue.base_address + (index & (q->queue.size - 1));
    hsa_signal_t doorbell = q->queue.doorbell_signal;
    for (;;) {
        if (__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE))
            return false;
        /* Pairs with the producer's release store of the header: the body is written. */
        *header = __atomic_load_n(&slot->header, __ATOMIC_ACQUIRE);
        bool rung = hsa_signal_load_scacquire(doorbell) >= (hsa_signal_value_t)index;
        if (rung && header_type(*header) != HSA_PACKET_TYPE_INVALID && !hsasim_gpu_evicted(q->gpu))
            return true;
        /* An evicted queue is never restored: amdkfd restores only queues it evicted itself
           for memory pressure (restore_process_queues_cpsch), not after a fault. */
        hsa_signal_wait_scacquire(doorbell, HSA_SIGNAL_CONDITION_GTE,
                                  (hsa_signal_value_t)index + (rung ? 1 : 0), 5000000,
                                  HSA_WAIT_STATE_BLOCKED);
    }
}

/* ROCr's AqlQueue::DynamicQueueEventsHandler: the callback, and the queue left inactive. */
static void fail_queue(struct queue *q, hsa_status_t status)
{
    if (q->callback)
        q->callback(status, &q->queue, q->data);
    __atomic_store_n(&q->failed, true, __ATOMIC_RELEASE);
    hsasim_signal_notify(hsasim_signal(q->queue.doorbell_signal));
}

/* The processor of a failed queue takes nothing more, until the queue is stopped. */
static void stay_inactive(struct queue *q)
{
    while (!__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE))
        hsa_signal_wait_scacquire(q->queue.doorbell_signal, HSA_SIGNAL_CONDITION_LT, -1, 5000000,
                                  HSA_WAIT_STATE_BLOCKED);
}

/* Waits until every dispatch Q started has ended. */
static void wait_idle(struct queue *q)
{
    pthread_mutex_lock(&q->lock);
    while (q->running > 0)
        pthread_cond_wait(&q->ended, &q->lock);
    pthread_mutex_unlock(&q->lock);
}

static void *run_dispatch(void *arg)
{
    struct run *r = arg;
    struct queue *q = r->q;
    hsa_status_t status = hsasim_dispatch(&r->packet, &q->cancel, q->gpu);
    if (status != HSA_STATUS_SUCCESS) {
        fail_queue(q, status);
    } else if (!__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE) && !hsasim_gpu_evicted(q->gpu)) {
        /* A dispatch stopped by the queue's destruction, or preempted by the eviction of
           the GPU's queues after a fault, never completes. */
        __atomic_add_fetch(&hsasim_counts.dispatches, 1u, __ATOMIC_RELAXED);
        if (r->packet.completion_signal.handle)
            hsasim_signal_add(hsasim_signal(r->packet.completion_signal), -1);
    }
    free(r);
    __atomic_sub_fetch(&hsasim_counts.running, 1u, __ATOMIC_RELEASE);
    pthread_mutex_lock(&q->lock);
    q->running--;
    pthread_cond_broadcast(&q->ended);
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/* Starts the dispatch PACKET on a thread of its own; false when there is none for it. */
static bool start_dispatch(struct queue *q, const hsa_kernel_dispatch_packet_t *packet)
{
    struct run *r = malloc(sizeof *r);
    if (!r)
        return false;
    *r = (struct run){.q = q, .packet = *packet};
    pthread_mutex_lock(&q->lock);
    q->running++;
    pthread_mutex_unlock(&q->lock);
    __atomic_add_fetch(&hsasim_counts.running, 1u, __ATOMIC_RELEASE);
    pthread_attr_t detached;
    pthread_attr_init(&detached);
    pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
    bool started = pthread_create(&(pthread_t){0}, &detached, run_dispatch, r) == 0;
    pthread_attr_destroy(&detached);
    if (!started) {
        free(r);
        __atomic_sub_fetch(&hsasim_counts.running, 1u, __ATOMIC_RELEASE);
        pthread_mutex_lock(&q->lock);
        q->running--;
        pthread_mutex_unlock(&q->lock);
    }
    return started;
}

/*
 * A barrier-AND packet: the command processor waits until each dependency signal is 0 and
 * then completes it, with no wave (the HSA specification's barrier-AND packet), however
 * busy the GPU's compute units are. A queue evicted meanwhile completes nothing.
 */
static void run_barrier_and(struct queue *q, const hsa_barrier_and_packet_t *packet)
{
    for (size_t i = 0; i < sizeof packet->dep_signal / sizeof *packet->dep_signal; ++i)
        while (packet->dep_signal[i].handle &&
               hsa_signal_wait_scacquire(packet->dep_signal[i], HSA_SIGNAL_CONDITION_EQ, 0, 5000000,
                                         HSA_WAIT_STATE_BLOCKED) != 0)
            if (__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE))
                return;
    if (hsasim_gpu_evicted(q->gpu))
        return;
    __atomic_add_fetch(&hsasim_counts.barriers, 1u, __ATOMIC_RELEASE);
    if (packet->completion_signal.handle)
        hsasim_signal_add(hsasim_signal(packet->completion_signal), -1);
}

static void process_packets(struct queue *q)
{
    for (uint64_t index = 0;; ++index) {
        uint16_t header;
        if (!wait_packet(q, index, &header))
            return;
        if (header >> HSA_PACKET_HEADER_BARRIER & 1 && !q->ignore_barriers) {
            pthread_mutex_lock(&q->lock);
            if (q->running > 0)
                __atomic_add_fetch(&hsasim_counts.barrier_holds, 1u, __ATOMIC_RELEASE);
            pthread_mutex_unlock(&q->lock);
            wait_idle(q);
        }
        if (__atomic_load_n(&q->failed, __ATOMIC_ACQUIRE)) {
            stay_inactive(q);
            return;
        }
        hsa_kernel_dispatch_packet_t *slot =
            (hsa_kernel_dispatch_packet_t *)q->queue.base_address + (index & (q->queue.size - 1));
        hsa_kernel_dispatch_packet_t packet;
        memcpy(&packet, slot, sizeof packet);
        packet.header = header;
        /* The slot is free again once the read index passes it: the producer may reuse it. */
        __atomic_store_n(&slot->header,
                         (uint16_t)(HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&q->read_index, index + 1, __ATOMIC_RELEASE);
        __atomic_add_fetch(&hsasim_counts.taken, 1u, __ATOMIC_RELAXED);
        if (header_type(header) == HSA_PACKET_TYPE_BARRIER_AND) {
            hsa_barrier_and_packet_t barrier;
            memcpy(&barrier, &packet, sizeof barrier);
            run_barrier_and(q, &barrier);
            continue;
        }
        if (header_type(header) != HSA_PACKET_TYPE_KERNEL_DISPATCH) {
            hsasim_say("packet %llu: type %u, which devrt never sends", (unsigned long long)index,
                       header_type(header));
            fail_queue(q, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT);
            stay_inactive(q);
            return;
        }
        if (hsasim_injected(DEVRT_HSASIM_MEMORY_FAULT)) {
            hsasim_memory_fault(q->gpu, 0xdead0000ull);
            continue; /* evicted: wait_packet takes nothing more */
        }
        if (hsasim_injected(DEVRT_HSASIM_QUEUE_ERROR) || !start_dispatch(q, &packet)) {
            fail_queue(q, (hsa_status_t)HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION);
            stay_inactive(q);
            return;
        }
    }
}

/* Takes the packets; returns once the queue stopped and every dispatch it started ended. */
static void *packet_processor(void *arg)
{
    struct queue *q = arg;
    process_packets(q);
    wait_idle(q);
    return NULL;
}

hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                              void (*callback)(hsa_status_t, hsa_queue_t *, void *), void *data,
                              uint32_t private_segment_size, uint32_t group_segment_size,
                              hsa_queue_t **out)
{
    (void)private_segment_size;
    (void)group_segment_size;
    struct hsasim_agent *gpu = hsasim_agent(agent);
    if (!hsasim_is_gpu(gpu))
        return HSA_STATUS_ERROR_INVALID_AGENT;
    if (!out || size < 2 || (size & (size - 1)) || size > 131072 ||
        (type != HSA_QUEUE_TYPE_MULTI && type != HSA_QUEUE_TYPE_SINGLE))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    struct queue *q = calloc(1, sizeof *q);
    void *packets = aligned_alloc(64, (size_t)size * 64);
    if (!q || !packets) {
        free(q);
        free(packets);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    /* ROCr starts every slot as INVALID (AqlQueue's constructor). */
    for (uint32_t i = 0; i < size; ++i)
        ((hsa_kernel_dispatch_packet_t *)packets)[i].header = HSA_PACKET_TYPE_INVALID
                                                              << HSA_PACKET_HEADER_TYPE;
    q->queue.type = type;
    q->queue.features = HSA_QUEUE_FEATURE_KERNEL_DISPATCH;
    q->queue.base_address = packets;
    q->queue.size = size;
    q->queue.id = (uint64_t)(uintptr_t)q;
    q->gpu = gpu;
    q->callback = callback;
    q->data = data;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->ended, NULL);
    q->ignore_barriers = hsasim_planted("clear_barrier");
    if (hsa_signal_create(-1, 0, NULL, &q->queue.doorbell_signal) != HSA_STATUS_SUCCESS ||
        pthread_create(&q->thread, NULL, packet_processor, q) != 0) {
        if (q->queue.doorbell_signal.handle)
            hsa_signal_destroy(q->queue.doorbell_signal);
        free(packets);
        free(q);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    pthread_mutex_lock(&queues_lock);
    q->next = queues;
    queues = q;
    pthread_mutex_unlock(&queues_lock);
    __atomic_add_fetch(&hsasim_counts.queues, 1u, __ATOMIC_RELEASE);
    *out = &q->queue;
    return HSA_STATUS_SUCCESS;
}

/*
 * Inactivating a queue aborts what runs on it and takes no more packets (the HSA
 * specification's hsa_queue_inactivate): its packets never complete.
 */
hsa_status_t hsa_queue_inactivate(hsa_queue_t *queue)
{
    if (!queue)
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    stop_processor((struct queue *)queue);
    return HSA_STATUS_SUCCESS;
}

/* Destroying a queue stops what runs on it: its packets never complete. */
hsa_status_t hsa_queue_destroy(hsa_queue_t *queue)
{
    if (!queue)
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    struct queue *q = (struct queue *)queue;
    pthread_mutex_lock(&queues_lock);
    for (struct queue **link = &queues; *link; link = &(*link)->next)
        if (*link == q) {
            *link = q->next;
            break;
        }
    pthread_mutex_unlock(&queues_lock);
    stop_processor(q);
    hsa_signal_destroy(q->queue.doorbell_signal);
    pthread_cond_destroy(&q->ended);
    pthread_mutex_destroy(&q->lock);
    free(q->queue.base_address);
    free(q);
    __atomic_sub_fetch(&hsasim_counts.queues, 1u, __ATOMIC_RELEASE);
    return HSA_STATUS_SUCCESS;
}

uint64_t hsa_queue_add_write_index_relaxed(const hsa_queue_t *queue, uint64_t value)
{
    __atomic_add_fetch(&hsasim_counts.reserved, value, __ATOMIC_RELAXED);
    return __atomic_fetch_add(&((struct queue *)queue)->write_index, value, __ATOMIC_RELAXED);
}

uint64_t hsa_queue_add_write_index_screlease(const hsa_queue_t *queue, uint64_t value)
{
    __atomic_add_fetch(&hsasim_counts.reserved, value, __ATOMIC_RELAXED);
    return __atomic_fetch_add(&((struct queue *)queue)->write_index, value, __ATOMIC_RELEASE);
}

uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t *queue)
{
    return __atomic_load_n(&((const struct queue *)queue)->write_index, __ATOMIC_RELAXED);
}

uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t *queue)
{
    return __atomic_load_n(&((const struct queue *)queue)->read_index, __ATOMIC_ACQUIRE);
}

uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t *queue)
{
    return __atomic_load_n(&((const struct queue *)queue)->read_index, __ATOMIC_RELAXED);
}
