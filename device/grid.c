/* The launch grid: ids and sizes per dimension, and the workgroup barrier. */
#include "arch/arch.h"

uint32_t devrt_workitem_id(uint32_t dim)
{
    return devrt_arch_workitem_id(dim);
}

uint32_t devrt_workgroup_id(uint32_t dim)
{
    return devrt_arch_workgroup_id(dim);
}

uint32_t devrt_workgroup_size(uint32_t dim)
{
    return devrt_arch_workgroup_size(dim);
}

uint32_t devrt_num_workgroups(uint32_t dim)
{
    return devrt_arch_num_workgroups(dim);
}

uint32_t devrt_grid_size(uint32_t dim)
{
    return devrt_arch_grid_size(dim);
}

uint64_t devrt_global_id(uint32_t dim)
{
    return (uint64_t)devrt_arch_workgroup_id(dim) * devrt_arch_workgroup_size(dim) +
           devrt_arch_workitem_id(dim);
}

void devrt_barrier(void)
{
    devrt_arch_barrier();
}

uint64_t devrt_clock(void)
{
    return devrt_arch_clock();
}
