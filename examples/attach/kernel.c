/*
 * The kernel of the attach example: every workitem greets, and the one at RAISE_AT raises.
 * Built with devrt's bitcode like any devrt kernel; the program loads and launches it itself.
 */
#include <devrt/devrt.h>

DEVRT_KERNEL2(greet, uint32_t, round, uint32_t, raise_at)
{
    uint32_t id = (uint32_t)devrt_global_id(DEVRT_X);
    devrt_printf("round %u: hello from workitem %u\n", round, id);
    if (id == raise_at)
        DEVRT_THROW(DEVRT_EXCEPTION_BOUNDS, "workitem asked to raise");
}
