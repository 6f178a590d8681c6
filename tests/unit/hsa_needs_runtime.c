/*
 * A library that links the HSA runtime and calls it directly, as libdevrt did before it opened
 * the runtime with dlopen: the control of unit.hsa.not_needed, which check_needed.py must flag.
 */
#include <hsa/hsa.h>

__attribute__((visibility("default"))) int devrt_test_start_hsa(void)
{
    return hsa_init() == HSA_STATUS_SUCCESS;
}
