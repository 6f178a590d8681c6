/* The function callee.c's kernel calls, compiled apart so that LLVM cannot look inside. */
typedef unsigned int uint32_t;

void devrt_test_elsewhere(uint32_t *out)
{
    out[0] = 1;
}
