/*
 * Architecture layer for host emulation: lanes are host threads, and a wave is 1, 32 or 64
 * of them, scheduled independently as on GPUs since Volta. Every lane-mask operation is a
 * rendezvous the runtime arranges (host/backends/emu.c): the forms over an explicit mask
 * meet exactly the live lanes of the mask; the others meet whichever lanes of the wave
 * reach the same call site, which need not be every lane that could. The launch geometry
 * comes from the devrt_emu_lane the runtime bound to this thread.
 */
#ifndef DEVRT_ARCH_EMU_H
#define DEVRT_ARCH_EMU_H

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <devrt/emu.h>
#include <devrt/rpc.h>

#include "amdgcn_signal.h"

#define DEVRT_ARCH_INLINE
/* ThreadSanitizer sees acquire loads but not fences (devrt_arch_fence). */
#define DEVRT_ARCH_POLL_ORDER __ATOMIC_ACQUIRE
#define DEVRT_ARCH_REPLY_POLL_ORDER __ATOMIC_ACQUIRE
/* The doorbell's seq_cst count (devrt_arch_ring_doorbell) orders the flip before its load. */
#define DEVRT_ARCH_FLIP_ORDER __ATOMIC_RELEASE
/* The host passes variable arguments. */
#define DEVRT_ARCH_VA_ARG 1
#define DEVRT_ARCH_READ_ONLY(p) (p)

extern _Thread_local struct devrt_emu_lane *devrt_emu_current_lane;

/* Read-modify-write atomics of the device code, for tests that count them (emu.c). */
extern uint64_t devrt_emu_atomic_count;
#define DEVRT_EMU_COUNT_ATOMIC() __atomic_fetch_add(&devrt_emu_atomic_count, 1u, __ATOMIC_RELAXED)

static inline struct devrt_emu_meeting devrt_emu_meet(uint64_t mask, bool predicate, uint32_t value)
{
    struct devrt_emu_lane *lane = devrt_emu_current_lane;
    struct devrt_emu_meeting meeting = {1, predicate, value};
    /* A wave of one lane always meets itself alone: no call, as fast as before waves. */
    if (lane->wave_size > 1)
        lane->meet(lane, mask, predicate, value, &meeting);
    return meeting;
}

static inline uint32_t devrt_arch_wavefront_size(void)
{
    return devrt_emu_current_lane->wave_size;
}

static inline uint32_t devrt_arch_lane_id(void)
{
    return devrt_emu_current_lane->lane_id;
}

static inline uint64_t devrt_arch_ballot(bool predicate)
{
    return devrt_emu_meet(0, predicate, 0).ballot;
}

static inline uint64_t devrt_arch_active_mask(void)
{
    return devrt_emu_meet(0, false, 0).lanes;
}

/* Arithmetic on the mask alone: no other lane needs to take part. */
static inline uint32_t devrt_arch_rank_in(uint64_t mask)
{
    uint64_t below = (1ull << devrt_arch_lane_id()) - 1;
    return (uint32_t)__builtin_popcountll(mask & below);
}

static inline uint32_t devrt_arch_read_first(uint32_t value)
{
    return devrt_emu_meet(0, false, value).first;
}

/* A value that one lane computed alone, in a branch only the wave's leader takes: itself. */
static inline uint32_t devrt_arch_leader_value(uint32_t value)
{
    return value;
}

/*
 * The raise's one lane (exception.c): each lane is a thread that raises on its own, and
 * must not wait to meet wave-mates that do not raise.
 */
static inline uint32_t devrt_arch_raising_lane_value(uint32_t value)
{
    return value;
}

/* Nothing to keep apart (amdgcn.h says why a GPU does): a lane's registers cost no others. */
static inline void devrt_arch_schedule_apart(void) {}

static inline uint64_t devrt_arch_ballot_sync(uint64_t mask, bool predicate)
{
    return devrt_emu_meet(mask, predicate, 0).ballot;
}

static inline uint32_t devrt_arch_read_first_sync(uint64_t mask, uint32_t value)
{
    return devrt_emu_meet(mask, false, value).first;
}

static inline void devrt_arch_sync_lanes(uint64_t mask)
{
    devrt_emu_meet(mask, false, 0);
}

/*
 * Lanes outnumber cores many times over: give the core to a lane that can progress. The
 * runtime learns that this lane waits, so its wave-mates stop waiting for it to meet them,
 * and a launch past its timeout stops the lane there.
 */
static inline void devrt_arch_sleep(void)
{
    struct devrt_emu_lane *lane = devrt_emu_current_lane;
    lane->sleep(lane);
    sched_yield();
}

static inline uint64_t devrt_arch_clock(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

__attribute__((noreturn)) static inline void devrt_arch_end_wave(void)
{
    devrt_emu_current_lane->end_wave(devrt_emu_current_lane);
}

static inline uint32_t devrt_arch_workitem_id(uint32_t dim)
{
    return dim < 3 ? devrt_emu_current_lane->workitem[dim] : 0;
}

static inline uint32_t devrt_arch_workgroup_id(uint32_t dim)
{
    return dim < 3 ? devrt_emu_current_lane->workgroup[dim] : 0;
}

static inline uint32_t devrt_arch_workgroup_size(uint32_t dim)
{
    return dim < 3 ? devrt_emu_current_lane->workgroup_size[dim] : 1;
}

static inline uint32_t devrt_arch_num_workgroups(uint32_t dim)
{
    return dim < 3 ? devrt_emu_current_lane->num_workgroups[dim] : 1;
}

static inline uint32_t devrt_arch_grid_size(uint32_t dim)
{
    return devrt_arch_workgroup_size(dim) * devrt_arch_num_workgroups(dim);
}

/*
 * The wave's place (the RPC's home port): its index in the grid, which no other wave of the
 * launch shares.
 */
static inline uint32_t devrt_arch_wave_slot(void)
{
    const struct devrt_emu_lane *lane = devrt_emu_current_lane;
    uint32_t group = lane->workgroup[0] +
                     lane->num_workgroups[0] *
                         (lane->workgroup[1] + lane->num_workgroups[1] * lane->workgroup[2]);
    uint32_t lanes = lane->workgroup_size[0] * lane->workgroup_size[1] * lane->workgroup_size[2];
    uint32_t item =
        lane->workitem[0] +
        lane->workgroup_size[0] * (lane->workitem[1] + lane->workgroup_size[1] * lane->workitem[2]);
    uint32_t waves = (lanes + lane->wave_size - 1) / lane->wave_size;
    return group * waves + item / lane->wave_size;
}

/*
 * ThreadSanitizer does not model fences (GCC refuses them under -fsanitize=thread), so the
 * protocols synchronize through release stores and acquire loads, which it sees; the one
 * fence left, before a wave ends, is covered on the host by joining the lane's thread.
 */
static inline void devrt_arch_fence(int order, int scope)
{
    (void)scope;
#ifdef __SANITIZE_THREAD__
    (void)order;
#else
    __atomic_thread_fence(order);
#endif
}

static inline void devrt_arch_barrier(void)
{
    devrt_emu_current_lane->barrier(devrt_emu_current_lane);
}

/*
 * Wake the server if it sleeps. The server sets sleeping before its last look at the
 * ports, so with both sides sequentially consistent one of them always sees the other.
 *
 * Under the HSA backend (its runtime double, tests/hsasim) the doorbell names an HSA
 * signal, which is rung as amdgcn.h rings it: the value stored, then the interrupt, which
 * here counts the event mailbox up and wakes whoever sleeps on it (a futex) where a GPU
 * sends s_sendmsg. The double drops interrupts by clearing the mailbox.
 */
static inline void devrt_arch_ring_doorbell(struct devrt_rpc_doorbell *doorbell)
{
    __atomic_fetch_add(&doorbell->count, 1u, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&doorbell->sleeping, __ATOMIC_SEQ_CST))
        return;
    struct devrt_amdgcn_signal *signal = (struct devrt_amdgcn_signal *)(uintptr_t)doorbell->signal;
    if (!signal) {
        syscall(SYS_futex, &doorbell->count, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
        return;
    }
    __atomic_store_n(&signal->value, 1, __ATOMIC_SEQ_CST);
    uint64_t *mailbox = __atomic_load_n(&signal->event_mailbox, __ATOMIC_SEQ_CST);
    if (mailbox) {
        __atomic_add_fetch((uint32_t *)mailbox, 1u, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, (uint32_t *)mailbox, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    }
}

/* Lanes are host threads: the host reads any of their memory. */
static inline bool devrt_arch_host_can_read(const void *p)
{
    (void)p;
    return true;
}

#endif
