#include "cost.h"
#include "ockl.h"

COST_KERNEL cost_ockl_dm_dealloc(uint64_t *out, const uint64_t *in)
{
    uint32_t i = COST_INDEX;
    __ockl_dm_dealloc(in[i]);
}
