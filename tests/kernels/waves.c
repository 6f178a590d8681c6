/*
 * Kernels for the emulation's wide waves (tests/emu/waves_test.c). They reach below the
 * public API, to the architecture layer's lane-mask operations, because what they test is
 * how lanes meet there; they are built for the emulation only.
 */
#include <devrt/devrt.h>

#include "arch/arch.h"

/* Sizes of four size classes, mixed across the wave; every lane keeps its block. */
DEVRT_KERNEL1(malloc_mixed, uint32_t *, failures)
{
    static const size_t sizes[] = {16, 48, 100, 200};
    size_t size = sizes[devrt_lane_id() % 4];
    char *block = devrt_malloc(size);
    if (!block)
        __atomic_fetch_add(failures, 1u, __ATOMIC_RELAXED);
    else
        block[size - 1] = 1;
}

/* One line per lane, one packet each. */
DEVRT_KERNEL0(hello)
{
    devrt_printf("lane %u of the wave\n", devrt_lane_id());
}

/*
 * Each lane takes a slot of a counter shared by the grid; the first lane of the lanes that
 * meet adds for all of them. With reread set, the lanes ask again who is here when they
 * share the base, as if a wave ran in lock-step: under independent scheduling that may be
 * another set of lanes, whose first lane never added, and slots are taken twice.
 */
DEVRT_KERNEL4(take_slots, uint32_t *, counter, uint32_t *, slots, uint32_t, count, uint32_t, reread)
{
    uint64_t lanes = devrt_arch_active_mask();
    uint32_t rank = devrt_arch_rank_in(lanes);
    uint32_t base = 0;
    if (rank == 0)
        base = __atomic_fetch_add(counter, (uint32_t)__builtin_popcountll(lanes), __ATOMIC_RELAXED);
    base = reread ? devrt_arch_read_first(base) : devrt_arch_read_first_sync(lanes, base);
    uint32_t slot = base + rank;
    if (slot < count)
        __atomic_fetch_add(&slots[slot], 1u, __ATOMIC_RELAXED);
}

/*
 * Converged code, through the public API: each lane takes a ballot, then the active mask
 * right after it. out[lane]: the two masks agreed and named the whole wave (1), or not (0).
 */
DEVRT_KERNEL2(back_to_back, uint32_t *, out, uint32_t, wave)
{
    uint64_t ballot = devrt_ballot(true);
    uint64_t active = devrt_active_mask();
    uint64_t whole = wave == 64 ? ~0ull : (1ull << wave) - 1;
    out[devrt_global_id(DEVRT_X)] = ballot == active && active == whole;
}

/*
 * The lanes of a wave run collectives over one mask; lane `victim` raises between two of
 * them. The others must go on without it: seen[lane] = their ballot after the raise, which
 * names every lane but the victim, first[lane] = the lowest of them, and their printf
 * reaches the host.
 */
DEVRT_KERNEL4(raise_mid_collective, uint64_t *, seen, uint32_t *, first, uint32_t *, done, uint32_t,
              victim)
{
    uint32_t id = devrt_workitem_id(DEVRT_X);
    uint64_t lanes = devrt_arch_active_mask();
    devrt_arch_ballot_sync(lanes, true);
    if (id == victim)
        DEVRT_THROW(DEVRT_EXCEPTION_BOUNDS, "raised mid-collective");
    seen[id] = devrt_arch_ballot_sync(lanes, true);
    first[id] = devrt_arch_read_first_sync(lanes, id);
    devrt_arch_sync_lanes(lanes);
    devrt_printf("lane %u went on\n", id);
    __atomic_fetch_add(done, 1u, __ATOMIC_RELAXED);
}
