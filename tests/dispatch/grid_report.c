/*
 * A kernel whose calls of devrt's grid functions LLVM does not all inline at -O2: the
 * dimension reaches them as an argument, so they read the implicit arguments at offsets
 * the AMDGPU attributor cannot bound unless it sees every caller (internalized).
 */
#include <devrt/devrt.h>

DEVRT_KERNEL1(grid_report, uint64_t *, out)
{
    uint32_t gx = (uint32_t)devrt_global_id(DEVRT_X), gy = (uint32_t)devrt_global_id(DEVRT_Y),
             gz = (uint32_t)devrt_global_id(DEVRT_Z);
    uint32_t nx = devrt_grid_size(DEVRT_X), ny = devrt_grid_size(DEVRT_Y);
    uint64_t flat = gx + (uint64_t)nx * (gy + (uint64_t)ny * gz);
    out[flat] = (uint64_t)gx | (uint64_t)gy << 16 | (uint64_t)gz << 32 |
                (uint64_t)devrt_workgroup_id(DEVRT_Z) << 48;
    if (flat == 0)
        devrt_printf("grid %u,%u,%u wg %u,%u,%u nwg %u,%u,%u wave %u\n", nx, ny,
                     devrt_grid_size(DEVRT_Z), devrt_workgroup_size(DEVRT_X),
                     devrt_workgroup_size(DEVRT_Y), devrt_workgroup_size(DEVRT_Z),
                     devrt_num_workgroups(DEVRT_X), devrt_num_workgroups(DEVRT_Y),
                     devrt_num_workgroups(DEVRT_Z), devrt_wavefront_size());
}
