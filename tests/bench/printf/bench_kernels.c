/* Kernels of the printf benchmark. */
#include <devrt/devrt.h>

/* Each lane prints `rounds` lines of about 40 bytes: three arguments. */
DEVRT_KERNEL1(print_lines, uint32_t, rounds)
{
    uint32_t lane = (uint32_t)devrt_global_id(DEVRT_X);
    for (uint32_t i = 0; i < rounds; ++i)
        devrt_printf("lane %u line %u value %f\n", lane, i, (double)i * 0.5);
}

/* The same through the variadic function, which parses the format on the device. */
DEVRT_KERNEL1(print_lines_variadic, uint32_t, rounds)
{
    uint32_t lane = (uint32_t)devrt_global_id(DEVRT_X);
    for (uint32_t i = 0; i < rounds; ++i)
        (devrt_printf)("lane %u line %u value %f\n", lane, i, (double)i * 0.5);
}

/* Raw output of a fixed 40-byte line. */
DEVRT_KERNEL1(put_lines, uint32_t, rounds)
{
    for (uint32_t i = 0; i < rounds; ++i)
        devrt_puts("a raw line of output, forty bytes long");
}
