/*
 * A host image with the foreign device symbols a compiler leaks. C cannot spell a dotted
 * name, so each declaration takes its real name from an assembler label.
 */
#include <stdint.h>

extern void *julia_gpu_state_getter(void) __asm__("julia.gpu.state_getter");
extern uint32_t llvm_amdgcn_mbcnt_lo(uint32_t mask, uint32_t base) __asm__("llvm.amdgcn.mbcnt.lo");

void shield_call(void)
{
    julia_gpu_state_getter();
}

uint32_t shield_lane(void)
{
    return llvm_amdgcn_mbcnt_lo(~0u, 0u);
}
