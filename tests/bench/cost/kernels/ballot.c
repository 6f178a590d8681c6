#include <devrt/devrt.h>
#include "cost.h"

COST_KERNEL cost_ballot(uint64_t *out, const uint64_t *in)
{
    uint32_t i = COST_INDEX;
    out[i] = devrt_ballot(in[i] & 1);
}
