/* A kernel that reads the implicit argument ockl's malloc finds its heap in (hidden_heap_v1,
   96 bytes past the implicit arguments' start in code object version 5) as ockl's optimized
   code does, with a scalar load, and nothing else of ockl's: built at -O0, it lists the
   hostcall buffer too, which it never reads. */
typedef unsigned long uint64_t;
typedef __attribute__((address_space(4))) const uint64_t constant_u64;

__attribute__((amdgpu_kernel)) void reads_heap(uint64_t *out)
{
    out[0] = ((constant_u64 *)__builtin_amdgcn_implicitarg_ptr())[96 / sizeof(uint64_t)];
}
