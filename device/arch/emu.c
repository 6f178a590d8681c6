/* The per-thread lane binding of the emulation build, and its count of atomics. */
#include "arch.h"

_Thread_local struct devrt_emu_lane *devrt_emu_current_lane;

uint64_t devrt_emu_atomic_count;

/*
 * Every device function of the archive needs this file (its lane), but only some need
 * state.c, so an image whose kernels call only lane and grid functions would link without
 * __devrt_state, which the host needs to load any image. This reference links it in.
 */
__attribute__((used)) static struct devrt_state **const devrt_emu_state_link = &__devrt_state;

__attribute__((visibility("default"))) void __devrt_emu_enter(struct devrt_emu_lane *lane)
{
    devrt_emu_current_lane = lane;
}

/*
 * For tests only: how many read-modify-write atomics the device code of this image has
 * issued so far, so that a test can show that a wave's lanes share their atomics.
 */
__attribute__((visibility("default"))) uint64_t __devrt_emu_atomics(void)
{
    return __atomic_load_n(&devrt_emu_atomic_count, __ATOMIC_RELAXED);
}
