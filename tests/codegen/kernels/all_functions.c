/*
 * A kernel that reaches every device function: each one is called or, through a table
 * generated from the manifest, has its address taken, so a new function is covered the
 * day it is added.
 */
#include <devrt/devrt.h>

#define DEVRT_FUNCTION(ret, name, params) (void *)name,
#define DEVRT_NORETURN(name, params) (void *)name,
#define DEVRT_VARIABLE(type, name) (void *)&name,
static void *const every_symbol[] = {
#include <devrt/symbols.def>
};

DEVRT_KERNEL2(all_functions, uint64_t *, out, uint32_t, which)
{
    uint64_t id = devrt_global_id(DEVRT_X) + devrt_global_id(DEVRT_Y) + devrt_global_id(DEVRT_Z);
    out[id] = devrt_lane_id() + devrt_active_lane_id() + devrt_wavefront_size() +
              devrt_ballot(which & 1) + devrt_broadcast_first(which) +
              devrt_broadcast_first_u64(id) + devrt_active_mask() + devrt_grid_size(DEVRT_Y) +
              devrt_num_workgroups(DEVRT_Z) + devrt_workgroup_size(DEVRT_X) +
              devrt_workgroup_id(DEVRT_X) + devrt_workitem_id(DEVRT_Y) +
              (uint64_t)(uintptr_t)devrt_kernel_state();
    devrt_barrier();
    out[id + 1] =
        (uint64_t)(uintptr_t)every_symbol[which % (sizeof every_symbol / sizeof every_symbol[0])];
    if (which == 1)
        devrt_signal_exception();
    if (which == 2)
        devrt_signal_exception_code(DEVRT_EXCEPTION_BOUNDS, "index out of range");
    if (which == 3)
        DEVRT_THROW(DEVRT_EXCEPTION_DOMAIN, "negative input");
}
