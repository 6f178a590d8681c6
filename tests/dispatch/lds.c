/*
 * A kernel with 96 KiB of LDS, more than the 64 KiB of every GPU before gfx950 (160 KiB);
 * only an LLVM that knows gfx950 (20 and later) builds it.
 */
typedef unsigned int uint32_t;

static __attribute__((address_space(3), loader_uninitialized)) uint32_t shared[24576];

__attribute__((amdgpu_kernel)) void big_lds(uint32_t *out, uint32_t i)
{
    shared[i % 24576] = i;
    __builtin_amdgcn_s_barrier();
    out[0] = shared[(i * 7) % 24576];
}
