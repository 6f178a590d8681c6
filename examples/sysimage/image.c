/*
 * What an ahead-of-time "compile everything" build puts in a host image: next to the host
 * code it was meant to compile, helpers that were only ever meant for kernels. They call
 * devrt's device functions and a compiler intrinsic, so the image has undefined
 * references that no host library defines.
 */
#include <stdint.h>

#include <devrt/devrt.h>

/* An intrinsic reference as Julia's GPU compiler leaves it; C spells the dotted name with
 * an assembler label. */
extern uint32_t amdgcn_mbcnt_lo(uint32_t mask, uint32_t base) __asm__("llvm.amdgcn.mbcnt.lo");

/* The host code the image is for. */
int image_answer(void)
{
    return 42;
}

/* Device helpers, compiled for the host too; nothing on the host calls them. */
void *image_device_buffer(size_t size)
{
    return devrt_malloc(size);
}

uint32_t image_device_lane(void)
{
    return amdgcn_mbcnt_lo(~0u, 0u) + devrt_lane_id();
}
