#include <devrt/devrt.h>
#include "cost.h"

COST_KERNEL cost_num_workgroups(uint64_t *out, const uint64_t *in)
{
    uint32_t i = COST_INDEX;
    out[i] = devrt_num_workgroups(DEVRT_X);
}
