/*
 * A kernel in two files, as a consumer's might be, for the kernel rules' tests
 * (CMakeLists.txt here), which only configure.
 */
#include <devrt/devrt.h>

#include "helper.h"

DEVRT_KERNEL1(twice, uint32_t *, data)
{
    data[devrt_global_id(DEVRT_X)] = twice_of(data[devrt_global_id(DEVRT_X)]);
}
