/* Uses nothing from devrt: linking the library must not change what it costs. */
#include <devrt/devrt.h>

DEVRT_KERNEL3(no_runtime, float *, out, const float *, in, uint32_t, n)
{
    for (uint32_t i = 0; i < n; ++i)
        out[i] = in[i] * in[n - i - 1] + out[i];
}
