/*
 * libFuzzer target for the variadic form's typing of a format (device/printf_types.h), the
 * device's own code run on the host: devrt_vprintf reads each argument with va_arg as the
 * type this gives it, so a wrong type reads another argument's bytes (an integer taken for
 * a string's pointer faulted the lane). Each input is a format; it is typed as the device
 * types it, and the host formatter then formats it with arguments of exactly those types:
 *   - no argument may be of a kind its conversion does not read (the device and the host
 *     read the format alike);
 *   - for an unnumbered format, the device may type no argument past the first conversion
 *     it cannot type (an unknown conversion, a length C does not define for it, a mix of
 *     numbered and unnumbered ones): the caller's arguments from there on are unknown.
 * A failure aborts with the format and both views.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/output.h>

#include "format.h"
#include "printf_types.h"

/* The format, NUL-terminated, as the device reads it (at most its first 4096 bytes). */
static char arena[DEVRT_PRINTF_MAX_STRING + 1];

/* The format with every byte outside printable ASCII as \\xNN, for the report. */
static void print_format(const char *format)
{
    for (const unsigned char *p = (const unsigned char *)format; *p; ++p)
        fprintf(stderr, *p >= 32 && *p < 127 && *p != '\\' ? "%c" : "\\x%02x", *p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t length = size < DEVRT_PRINTF_MAX_STRING ? size : DEVRT_PRINTF_MAX_STRING;
    memcpy(arena, data, length);
    arena[length] = '\0';
    length = strlen(arena);
    uint8_t reads[DEVRT_PRINTF_MAX_ARGS];
    uint32_t count = devrt_printf_type_arguments(arena, DEVRT_PRINTF_MAX_STRING, reads);
#ifdef DEVRT_FUZZ_PLANTED_BUG
    /*
     * The control build: the typing as it was, reading on past a conversion it did not know,
     * which the second check must catch (typing one more argument there, as an int).
     */
    if (count < DEVRT_PRINTF_MAX_ARGS && strpbrk(arena, "ykKqQrRvVyY") && strchr(arena, 'd'))
        reads[count++] = DEVRT_READ_INT;
#endif
    struct devrt_format_arg args[DEVRT_PRINTF_MAX_ARGS];
    for (uint32_t i = 0; i < count; ++i) {
        struct devrt_format_arg *a = &args[i];
        *a = (struct devrt_format_arg){.value = 3};
        switch (reads[i]) {
        case DEVRT_READ_INT:
        case DEVRT_READ_LLONG: a->tag = DEVRT_OUTPUT_I64; break;
        case DEVRT_READ_UINT:
        case DEVRT_READ_ULLONG: a->tag = DEVRT_OUTPUT_U64; break;
        case DEVRT_READ_DOUBLE:
        case DEVRT_READ_LDOUBLE: a->tag = DEVRT_OUTPUT_F64; break;
        case DEVRT_READ_STRING:
            a->tag = DEVRT_OUTPUT_STR;
            a->data = "str";
            a->length = 3;
            break;
        case DEVRT_READ_POINTER: a->tag = DEVRT_OUTPUT_PTR; break;
        default:
            fprintf(stderr, "vprintf_fuzz: \"");
            print_format(arena);
            fprintf(stderr, "\": argument %u typed %u, below the count %u\n", i + 1, reads[i],
                    count);
            abort();
        }
    }
    struct devrt_text text = {0};
    char why[256];
    struct devrt_format_check check;
    devrt_format_checked(&text, arena, length, args, count, why, sizeof why, &check);
    devrt_text_free(&text);
    if (check.misfits != 0 || (!check.numbered && count > check.typed)) {
        fprintf(stderr, "vprintf_fuzz: \"");
        print_format(arena);
        fprintf(stderr,
                "\": the device typed %u arguments, %u of a kind their conversion does not read;"
                " the host's conversions typed %zu (%s)\n",
                count, check.misfits, check.typed, why);
        abort();
    }
    return 0;
}
