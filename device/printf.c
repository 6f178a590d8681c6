/*
 * Formatted output. The device sends the format and its arguments, typed; the host
 * formats (host/output/format.c). The devrt_printf macro (devrt.h) calls begin, one
 * append per argument and end, all inlined, so a call keeps its arguments in registers and
 * stores each word straight into this lane's RPC packet.
 */
#include "output_stream.h"
#include "printf_types.h"

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
    return devrt_output_close(state, false);
}

/*
 * devrt_vprintf reads its arguments the C way, so it must parse the format on the device
 * to know their types (printf_types.h), in a first pass, since numbered conversions (%N$)
 * may name them in any order. Lanes may hold different formats, so it collects its
 * arguments in private memory (scratch on amdgcn) first and then sends them in a loop that
 * every lane runs the same number of times, padding where it has no argument.
 */
int devrt_vprintf(const char *format, va_list args)
{
#if !DEVRT_ARCH_VA_ARG
    /* The arguments cannot be read (arch.h): nothing is printed, and the caller learns it. */
    (void)format;
    (void)args;
    return -1;
#else
    uint8_t tags[DEVRT_PRINTF_MAX_ARGS];
    uint64_t values[DEVRT_PRINTF_MAX_ARGS];
    uint32_t count = devrt_printf_type_arguments(format, DEVRT_PRINTF_MAX_STRING, tags);
    for (uint32_t i = 0; i < count; ++i) {
        uint8_t tag = DEVRT_OUTPUT_I64;
        uint64_t value = 0;
        switch (tags[i]) {
        case DEVRT_READ_INT: value = (uint64_t)(int64_t)va_arg(args, int); break;
        case DEVRT_READ_UINT:
            tag = DEVRT_OUTPUT_U64;
            value = va_arg(args, unsigned int);
            break;
        case DEVRT_READ_LLONG: value = (uint64_t)va_arg(args, long long); break;
        case DEVRT_READ_ULLONG:
            tag = DEVRT_OUTPUT_U64;
            value = va_arg(args, unsigned long long);
            break;
        case DEVRT_READ_DOUBLE:
        case DEVRT_READ_LDOUBLE: {
            double v = tags[i] == DEVRT_READ_LDOUBLE ? (double)va_arg(args, long double)
                                                     : va_arg(args, double);
            __builtin_memcpy(&value, &v, sizeof value);
            tag = DEVRT_OUTPUT_F64;
            break;
        }
        case DEVRT_READ_STRING:
            tag = DEVRT_OUTPUT_STR;
            value = (uintptr_t)va_arg(args, const char *);
            break;
        default: /* DEVRT_READ_POINTER: the typing returns no other before count */
            tag = DEVRT_OUTPUT_PTR;
            value = (uintptr_t)va_arg(args, void *);
            break;
        }
        tags[i] = tag;
        values[i] = value;
    }

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
#endif
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
