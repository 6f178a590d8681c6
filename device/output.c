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

/*
 * From this length on, a write leaves its bytes where they are, when the host can copy
 * them (DEVRT_STATE_OUTPUT_BY_ADDRESS): one round trip and the host's copy cost less than
 * the round trip per packet that streaming them costs (docs/output.md, "Long writes").
 */
#define DEVRT_OUTPUT_BY_ADDRESS_FROM 512u

DEVRT_ARCH_INLINE int devrt_output_write(uint32_t context, const void *data, uint32_t size)
{
    if (size > DEVRT_OUTPUT_MAX_WRITE)
        return -1;
    bool by_address =
        data && size >= DEVRT_OUTPUT_BY_ADDRESS_FROM &&
        (DEVRT_ARCH_READ_ONLY(__devrt_state)->flags & DEVRT_STATE_OUTPUT_BY_ADDRESS) &&
        devrt_arch_host_can_read(data);
    struct devrt_printf_state s;
    devrt_output_open(&s, DEVRT_RPC_OUTPUT, context);
    uint32_t flags = !data ? DEVRT_OUTPUT_NULL : by_address ? DEVRT_OUTPUT_AT_ADDRESS : 0;
    uint32_t length = data ? size : 0;
    devrt_output_put(&s, DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_BYTES, flags, length));
    devrt_output_put(&s, (uint64_t)(uintptr_t)data);
    devrt_output_put_bytes(&s, data, by_address ? 0 : length);
    return devrt_output_close(&s, devrt_arch_ballot_sync(s.lanes, by_address) != 0);
}

/* Like C's puts: the string and a newline, as one unit. */
DEVRT_ARCH_INLINE int devrt_puts(const char *string)
{
    struct devrt_printf_state s;
    devrt_output_open(&s, DEVRT_RPC_OUTPUT, DEVRT_OUTPUT_CONTEXT_RAW);
    devrt_output_put_string(&s, DEVRT_OUTPUT_BYTES, string);
    devrt_output_put_record(&s, DEVRT_OUTPUT_BYTES, 0, 0, "\n", 1);
    return devrt_output_close(&s, false) == 0 ? 1 : -1;
}

DEVRT_ARCH_INLINE int devrt_putchar(int c)
{
    char byte = (char)c;
    struct devrt_printf_state s;
    devrt_output_open(&s, DEVRT_RPC_OUTPUT, DEVRT_OUTPUT_CONTEXT_RAW);
    devrt_output_put(&s, DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_BYTES, 0, 1));
    devrt_output_put(&s, 0);
    devrt_output_put(&s, (uint8_t)byte);
    return devrt_output_close(&s, false) == 0 ? (uint8_t)byte : -1;
}
