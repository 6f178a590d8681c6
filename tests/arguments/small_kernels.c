/*
 * Parameters narrower than 4 bytes, and one of each other width: the kernel prints them,
 * so that devrt-run's output shows what arrived (tests/arguments/CMakeLists.txt).
 */
#include <devrt/devrt.h>

DEVRT_KERNEL6(small, int8_t, a, uint8_t, b, int16_t, c, uint16_t, d, float, e, int64_t, f)
{
    if (devrt_global_id(DEVRT_X) == 0)
        devrt_printf("%d %u %d %u %g %lld\n", a, b, c, d, (double)e, (long long)f);
}
