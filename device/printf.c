/*
 * Formatted output. The device sends the format and its arguments, typed; the host
 * formats (host/output/format.c). The devrt_printf macro (devrt.h) calls begin, one
 * append per argument and end, all inlined, so a call keeps its arguments in registers and
 * stores each word straight into this lane's RPC packet.
 */
#include "output_stream.h"

DEVRT_ARCH_INLINE struct devrt_printf_state *
devrt_printf_begin(struct devrt_printf_state *state, uint32_t context, const char *format)
{
    devrt_output_open(state, DEVRT_RPC_PRINTF, context);
    devrt_output_put_string(state, DEVRT_OUTPUT_FORMAT, format);
    return state;
}

DEVRT_ARCH_INLINE struct devrt_printf_state *
devrt_printf_append_i64(struct devrt_printf_state *state, int64_t value)
{
    devrt_output_put(state, DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_I64, 0, 0));
    devrt_output_put(state, (uint64_t)value);
    return state;
}

DEVRT_ARCH_INLINE struct devrt_printf_state *
devrt_printf_append_u64(struct devrt_printf_state *state, uint64_t value)
{
    devrt_output_put(state, DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_U64, 0, 0));
    devrt_output_put(state, value);
    return state;
}

DEVRT_ARCH_INLINE struct devrt_printf_state *
devrt_printf_append_f64(struct devrt_printf_state *state, double value)
{
    uint64_t bits;
    __builtin_memcpy(&bits, &value, sizeof bits);
    devrt_output_put(state, DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_F64, 0, 0));
    devrt_output_put(state, bits);
    return state;
}

DEVRT_ARCH_INLINE struct devrt_printf_state *
devrt_printf_append_str(struct devrt_printf_state *state, const char *value)
{
    devrt_output_put_string(state, DEVRT_OUTPUT_STR, value);
    return state;
}

DEVRT_ARCH_INLINE struct devrt_printf_state *
devrt_printf_append_ptr(struct devrt_printf_state *state, const void *value)
{
    devrt_output_put(state, DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_PTR, 0, 0));
    devrt_output_put(state, (uint64_t)(uintptr_t)value);
    return state;
}

DEVRT_ARCH_INLINE int devrt_printf_end(struct devrt_printf_state *state)
{
    return devrt_output_close(state);
}

/* Past a width or a precision at P; *star says whether it was `*`, an int argument. */
static const char *skip_field(const char *p, const char *end, bool *star)
{
    *star = p < end && *p == '*';
    if (*star)
        ++p;
    while (p < end && *p >= '0' && *p <= '9')
        ++p;
    return p;
}

/*
 * devrt_vprintf reads its arguments the C way, so it must parse the format on the device
 * to know their types. Lanes may hold different formats, so it collects its arguments in
 * private memory (scratch on amdgcn) first and then sends them in a loop that every lane
 * runs the same number of times, padding where it has no argument.
 */
int devrt_vprintf(const char *format, va_list args)
{
    uint8_t tags[DEVRT_PRINTF_MAX_ARGS];
    uint64_t values[DEVRT_PRINTF_MAX_ARGS];
    uint32_t count = 0;
#define DEVRT_PUSH(tag, value)                                                                     \
    do {                                                                                           \
        if (count < DEVRT_PRINTF_MAX_ARGS) {                                                       \
            tags[count] = (tag);                                                                   \
            values[count] = (uint64_t)(value);                                                     \
            ++count;                                                                               \
        }                                                                                          \
    } while (0)
    const char *p = format;
    const char *end = format ? format + DEVRT_PRINTF_MAX_STRING : format;
    while (p && p < end && *p) {
        if (*p++ != '%')
            continue;
        while (p < end && (*p == '-' || *p == '+' || *p == ' ' || *p == '#' || *p == '0'))
            ++p;
        bool star;
        p = skip_field(p, end, &star); /* the width */
        if (star)
            DEVRT_PUSH(DEVRT_OUTPUT_I64, (int64_t)va_arg(args, int));
        if (p < end && *p == '.') {
            p = skip_field(p + 1, end, &star); /* the precision */
            if (star)
                DEVRT_PUSH(DEVRT_OUTPUT_I64, (int64_t)va_arg(args, int));
        }
        /* 'L' also as long double; any 64-bit length reads a long long on LP64 targets. */
        int wide = 0; /* 0: int, 1: long long, 2: long double */
        while (p < end &&
               (*p == 'h' || *p == 'l' || *p == 'z' || *p == 'j' || *p == 't' || *p == 'L')) {
            if (*p == 'L')
                wide = 2;
            else if (*p != 'h')
                wide = 1;
            ++p;
        }
        if (p >= end)
            break;
        /*
         * Past a conversion the device does not know, it cannot tell which argument the next
         * one takes, nor its type: reading on would take an integer for a string's pointer.
         * It stops; the host sees too few arguments and says so. Only a bare %% goes on.
         */
        if (devrt_output_conversion(*p) == DEVRT_CONVERSION_NONE && !(*p == '%' && p[-1] == '%'))
            break;
        switch (devrt_output_conversion(*p++)) {
        case DEVRT_CONVERSION_SIGNED:
            if (wide == 1)
                DEVRT_PUSH(DEVRT_OUTPUT_I64, va_arg(args, long long));
            else
                DEVRT_PUSH(DEVRT_OUTPUT_I64, (int64_t)va_arg(args, int));
            break;
        case DEVRT_CONVERSION_CHAR: DEVRT_PUSH(DEVRT_OUTPUT_I64, (int64_t)va_arg(args, int)); break;
        case DEVRT_CONVERSION_UNSIGNED:
            if (wide == 1)
                DEVRT_PUSH(DEVRT_OUTPUT_U64, va_arg(args, unsigned long long));
            else
                DEVRT_PUSH(DEVRT_OUTPUT_U64, va_arg(args, unsigned int));
            break;
        case DEVRT_CONVERSION_FLOAT: {
            double v = wide == 2 ? (double)va_arg(args, long double) : va_arg(args, double);
            uint64_t bits;
            __builtin_memcpy(&bits, &v, sizeof bits);
            DEVRT_PUSH(DEVRT_OUTPUT_F64, bits);
            break;
        }
        case DEVRT_CONVERSION_STRING:
            DEVRT_PUSH(DEVRT_OUTPUT_STR, (uintptr_t)va_arg(args, const char *));
            break;
        case DEVRT_CONVERSION_POINTER:
        case DEVRT_CONVERSION_COUNT:
            DEVRT_PUSH(DEVRT_OUTPUT_PTR, (uintptr_t)va_arg(args, void *));
            break;
        case DEVRT_CONVERSION_NONE: /* %% and unknown conversions take no argument */ break;
        }
    }
#undef DEVRT_PUSH

    struct devrt_printf_state state;
    devrt_printf_begin(&state, DEVRT_OUTPUT_CONTEXT_PRINTF, format);
    for (uint32_t i = 0; devrt_arch_ballot_sync(state.lanes, i < count) != 0; ++i) {
        uint32_t tag = i < count ? tags[i] : DEVRT_OUTPUT_PAD;
        uint64_t value = i < count ? values[i] : 0;
        const char *string = tag == DEVRT_OUTPUT_STR ? (const char *)(uintptr_t)value : NULL;
        uint32_t flags = 0;
        uint32_t length = tag == DEVRT_OUTPUT_STR ? devrt_output_measure(string, &flags) : 0;
        devrt_output_put_record(&state, tag, flags, value, string, length);
    }
    return devrt_printf_end(&state);
}

/* The variadic form, for callers that cannot use the macro (such as other languages). */
int(devrt_printf)(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int result = devrt_vprintf(format, args);
    va_end(args);
    return result;
}
