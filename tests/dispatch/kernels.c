/*
 * Kernels whose dispatch the tests check on every gfx target and code object version: plain
 * C for the amdgcn target, without devrt, so each version's hidden arguments are LLVM's
 * alone. What each reads decides which hidden arguments the metadata lists.
 */
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;

/* Reads the workgroup size and, through the implicit arguments, the block counts (version 5
   and later; version 4 puts the global offsets there), after arguments of every size. */
__attribute__((amdgpu_kernel)) void geometry(uint32_t *out, float scale, double offset, uint32_t n)
{
    const __attribute__((address_space(4))) uint32_t *implicit = __builtin_amdgcn_implicitarg_ptr();
    out[0] = __builtin_amdgcn_workgroup_size_x() + n;
    out[1] = implicit[0] + implicit[1] + implicit[2];
    out[2] = (uint32_t)(scale * (float)offset);
}

/* Recursion the compiler cannot bound: a dynamic stack (version 5 and later say so). */
__attribute__((noinline)) static uint32_t depth(volatile uint32_t *p, uint32_t n)
{
    volatile uint32_t frame[16];
    frame[n & 15] = n;
    return n ? depth(p, n - 1) + frame[3] : p[0];
}

__attribute__((amdgpu_kernel)) void recurse(uint32_t *out, uint64_t n)
{
    out[0] = depth(out, (uint32_t)n);
}

/* No arguments at all. */
__attribute__((amdgpu_kernel)) void empty(void) {}
