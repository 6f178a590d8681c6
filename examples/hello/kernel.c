/*
 * A kernel that uses what devrt gives device code: each workitem allocates a block on the
 * device heap, prints through it, frees it; a workitem whose index the host names raises
 * an exception, which the host reports after the output. Built for the host emulation,
 * for AMD GPUs (amdgcn) and for NVIDIA GPUs (nvptx) from this one file.
 */
#include <devrt/devrt.h>

DEVRT_KERNEL1(hello, uint32_t, raise_at)
{
    uint32_t id = (uint32_t)devrt_global_id(DEVRT_X);
    uint32_t *squares = devrt_malloc(4 * sizeof *squares);
    if (!squares) {
        devrt_printf("workitem %u: no memory\n", id);
        return;
    }
    for (uint32_t i = 0; i < 4; ++i)
        squares[i] = (id + i) * (id + i);
    devrt_printf("workitem %u of workgroup %u: %u %u %u %u\n", id, devrt_workgroup_id(DEVRT_X),
                 squares[0], squares[1], squares[2], squares[3]);
    devrt_free(squares);
    if (id == raise_at)
        DEVRT_THROW(DEVRT_EXCEPTION_DOMAIN, "raise_at names this workitem");
}
