/*
 * Kernels whose parameters the argument tests know: built as an emulation image, whose
 * signatures devrt_launch checks, and as amdgcn code objects, whose metadata is read back.
 */
#include <devrt/devrt.h>

DEVRT_KERNEL0(no_parameters)
{
    devrt_printf("no parameters\n");
}

/* Every size a launch passes, with a hole before the double in the kernarg segment. */
DEVRT_KERNEL4(mixed, float *, out, float, scale, double, offset, uint32_t, n)
{
    for (uint32_t i = 0; i < n; ++i)
        out[i] = out[i] * scale + (float)offset;
}

/*
 * Reads a hidden argument, so the code object lists the hidden ones after the two the
 * caller passes.
 */
DEVRT_KERNEL2(hidden, uint32_t *, out, uint64_t, n)
{
#if defined(DEVRT_TARGET_AMDGCN)
    const __attribute__((address_space(4))) uint32_t *implicit = __builtin_amdgcn_implicitarg_ptr();
    if (n)
        out[0] = implicit[0];
#else
    if (n)
        out[0] = devrt_num_workgroups(DEVRT_X);
#endif
}
