/*
 * A kernel that makes an RPC request from every lane, built for gfx1100 in waves of 32 and,
 * with -mwavefrontsize64, of 64: the server must take requests from all 64 lanes of the
 * second although the GPU's own waves are 32 (issue 15, defect 9).
 */
#include <devrt/devrt.h>

DEVRT_KERNEL1(wave_echo, uint64_t *, out)
{
    uint64_t lane = devrt_lane_id();
    out[devrt_workitem_id(DEVRT_X)] = devrt_rpc_echo(&lane, sizeof lane);
}
