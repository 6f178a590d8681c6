#include "cost.h"
#include "ockl.h"

COST_KERNEL cost_ockl_get_group_id(uint64_t *out, const uint64_t *in)
{
    uint32_t i = COST_INDEX;
    out[i] = __ockl_get_group_id(0);
}
