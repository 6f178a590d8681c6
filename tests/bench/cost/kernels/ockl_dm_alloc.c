#include "cost.h"
#include "ockl.h"

COST_KERNEL cost_ockl_dm_alloc(uint64_t *out, const uint64_t *in)
{
    uint32_t i = COST_INDEX;
    out[i] = (uint64_t)(uintptr_t)__ockl_dm_alloc(in[i]);
}
