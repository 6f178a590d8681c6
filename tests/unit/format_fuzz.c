/*
 * libFuzzer target for the host side of output: the message parser and the formatter,
 * which read whatever a device wrote. The first byte picks what the rest is:
 *   0: a raw DEVRT_RPC_PRINTF message, 1: a raw DEVRT_RPC_OUTPUT message,
 *   else: a format (up to the first NUL) and arguments made from the bytes after it, so
 *         the formatter sees well-formed messages with hostile formats and types.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/output.h>
#include <devrt/rpc.h>

#include "format.h"

/* The format, and room for the NUL the control build's scan ends at. */
static char arena[(1 << 16) + 1];

/* Device memory as the fuzzer's messages find it: zeros wherever they point. */
static const char *read_zeros(const struct devrt_output_source *source, uint64_t address,
                              uint32_t length)
{
    static char zeros[DEVRT_RPC_MAX_MESSAGE];
    (void)source;
    (void)address;
    return length <= sizeof zeros ? zeros : NULL;
}

static const struct devrt_output_source zero_memory = {read_zeros};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    struct devrt_text text = {0};
    char why[256];
    uint8_t mode = data[0];
    ++data, --size;
    if (mode < 2) {
        devrt_output_render(mode == 0 ? DEVRT_RPC_PRINTF : DEVRT_RPC_OUTPUT, data, size,
                            &zero_memory, &text, why, sizeof why);
        devrt_text_free(&text);
        return 0;
    }
    const uint8_t *nul = memchr(data, 0, size);
    size_t format_length = nul ? (size_t)(nul - data) : size;
    const uint8_t *rest = nul ? nul + 1 : data + size;
    size_t rest_size = (size_t)(data + size - rest);
    struct devrt_format_arg args[DEVRT_FORMAT_MAX_ARGS];
    size_t count = 0;
    while (rest_size >= 9 && count < DEVRT_FORMAT_MAX_ARGS) {
        struct devrt_format_arg *a = &args[count++];
        a->tag = DEVRT_OUTPUT_I64 + rest[0] % 5;
        a->flags = (rest[0] >> 4) & 3;
        memcpy(&a->value, rest + 1, 8);
        rest += 9, rest_size -= 9;
        a->data = NULL;
        a->length = 0;
        if (a->tag == DEVRT_OUTPUT_STR) {
            a->length = (uint32_t)(a->value % 64 < rest_size ? a->value % 64 : rest_size);
            a->data = (const char *)rest;
            rest += a->length, rest_size -= a->length;
        }
    }
    if (format_length > sizeof arena - 1)
        format_length = sizeof arena - 1;
    memcpy(arena, data, format_length);
    devrt_format(&text, arena, format_length, args, count, why, sizeof why);
    devrt_text_free(&text);
#ifdef DEVRT_FUZZ_PLANTED_BUG
    /*
     * The control build: a bug the fuzzer must find, so a silent run means something. Any
     * literal width of 100 or more trips it; the seeds have one-digit widths, which the
     * fuzzer's integer mutations grow within a bounded run.
     */
    arena[format_length] = '\0';
    for (const char *p = arena; (p = memchr(p, '%', (size_t)(arena + format_length - p)));) {
        ++p;
        p += strspn(p, "-+ #0");
        if (strtol(p, NULL, 10) >= 100)
            abort();
    }
#endif
    return 0;
}
