/*
 * An exception storm (tests/emu/storm_test.c): every lane of the grid raises at once. Lanes
 * whose id is a multiple of 64 print a line first; every lane counts itself before it
 * raises, so the test knows the storm was whole.
 */
#include <devrt/devrt.h>

DEVRT_KERNEL1(storm, uint32_t *, raised)
{
    uint64_t id = devrt_global_id(DEVRT_X);
    if (id % 64 == 0)
        devrt_printf("lane %u before the storm\n", (uint32_t)id);
    __atomic_fetch_add(raised, 1u, __ATOMIC_RELAXED);
    devrt_signal_exception_at(DEVRT_EXCEPTION_BOUNDS, "the storm", NULL, 0, id);
}

/* The launch after the storm: every lane counts itself. */
DEVRT_KERNEL1(calm, uint32_t *, ran)
{
    __atomic_fetch_add(ran, 1u, __ATOMIC_RELAXED);
}
