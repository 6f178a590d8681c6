/*
 * Architecture layer for host emulation: lanes are host threads and a wave is one lane,
 * so every lane-mask operation is exact and trivially in sync. The launch geometry comes
 * from the devrt_emu_lane the runtime bound to this thread.
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

#define DEVRT_ARCH_INLINE
/* ThreadSanitizer sees acquire loads but not fences (devrt_arch_fence). */
#define DEVRT_ARCH_POLL_ORDER __ATOMIC_ACQUIRE
#define DEVRT_ARCH_READ_ONLY(p) (p)

extern _Thread_local struct devrt_emu_lane *devrt_emu_current_lane;

static inline uint32_t devrt_arch_wavefront_size(void)
{
    return 1;
}

static inline uint32_t devrt_arch_lane_id(void)
{
    return 0;
}

static inline uint64_t devrt_arch_ballot(bool predicate)
{
    return predicate ? 1u : 0u;
}

static inline uint64_t devrt_arch_active_mask(void)
{
    return 1;
}

static inline uint32_t devrt_arch_rank_in(uint64_t mask)
{
    (void)mask;
    return 0;
}

static inline uint32_t devrt_arch_read_first(uint32_t value)
{
    return value;
}

static inline uint64_t devrt_arch_ballot_sync(uint64_t mask, bool predicate)
{
    return predicate ? mask & 1u : 0u;
}

static inline uint32_t devrt_arch_read_first_sync(uint64_t mask, uint32_t value)
{
    (void)mask;
    return value;
}

static inline void devrt_arch_sync_lanes(uint64_t mask)
{
    (void)mask;
}

/* Lanes outnumber cores many times over: give the core to a lane that can progress. */
static inline void devrt_arch_sleep(void)
{
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
 */
static inline void devrt_arch_ring_doorbell(struct devrt_rpc_doorbell *doorbell)
{
    __atomic_fetch_add(&doorbell->count, 1u, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&doorbell->sleeping, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &doorbell->count, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

#endif
