/*
 * The wire format of output messages (DEVRT_RPC_OUTPUT and DEVRT_RPC_PRINTF), included by
 * the device library and the host runtime. docs/output.md explains the choices.
 *
 * A lane's message is a sequence of 8-byte words, sent with DEVRT_RPC_OPEN_LENGTH because
 * the device does not know the length of its strings until it has copied them:
 *
 *   record   = tag word, value word, ceil(length / 8) data words (bytes, little-endian)
 *   tag word = tag (bits 7..0) | flags (bits 15..8) | length in bytes (bits 63..32)
 *   message  = [FORMAT record] argument or BYTES records ... END tag word
 *
 * Zero words between records are padding: every active lane of a wave writes the same
 * number of words per record, so that the packets of a wave fill, and are sent, together;
 * a lane whose record is shorter than another lane's pads it with zeros. A tag is never 0.
 * The first packet's `arg` is the output context (DEVRT_OUTPUT_CONTEXT_*).
 */
#ifndef DEVRT_OUTPUT_H
#define DEVRT_OUTPUT_H

#include <stdint.h>

/* The two output contexts; the host's output callback is told which one a unit came from. */
#define DEVRT_OUTPUT_CONTEXT_RAW 1u    /* bytes as written: devrt_output_write, puts, putchar */
#define DEVRT_OUTPUT_CONTEXT_PRINTF 2u /* what the host formatted: devrt_printf and family */

/*
 * The most bytes the device copies of one string (a %s argument or the format); a longer
 * or unterminated string is cut there and marked DEVRT_OUTPUT_TRUNCATED.
 */
#define DEVRT_PRINTF_MAX_STRING 4096u
/* The most arguments of one devrt_printf call (the macro and devrt_vprintf alike). */
#define DEVRT_PRINTF_MAX_ARGS 32u

enum devrt_output_tag {
    DEVRT_OUTPUT_PAD = 0,    /* never a tag: a zero word is padding */
    DEVRT_OUTPUT_FORMAT = 1, /* the format string; value: its device address */
    DEVRT_OUTPUT_BYTES,      /* raw output bytes */
    DEVRT_OUTPUT_I64,        /* a signed integer argument, sign-extended */
    DEVRT_OUTPUT_U64,        /* an unsigned integer argument, zero-extended */
    DEVRT_OUTPUT_F64,        /* a floating-point argument as a double's bits */
    DEVRT_OUTPUT_STR,        /* a char * argument: value the address, data the bytes */
    DEVRT_OUTPUT_PTR,        /* any other pointer argument */
    DEVRT_OUTPUT_END,        /* the end of the message: a tag word alone */
    DEVRT_OUTPUT_TAG_END
};

enum devrt_output_flags {
    DEVRT_OUTPUT_TRUNCATED = 1u << 0, /* the string was cut at DEVRT_PRINTF_MAX_STRING */
    DEVRT_OUTPUT_NULL = 1u << 1,      /* a string argument that was a null pointer */
    /*
     * Raw bytes left where they are: a DEVRT_OUTPUT_BYTES record whose LENGTH bytes are not
     * in the message but in device memory at VALUE, for the server to copy. Sent only where
     * the host asked for it (DEVRT_STATE_OUTPUT_BY_ADDRESS); the message then wants a reply,
     * and the bytes stay the caller's until it comes.
     */
    DEVRT_OUTPUT_AT_ADDRESS = 1u << 2
};

/*
 * What a printf conversion character takes: one table for the device's parse of a format
 * (devrt_vprintf, which must know the types of its C arguments) and the host's formatter.
 */
enum devrt_output_conversion {
    DEVRT_CONVERSION_NONE,     /* not a conversion (and %%): no argument */
    DEVRT_CONVERSION_SIGNED,   /* d i */
    DEVRT_CONVERSION_UNSIGNED, /* u o x X b B */
    DEVRT_CONVERSION_CHAR,     /* c: an int */
    DEVRT_CONVERSION_FLOAT,    /* f F e E g G a A */
    DEVRT_CONVERSION_STRING,   /* s */
    DEVRT_CONVERSION_POINTER,  /* p */
    DEVRT_CONVERSION_COUNT     /* n: a pointer, which devrt never writes through */
};

static inline enum devrt_output_conversion devrt_output_conversion(char c)
{
    switch (c) {
    case 'd':
    case 'i': return DEVRT_CONVERSION_SIGNED;
    case 'u':
    case 'o':
    case 'x':
    case 'X':
    case 'b': /* C23 */
    case 'B': return DEVRT_CONVERSION_UNSIGNED;
    case 'c': return DEVRT_CONVERSION_CHAR;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A': return DEVRT_CONVERSION_FLOAT;
    case 's': return DEVRT_CONVERSION_STRING;
    case 'p': return DEVRT_CONVERSION_POINTER;
    case 'n': return DEVRT_CONVERSION_COUNT;
    default: return DEVRT_CONVERSION_NONE;
    }
}

#define DEVRT_OUTPUT_TAG_WORD(tag, flags, length)                                                  \
    ((uint64_t)(tag) | ((uint64_t)(flags) << 8) | ((uint64_t)(length) << 32))
#define DEVRT_OUTPUT_WORD_TAG(word) ((uint32_t)((word) & 0xffu))
#define DEVRT_OUTPUT_WORD_FLAGS(word) ((uint32_t)(((word) >> 8) & 0xffu))
#define DEVRT_OUTPUT_WORD_LENGTH(word) ((uint32_t)((word) >> 32))

#endif
