/*
 * Structs passed by value: one small enough for registers, whose fields the host ABI puts in
 * different register classes (floats and an integer), and one it passes in memory. The
 * kernel prints what arrived (tests/arguments/CMakeLists.txt) and writes it back for the
 * host API's test (arguments_test.c).
 */
#include <devrt/devrt.h>

#include "struct_kernels.h"

DEVRT_KERNEL4(by_value, struct devrt_test_point, p, uint32_t, k, struct devrt_test_wide, w,
              struct devrt_test_point *, out)
{
    if (devrt_global_id(DEVRT_X) != 0)
        return;
    devrt_printf("%g %g %d %u %g %lld %u\n", (double)p.x, (double)p.y, p.n, k, w.a, (long long)w.b,
                 w.c[23]);
    if (out)
        *out = p;
}

/* Holds its stream until the host sets *release, so that the host acts before what follows. */
DEVRT_KERNEL1(hold, uint32_t *, release)
{
    while (!__atomic_load_n(release, __ATOMIC_ACQUIRE))
        ;
}

/* A plain function: the emulation has no caller for it, so it cannot pass it a struct. */
DEVRT_KERNEL void plain_by_value(struct devrt_test_point p)
{
    if (devrt_global_id(DEVRT_X) == 0)
        devrt_printf("%g\n", (double)p.x);
}
