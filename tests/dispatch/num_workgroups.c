/*
 * devrt_num_workgroups linked from devrt's bitcode: the count comes from the implicit
 * arguments on code object version 5 and later, from a division of the packet's grid on 4.
 */
#include <devrt/devrt.h>

DEVRT_KERNEL1(count_workgroups, uint32_t *, out)
{
    out[0] = devrt_num_workgroups(DEVRT_X);
}
