/* A kernel that calls a function of another object: LLVM cannot see what it uses, so the
   metadata lists every hidden argument, ockl's hostcall buffer among them. */
typedef unsigned int uint32_t;

void devrt_test_elsewhere(uint32_t *out);

__attribute__((amdgpu_kernel)) void calls_out(uint32_t *out)
{
    devrt_test_elsewhere(out);
}
