#include <devrt/devrt.h>
#include "cost.h"

COST_KERNEL cost_free(uint64_t *out, const uint64_t *in)
{
    uint32_t i = COST_INDEX;
    devrt_free((void *)(uintptr_t)in[i]);
}
