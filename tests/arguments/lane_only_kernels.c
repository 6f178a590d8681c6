/*
 * Kernels that call nothing of devrt that needs its state block: the image must still link
 * what loading it needs (__devrt_state, __devrt_emu_enter).
 */
#include <devrt/devrt.h>

DEVRT_KERNEL1(lane_only, uint32_t *, lanes)
{
    lanes[devrt_global_id(DEVRT_X)] = devrt_lane_id();
}

DEVRT_KERNEL0(nothing) {}
