#include <devrt/devrt.h>
#include "cost.h"

COST_KERNEL cost_workgroup_size(uint64_t *out, const uint64_t *in)
{
    uint32_t i = COST_INDEX;
    out[i] = devrt_workgroup_size(DEVRT_X);
}
