#include <devrt/devrt.h>
#include "cost.h"

COST_KERNEL cost_baseline(uint64_t *out, const uint64_t *in)
{
    uint32_t i = COST_INDEX;
    out[i] = in[i];
}
