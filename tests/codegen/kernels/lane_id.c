/* Only the lane id: its cost is exactly the mbcnt instructions. */
#include <devrt/devrt.h>

DEVRT_KERNEL1(lane_id, uint32_t *, out)
{
    out[devrt_workitem_id(DEVRT_X)] = devrt_lane_id();
}
