/* An unsized LDS array (HIP's extern __shared__), whose size a launch would give, beside the
   same kernel with a fixed array. Both read the workgroup size, so that LLVM keeps their
   hidden arguments, where it says which of them uses dynamic LDS. */
typedef unsigned int uint32_t;

extern __attribute__((address_space(3))) uint32_t devrt_test_dynamic[];
static __attribute__((address_space(3), loader_uninitialized)) uint32_t devrt_test_fixed[16];

__attribute__((amdgpu_kernel)) void dynamic_lds(uint32_t *out, uint32_t n)
{
    devrt_test_dynamic[n] = n;
    out[0] = devrt_test_dynamic[0] + __builtin_amdgcn_workgroup_size_x();
}

__attribute__((amdgpu_kernel)) void fixed_lds(uint32_t *out, uint32_t n)
{
    devrt_test_fixed[n & 15] = n;
    out[0] = devrt_test_fixed[0] + __builtin_amdgcn_workgroup_size_x();
}
