/*
 * A kernel whose private array the compiler must keep in scratch, close to the 131056 bytes
 * per workitem that LLVM allows a wave of 64, and which recurses, so that its dispatch adds
 * a dynamic stack (DEVRT_AMDGPU_DYNAMIC_STACK_BYTES). On gfx90a (waves of 64) the sum is more
 * than a wave may have; on gfx1100 (waves of 32) it fits.
 */
typedef unsigned int uint32_t;

__attribute__((noinline)) static uint32_t depth(volatile uint32_t *p, uint32_t n)
{
    return n ? depth(p, n - 1) + p[n & 3] : p[0];
}

__attribute__((amdgpu_kernel)) void big_stack(volatile uint32_t *out, uint32_t i)
{
    volatile char bytes[130500];
    bytes[i % sizeof bytes] = 1;
    out[0] = bytes[(i * 7) % sizeof bytes] + depth(out, i);
}
