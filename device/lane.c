/* Lanes and wavefronts. */
#include "arch/arch.h"

uint32_t devrt_lane_id(void)
{
    return devrt_arch_lane_id();
}

uint32_t devrt_active_lane_id(void)
{
    return devrt_arch_rank_in(devrt_arch_active_mask());
}

uint32_t devrt_wavefront_size(void)
{
    return devrt_arch_wavefront_size();
}

uint64_t devrt_ballot(bool predicate)
{
    return devrt_arch_ballot(predicate);
}

uint64_t devrt_active_mask(void)
{
    return devrt_arch_active_mask();
}

uint32_t devrt_broadcast_first(uint32_t value)
{
    return devrt_arch_read_first(value);
}

uint64_t devrt_broadcast_first_u64(uint64_t value)
{
    /* Both halves from the same lanes: the active mask read twice may differ on nvptx. */
    uint64_t lanes = devrt_arch_active_mask();
    uint64_t high = devrt_arch_read_first_sync(lanes, (uint32_t)(value >> 32));
    return high << 32 | devrt_arch_read_first_sync(lanes, (uint32_t)value);
}
