/* A kernel that calls the host through ockl's hostcall, linked with ROCm's ockl.bc as a
   HIP compile links it: its code object holds __ockl_hostcall_internal. */
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long long2 __attribute__((ext_vector_type(2)));

long2 __ockl_hostcall_preview(uint32_t service, uint64_t arg0, uint64_t arg1, uint64_t arg2,
                              uint64_t arg3, uint64_t arg4, uint64_t arg5, uint64_t arg6,
                              uint64_t arg7);

__attribute__((amdgpu_kernel)) void calls_host(long *out)
{
    out[0] = __ockl_hostcall_preview(1, 2, 0, 0, 0, 0, 0, 0, 0).x;
}
