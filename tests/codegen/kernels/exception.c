/*
 * The exception path against the same kernel without it: the difference is what raising
 * costs a kernel. BASELINE builds the kernel's own work alone.
 */
#include <devrt/devrt.h>

DEVRT_KERNEL2(exception, const int32_t *, in, int32_t *, out)
{
    uint64_t i = devrt_global_id(DEVRT_X);
    int32_t value = in[i];
#ifndef BASELINE
    if (value < 0)
        DEVRT_THROW(DEVRT_EXCEPTION_DOMAIN, "negative input");
#endif
    out[i] = value * 2;
}
