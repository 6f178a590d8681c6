/*
 * Built with -m32, this is a 32-bit relocatable object for devrt-leaks to read. devrt.h
 * allows 64-bit targets only, so the declaration is written out here.
 */
unsigned devrt_lane_id(void);

unsigned leaks32_lane(void)
{
    return devrt_lane_id();
}
