/* The per-thread lane binding of the emulation build. */
#include "arch.h"

_Thread_local struct devrt_emu_lane *devrt_emu_current_lane;

__attribute__((visibility("default"))) void __devrt_emu_enter(struct devrt_emu_lane *lane)
{
    devrt_emu_current_lane = lane;
}
