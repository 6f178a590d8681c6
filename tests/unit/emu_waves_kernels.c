/*
 * The kernel of tests/unit/emu_waves_test.c: every lane spins on *release, a bare loop with
 * no call into devrt, so that only the stop signal can end it early, then counts itself in
 * *ran. It prints nothing: the test runs it on the scheduler alone, with no runtime to serve
 * the device.
 */
#include <devrt/devrt.h>

DEVRT_KERNEL2(spin_bare, uint32_t *, release, uint32_t *, ran)
{
    while (!__atomic_load_n(release, __ATOMIC_RELAXED))
        ;
    __atomic_fetch_add(ran, 1u, __ATOMIC_RELAXED);
}
