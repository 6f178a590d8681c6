// A kernel written in C++ against <devrt/devrt.h>: the kernel keeps its C name, and
// devrt_printf works without C's _Generic and compound literals (tests/dispatch).
#include <devrt/devrt.h>

DEVRT_KERNEL2(scale, float *, data, uint32_t, n)
{
    uint64_t i = devrt_global_id(DEVRT_X);
    if (i < n)
        data[i] *= 2.0f;
    if (i == 0)
        devrt_printf("scaled %u values of %s, %.1f each\n", n, "four", 0.5);
    void *block = devrt_malloc(16);
    if (!block) /* a pointer through the template overload */
        devrt_printf("no block for %p\n", static_cast<void *>(data));
    devrt_free(block);
}
