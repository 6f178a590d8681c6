#include "cost.h"
#include "ockl.h"

COST_KERNEL cost_ockl_lane_u32(uint64_t *out, const uint64_t *in)
{
    uint32_t i = COST_INDEX;
    out[i] = __ockl_lane_u32();
}
