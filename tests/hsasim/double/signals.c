/*
 * Signals. A handle is the signal's address, laid out from its start as amd_signal_t, as
 * ROCr's are: device code stores the value and raises the interrupt through the event
 * mailbox and id at the offsets it knows (device/arch/amdgcn_signal.h). Every signal is an
 * interrupt signal, as ROCr makes them by default (InterruptSignal, when the kernel driver
 * gives events). Here the mailbox word counts interrupts and is what waiters sleep on.
 *
 * The mailboxes are slots of an event page, as amdkfd's are, outside the signals: an agent
 * that has stored a completion's value still raises its interrupt after it, and by then the
 * waiter may have seen the value and destroyed the signal. A mailbox inside the signal made
 * that a write to freed memory (ThreadSanitizer, under load: hsa_signal_destroy against
 * hsasim_signal_notify). Ids past the page share slots: a waiter then wakes for another
 * signal's interrupt and looks at its value again.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hsasim.h"

struct hsasim_counts hsasim_counts;

#define AMD_SIGNAL_KIND_USER 1

/* Every live signal, so that interrupts can be dropped and a handle checked. */
static struct signal_node {
    struct signal_node *next;
    struct hsasim_signal signal;
} *signals; /* under hsasim_lock */
static uint32_t next_event_id = 1;
static bool interrupts_dropped;

#define HSASIM_EVENTS 4096u
static uint64_t event_page[HSASIM_EVENTS];

static uint64_t *event_slot(uint32_t event_id)
{
    return &event_page[event_id % HSASIM_EVENTS];
}

/* The interrupt: count it in the mailbox and wake its waiters. */
static void raise_event(uint64_t *mailbox)
{
    __atomic_add_fetch((uint32_t *)mailbox, 1u, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, (uint32_t *)mailbox, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

struct hsasim_signal *hsasim_signal(hsa_signal_t handle)
{
    return handle.handle ? (struct hsasim_signal *)(uintptr_t)handle.handle : NULL;
}

hsa_status_t hsa_signal_create(hsa_signal_value_t initial, uint32_t num_consumers,
                               const hsa_agent_t *consumers, hsa_signal_t *out)
{
    if (!out || (num_consumers && !consumers))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    struct signal_node *node = calloc(1, sizeof *node);
    if (!node)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    struct hsasim_signal *s = &node->signal;
    s->kind = AMD_SIGNAL_KIND_USER;
    s->value = initial;
    pthread_mutex_lock(&hsasim_lock);
    s->event_id = next_event_id++;
    s->event_mailbox = interrupts_dropped ? NULL : event_slot(s->event_id);
    node->next = signals;
    signals = node;
    pthread_mutex_unlock(&hsasim_lock);
    out->handle = (uint64_t)(uintptr_t)s;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_signal_destroy(hsa_signal_t handle)
{
    struct hsasim_signal *s = hsasim_signal(handle);
    if (!s)
        return HSA_STATUS_ERROR_INVALID_SIGNAL;
    pthread_mutex_lock(&hsasim_lock);
    struct signal_node *found = NULL;
    for (struct signal_node **p = &signals; *p; p = &(*p)->next)
        if (&(*p)->signal == s) {
            found = *p;
            *p = found->next;
            break;
        }
    pthread_mutex_unlock(&hsasim_lock);
    if (!found)
        return HSA_STATUS_ERROR_INVALID_SIGNAL;
    free(found);
    return HSA_STATUS_SUCCESS;
}

void hsasim_signal_notify(struct hsasim_signal *s)
{
    raise_event(event_slot(s->event_id));
}

/* The mailbox is found before the value changes: after it, the signal may be gone. */
void hsasim_signal_add(struct hsasim_signal *s, int64_t delta)
{
    uint64_t *mailbox = event_slot(s->event_id);
    __atomic_add_fetch(&s->value, delta, __ATOMIC_SEQ_CST);
    raise_event(mailbox);
}

void hsasim_signals_drop_interrupts(bool drop)
{
    pthread_mutex_lock(&hsasim_lock);
    interrupts_dropped = drop;
    for (struct signal_node *n = signals; n; n = n->next)
        __atomic_store_n(&n->signal.event_mailbox, drop ? NULL : event_slot(n->signal.event_id),
                         __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&hsasim_lock);
}

__attribute__((visibility("default"))) void devrt_hsasim_drop_interrupts(bool drop)
{
    hsasim_signals_drop_interrupts(drop);
}

void hsa_signal_store_screlease(hsa_signal_t handle, hsa_signal_value_t value)
{
    struct hsasim_signal *s = hsasim_signal(handle);
    uint64_t *mailbox = event_slot(s->event_id);
    __atomic_store_n(&s->value, value, __ATOMIC_SEQ_CST);
    raise_event(mailbox);
}

void hsa_signal_store_relaxed(hsa_signal_t handle, hsa_signal_value_t value)
{
    hsa_signal_store_screlease(handle, value);
}

hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t handle)
{
    return __atomic_load_n(&hsasim_signal(handle)->value, __ATOMIC_ACQUIRE);
}

hsa_signal_value_t hsa_signal_load_relaxed(hsa_signal_t handle)
{
    return __atomic_load_n(&hsasim_signal(handle)->value, __ATOMIC_RELAXED);
}

void hsa_signal_subtract_screlease(hsa_signal_t handle, hsa_signal_value_t value)
{
    hsasim_signal_add(hsasim_signal(handle), -value);
}

static bool satisfied(hsa_signal_value_t v, hsa_signal_condition_t condition,
                      hsa_signal_value_t compare)
{
    switch (condition) {
    case HSA_SIGNAL_CONDITION_EQ: return v == compare;
    case HSA_SIGNAL_CONDITION_NE: return v != compare;
    case HSA_SIGNAL_CONDITION_LT: return v < compare;
    case HSA_SIGNAL_CONDITION_GTE: return v >= compare;
    }
    return true;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * ROCr's wait: the timeout is a hint in timestamp ticks (nanoseconds here), and the value
 * is returned whether or not the condition holds. A waiter sleeps until an interrupt
 * counts the mailbox up: with the device's interrupts dropped, only its bound wakes it.
 */
hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t handle, hsa_signal_condition_t condition,
                                             hsa_signal_value_t compare, uint64_t timeout_hint,
                                             hsa_wait_state_t wait_state)
{
    (void)wait_state;
    struct hsasim_signal *s = hsasim_signal(handle);
    uint32_t *mailbox = (uint32_t *)event_slot(s->event_id);
    uint64_t start = now_ns();
    uint64_t end = timeout_hint > UINT64_MAX - start ? UINT64_MAX : start + timeout_hint;
    for (;;) {
        uint32_t seen = __atomic_load_n(mailbox, __ATOMIC_SEQ_CST);
        hsa_signal_value_t v = __atomic_load_n(&s->value, __ATOMIC_SEQ_CST);
        uint64_t now = now_ns();
        if (satisfied(v, condition, compare) || now >= end)
            return v;
        uint64_t left = end - now;
        struct timespec timeout = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
        syscall(SYS_futex, mailbox, FUTEX_WAIT_PRIVATE, seen, end == UINT64_MAX ? NULL : &timeout,
                NULL, 0);
    }
}

hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t handle, hsa_signal_condition_t condition,
                                           hsa_signal_value_t compare, uint64_t timeout_hint,
                                           hsa_wait_state_t wait_state)
{
    return hsa_signal_wait_scacquire(handle, condition, compare, timeout_hint, wait_state);
}
