/* Raw output: bytes as the kernel wrote them, one unit per call and lane. */
#include "output_stream.h"

DEVRT_ARCH_INLINE uint32_t devrt_output_context(void)
{
    return DEVRT_OUTPUT_CONTEXT_RAW;
}

DEVRT_ARCH_INLINE uint32_t devrt_printf_output_context(void)
{
    return DEVRT_OUTPUT_CONTEXT_PRINTF;
}

/* Room for the record's two words, the end word and the first packet's header. */
#define DEVRT_OUTPUT_MAX_WRITE (DEVRT_RPC_MAX_MESSAGE - 4u * DEVRT_RPC_PACKET_BYTES)

DEVRT_ARCH_INLINE int devrt_output_write(uint32_t context, const void *data, uint32_t size)
{
    if (size > DEVRT_OUTPUT_MAX_WRITE)
        return -1;
    struct devrt_printf_state s;
    devrt_output_open(&s, DEVRT_RPC_OUTPUT, context);
    devrt_output_put_record(&s, DEVRT_OUTPUT_BYTES, data ? 0 : DEVRT_OUTPUT_NULL,
                            (uint64_t)(uintptr_t)data, data, data ? size : 0);
    return devrt_output_close(&s);
}

/* Like C's puts: the string and a newline, as one unit. */
DEVRT_ARCH_INLINE int devrt_puts(const char *string)
{
    struct devrt_printf_state s;
    devrt_output_open(&s, DEVRT_RPC_OUTPUT, DEVRT_OUTPUT_CONTEXT_RAW);
    devrt_output_put_string(&s, DEVRT_OUTPUT_BYTES, string);
    devrt_output_put_record(&s, DEVRT_OUTPUT_BYTES, 0, 0, "\n", 1);
    return devrt_output_close(&s) == 0 ? 1 : -1;
}

DEVRT_ARCH_INLINE int devrt_putchar(int c)
{
    char byte = (char)c;
    struct devrt_printf_state s;
    devrt_output_open(&s, DEVRT_RPC_OUTPUT, DEVRT_OUTPUT_CONTEXT_RAW);
    devrt_output_put(&s, DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_BYTES, 0, 1));
    devrt_output_put(&s, 0);
    devrt_output_put(&s, (uint8_t)byte);
    return devrt_output_close(&s) == 0 ? (uint8_t)byte : -1;
}
