#include <devrt/devrt.h>
#include "cost.h"

COST_KERNEL cost_signal_exception_code(uint64_t *out, const uint64_t *in)
{
    uint32_t i = COST_INDEX;
    if (in[i] == 0)
        devrt_signal_exception_code(DEVRT_EXCEPTION_DOMAIN, "zero input");
    out[i] = in[i];
}
