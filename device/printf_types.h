/*
 * The device's reading of a printf format: which C type each argument of a variadic call
 * is, so that devrt_vprintf can take them with va_arg. Plain C with no target in it, so
 * that the host fuzzer of the variadic form (tests/unit/vprintf_fuzz.c) runs it as is.
 *
 * It must never type an argument it cannot be sure of: va_arg of the wrong type reads
 * another argument's bytes (a string's pointer from an integer faults the lane). So it
 * stops at the first conversion it does not know, a length modifier C does not define for
 * the conversion, a format that mixes numbered (%N$) and unnumbered conversions, and, for
 * numbered ones, before the first position no conversion types or two type differently.
 * The host then has fewer arguments than the format asks for, and reports it.
 */
#ifndef DEVRT_PRINTF_TYPES_H
#define DEVRT_PRINTF_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include <devrt/output.h>

/* The C type va_arg reads an argument as. */
enum devrt_printf_read {
    DEVRT_READ_NONE,    /* no conversion types it */
    DEVRT_READ_INT,     /* int: d i c, and h hh w8 w16 w32 */
    DEVRT_READ_UINT,    /* unsigned int: u o x X b B */
    DEVRT_READ_LLONG,   /* 64 bits: l ll z j t w64 */
    DEVRT_READ_ULLONG,  /* the same, unsigned */
    DEVRT_READ_DOUBLE,  /* f F e E g G a A */
    DEVRT_READ_LDOUBLE, /* L f ... */
    DEVRT_READ_STRING,  /* s: a char *, whose bytes are copied */
    DEVRT_READ_POINTER, /* p n */
    DEVRT_READ_CONFLICT /* two conversions type one position differently */
};

/* Reads a run of decimal digits at *P (at most 9, so no overflow); -1 when there is none. */
static inline int devrt_printf_number(const char **p, const char *end)
{
    int value = -1;
    for (int digits = 0; *p < end && **p >= '0' && **p <= '9'; ++*p)
        if (digits++ < 9)
            value = (value < 0 ? 0 : value * 10) + (**p - '0');
    return value;
}

/* An `N$` at *P: N (past the `$`), or 0 with *P unmoved when there is none (or N is 0). */
static inline uint32_t devrt_printf_position(const char **p, const char *end)
{
    const char *q = *p;
    if (q >= end || *q < '1' || *q > '9') /* "%0" begins a flag */
        return 0;
    int n = devrt_printf_number(&q, end);
    if (n <= 0 || q >= end || *q != '$')
        return 0;
    *p = q + 1;
    return (uint32_t)n;
}

/* Whether two reads take the same bytes the same way (signedness aside). */
static inline bool devrt_printf_same_read(uint8_t a, uint8_t b)
{
    if (a == DEVRT_READ_UINT || a == DEVRT_READ_ULLONG)
        --a;
    if (b == DEVRT_READ_UINT || b == DEVRT_READ_ULLONG)
        --b;
    if (a == DEVRT_READ_POINTER)
        a = DEVRT_READ_STRING;
    if (b == DEVRT_READ_POINTER)
        b = DEVRT_READ_STRING;
    return a == b;
}

/* Length modifiers, as far as the reading of an argument goes. */
enum devrt_printf_length {
    DEVRT_LENGTH_NONE,
    DEVRT_LENGTH_SHORT,   /* hh h, and wN / wfN of at most 32 bits: an int */
    DEVRT_LENGTH_LONG,    /* l: 64 bits, and wint_t or wchar_t * for c and s */
    DEVRT_LENGTH_WIDE,    /* ll z j t, and w64 wf64: 64 bits */
    DEVRT_LENGTH_WIDE_N,  /* a wN or wfN of 64 bits */
    DEVRT_LENGTH_SHORT_N, /* a wN or wfN of 32 bits or less */
    DEVRT_LENGTH_DOUBLE,  /* L */
    DEVRT_LENGTH_BAD      /* w with a width C does not define */
};

/* The length modifier at *P, moved past it. */
static inline enum devrt_printf_length devrt_printf_length(const char **p, const char *end)
{
    if (*p >= end)
        return DEVRT_LENGTH_NONE;
    switch (*(*p)++) {
    case 'h': *p += *p < end && **p == 'h'; return DEVRT_LENGTH_SHORT;
    case 'l':
        if (*p < end && **p == 'l') {
            ++*p;
            return DEVRT_LENGTH_WIDE;
        }
        return DEVRT_LENGTH_LONG;
    case 'z':
    case 'j':
    case 't': return DEVRT_LENGTH_WIDE;
    case 'L': return DEVRT_LENGTH_DOUBLE;
    case 'w': {
        bool fast = *p < end && **p == 'f';
        *p += fast;
        bool zero = *p < end && **p == '0'; /* "w08" is not w8, as the host reads it */
        int bits = zero ? 0 : devrt_printf_number(p, end);
        while (*p < end && **p >= '0' && **p <= '9')
            ++*p;
        /* The device's own int_fastN_t: va_arg reads what the caller passed. */
        int size = bits == 8    ? 1
                   : bits == 16 ? (fast ? (int)sizeof(int_fast16_t) : 2)
                   : bits == 32 ? (fast ? (int)sizeof(int_fast32_t) : 4)
                   : bits == 64 ? 8
                                : 0;
        return size == 0   ? DEVRT_LENGTH_BAD
               : size == 8 ? DEVRT_LENGTH_WIDE_N
                           : DEVRT_LENGTH_SHORT_N;
    }
    default: --*p; return DEVRT_LENGTH_NONE;
    }
}

/* The read of one conversion's value; NONE where the device cannot type it. */
static inline uint8_t devrt_printf_read_of(enum devrt_output_conversion conversion,
                                           enum devrt_printf_length length)
{
    bool wide =
        length == DEVRT_LENGTH_LONG || length == DEVRT_LENGTH_WIDE || length == DEVRT_LENGTH_WIDE_N;
    switch (conversion) {
    case DEVRT_CONVERSION_SIGNED:
    case DEVRT_CONVERSION_UNSIGNED: {
        if (length == DEVRT_LENGTH_DOUBLE || length == DEVRT_LENGTH_BAD)
            return DEVRT_READ_NONE;
        uint8_t read = wide ? DEVRT_READ_LLONG : DEVRT_READ_INT;
        return conversion == DEVRT_CONVERSION_UNSIGNED ? read + 1 : read;
    }
    case DEVRT_CONVERSION_CHAR:
    case DEVRT_CONVERSION_STRING:
        if (length != DEVRT_LENGTH_NONE && length != DEVRT_LENGTH_LONG)
            return DEVRT_READ_NONE;
        return conversion == DEVRT_CONVERSION_CHAR ? DEVRT_READ_INT : DEVRT_READ_STRING;
    case DEVRT_CONVERSION_POINTER:
        return length == DEVRT_LENGTH_NONE ? DEVRT_READ_POINTER : DEVRT_READ_NONE;
    case DEVRT_CONVERSION_COUNT:
        return length == DEVRT_LENGTH_BAD ? DEVRT_READ_NONE : DEVRT_READ_POINTER;
    case DEVRT_CONVERSION_FLOAT:
        return length == DEVRT_LENGTH_NONE || length == DEVRT_LENGTH_LONG ? DEVRT_READ_DOUBLE
               : length == DEVRT_LENGTH_DOUBLE                            ? DEVRT_READ_LDOUBLE
                                                                          : DEVRT_READ_NONE;
    case DEVRT_CONVERSION_NONE: break;
    }
    return DEVRT_READ_NONE;
}

/*
 * Types the arguments of FORMAT (at most LIMIT bytes) into READS, in the order the call
 * passes them. Returns how many may be read: every one before the first it cannot type.
 */
static inline uint32_t devrt_printf_type_arguments(const char *format, uint32_t limit,
                                                   uint8_t reads[DEVRT_PRINTF_MAX_ARGS])
{
    for (uint32_t i = 0; i < DEVRT_PRINTF_MAX_ARGS; ++i)
        reads[i] = DEVRT_READ_NONE;
    uint32_t count = 0;   /* unnumbered: the arguments typed so far */
    int numbered = -1;    /* whether the format's conversions are %N$; -1: none seen yet */
    bool stopped = false; /* past what the device can type */
    const char *p = format;
    const char *end = format ? format + limit : format;
    while (!stopped && p && p < end && *p) {
        if (*p++ != '%')
            continue;
        if (p < end && *p == '%') {
            ++p;
            continue;
        }
        uint32_t position = devrt_printf_position(&p, end);
        if (numbered < 0)
            numbered = position != 0;
        if ((position != 0) != (numbered != 0))
            break; /* mixed: the host refuses the rest */
        while (p < end && (*p == '-' || *p == '+' || *p == ' ' || *p == '#' || *p == '0'))
            ++p;
        /* The width and the precision: `*` (`*N$` when numbered) is an int argument. */
        uint32_t at[3] = {0, 0, numbered ? position : 1}; /* positions; 1: unnumbered */
        for (int part = 0; part < 2; ++part) {
            if (part == 1) {
                if (p >= end || *p != '.')
                    break;
                ++p;
            }
            if (p < end && *p == '*') {
                ++p;
                uint32_t star = devrt_printf_position(&p, end);
                if ((star != 0) != (numbered != 0))
                    stopped = true; /* mixed within the conversion */
                at[part] = numbered ? star : 1;
            } else {
                devrt_printf_number(&p, end);
            }
        }
        enum devrt_printf_length length = devrt_printf_length(&p, end);
        if (stopped || p >= end || *p == '\0') /* the format ends inside the conversion */
            break;
        uint8_t what[3] = {DEVRT_READ_INT, DEVRT_READ_INT,
                           devrt_printf_read_of(devrt_output_conversion(*p++), length)};
        /* The star arguments come first, then the value. */
        for (int k = 0; k < 3 && !stopped; ++k) {
            if (at[k] == 0)
                continue;
            if (!numbered) {
                stopped = what[k] == DEVRT_READ_NONE || count == DEVRT_PRINTF_MAX_ARGS;
                if (!stopped)
                    reads[count++] = what[k];
            } else if (at[k] <= DEVRT_PRINTF_MAX_ARGS && what[k] != DEVRT_READ_NONE) {
                uint8_t *slot = &reads[at[k] - 1];
                if (*slot == DEVRT_READ_NONE)
                    *slot = what[k];
                else if (!devrt_printf_same_read(*slot, what[k]))
                    *slot = DEVRT_READ_CONFLICT;
                else if (what[k] == DEVRT_READ_STRING)
                    *slot = what[k]; /* a %s of it: its bytes are copied */
            }
        }
    }
    if (numbered != 1)
        return count;
    /* Numbered: the positions from 1 up to the first that nothing, or two things, typed. */
    uint32_t n = 0;
    while (n < DEVRT_PRINTF_MAX_ARGS && reads[n] != DEVRT_READ_NONE &&
           reads[n] != DEVRT_READ_CONFLICT)
        ++n;
    return n;
}

#endif
