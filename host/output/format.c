/*
 * The host formatter: parses a printf format itself and hands the C library one validated
 * conversion at a time, with an argument of exactly the type that conversion reads. The
 * device's arguments are 64-bit words tagged with their kind; nothing is guessed.
 */
#include <limits.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/output.h>

#include "format.h"

/* A conversion as the format spells it, with its `*` arguments resolved. */
struct spec {
    const char *start; /* the '%' */
    size_t size;       /* through the conversion character */
    char flags[8];     /* at most one of each of "-+ #0" */
    bool has_width, has_precision;
    bool width_star, precision_star; /* given by an argument */
    int width, precision;
    /* The N of %N$, *N$ and .*N$ (POSIX numbered arguments), counted from 1; 0: none. */
    int position, width_position, precision_position;
    char length[8]; /* "", "hh", "h", "l", "ll", "z", "j", "t", "L", "wN", "wfN" */
    char conversion;
};

struct formatter {
    struct devrt_text *out;
    const struct devrt_format_arg *args;
    size_t count, next;
    int numbered;         /* whether conversions are %N$ ones; -1: none seen yet */
    bool mixed;           /* both kinds were met: the rest prints as written */
    unsigned conversions; /* counted from 1, for the report */
    struct devrt_format_check check;
    bool untyped; /* a conversion devrt_vprintf could not type was met */
    char *why;
    size_t why_size;
    int problems;
};

static void problem(struct formatter *f, const struct spec *s, const char *message, ...)
    __attribute__((format(printf, 3, 4)));

static void problem(struct formatter *f, const struct spec *s, const char *message, ...)
{
    if (f->problems++)
        return;
    int n = snprintf(f->why, f->why_size, "conversion %u \"%.*s\": ", f->conversions,
                     (int)(s->size < 32 ? s->size : 32), s->start);
    if (n < 0 || (size_t)n >= f->why_size)
        return;
    va_list args;
    va_start(args, message);
    vsnprintf(f->why + n, f->why_size - (size_t)n, message, args);
    va_end(args);
}

static void as_written(struct formatter *f, const struct spec *s)
{
    devrt_text_append(f->out, s->start, s->size);
}

static const char *kind_name(uint32_t tag)
{
    switch (tag) {
    case DEVRT_OUTPUT_I64: return "a signed integer";
    case DEVRT_OUTPUT_U64: return "an unsigned integer";
    case DEVRT_OUTPUT_F64: return "a floating-point number";
    case DEVRT_OUTPUT_STR: return "a string";
    case DEVRT_OUTPUT_PTR: return "a pointer";
    default: return "unknown";
    }
}

static bool is_integer(uint32_t tag)
{
    return tag == DEVRT_OUTPUT_I64 || tag == DEVRT_OUTPUT_U64;
}

/*
 * The next argument, or argument POSITION (counted from 1) of a numbered conversion, with
 * its number in *INDEX; NULL (reported) when the device sent too few.
 */
static const struct devrt_format_arg *take(struct formatter *f, const struct spec *s,
                                           const char *what, int position, size_t *index)
{
    if (position > 0) {
        if ((size_t)position <= f->count) {
            *index = (size_t)position;
            return &f->args[position - 1];
        }
        problem(f, s, "no argument %d for its %s (%zu sent)", position, what, f->count);
        return NULL;
    }
    if (f->next < f->count) {
        *index = f->next + 1;
        return &f->args[f->next++];
    }
    problem(f, s, "no argument for its %s (%zu sent)", what, f->count);
    return NULL;
}

/* A `*` width or precision: an integer argument, as C reads it (an int). */
static bool take_star(struct formatter *f, const struct spec *s, const char *what, int position,
                      int *out)
{
    size_t index;
    const struct devrt_format_arg *a = take(f, s, what, position, &index);
    if (!a)
        return false;
    if (!is_integer(a->tag)) {
        f->check.misfits++;
        problem(f, s, "its %s is argument %zu, %s, not an integer", what, index, kind_name(a->tag));
        return false;
    }
    *out = (int)(int64_t)a->value;
    return true;
}

static void emit(struct formatter *f, const char *data, int size)
{
    if (size > 0)
        devrt_text_append(f->out, data, (size_t)size);
}

static void append_repeated(struct devrt_text *out, char c, size_t count)
{
    char chunk[64];
    memset(chunk, c, sizeof chunk);
    for (size_t n; count; count -= n) {
        n = count < sizeof chunk ? count : sizeof chunk;
        devrt_text_append(out, chunk, n);
    }
}

/*
 * Whether the spec's flags are at most "-" and "0" (ZERO: whether "0" may be one). For such
 * a spec, and without a precision where C gives it a meaning, a conversion prints a sign,
 * digits and padding: the common conversions are done here, without the C library, whose
 * snprintf of one conversion costs more than all the rest of a line.
 */
static bool plain_flags(const struct spec *s, bool zero)
{
    for (const char *flag = s->flags; *flag; ++flag)
        if (*flag != '-' && (*flag != '0' || !zero))
            return false;
    return true;
}

static bool has_flag(const struct spec *s, char flag)
{
    return strchr(s->flags, flag) != NULL;
}

/* A minus sign if NEGATIVE and SIZE bytes of DIGITS, padded to the width as C pads them. */
static void emit_padded(struct formatter *f, const struct spec *s, bool negative,
                        const char *digits, size_t size)
{
    bool left = has_flag(s, '-'), zero = has_flag(s, '0');
    int width = s->has_width ? s->width : 0;
    if (width < 0) { /* a negative `*` width is the "-" flag */
        left = true;
        width = -width;
    }
    size_t sign_size = negative;
    size_t pad = (size_t)width > sign_size + size ? (size_t)width - sign_size - size : 0;
    if (!left && !zero)
        append_repeated(f->out, ' ', pad);
    devrt_text_append(f->out, "-", sign_size);
    if (!left && zero)
        append_repeated(f->out, '0', pad);
    devrt_text_append(f->out, digits, size);
    if (left)
        append_repeated(f->out, ' ', pad);
}

/* The digits of VALUE in BASE (8, 10 or 16), written backwards to end at END. */
static char *digits_of(uint64_t value, unsigned base, bool upper, char *end)
{
    const char *set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    switch (base) { /* constant divisors: no division instruction */
    case 2:
        do
            *--end = set[value & 1];
        while (value >>= 1);
        break;
    case 8:
        do
            *--end = set[value & 7];
        while (value >>= 3);
        break;
    case 16:
        do
            *--end = set[value & 15];
        while (value >>= 4);
        break;
    default:
        do
            *--end = set[value % 10];
        while (value /= 10);
    }
    return end;
}

/*
 * Run the C library's snprintf on one conversion: CFORMAT has `*` for the width and `.*`
 * for the precision where the spec has them, and reads exactly VALUE's type.
 */
#define FORMAT_ONE(f, s, cformat, value)                                                           \
    do {                                                                                           \
        char small_[512];                                                                          \
        char *buf_ = small_;                                                                       \
        int n_ = 0;                                                                                \
        for (int pass_ = 0; pass_ < 2; ++pass_) {                                                  \
            size_t size_ = pass_ ? (size_t)n_ + 1 : sizeof small_;                                 \
            if (pass_ && !(buf_ = malloc(size_))) {                                                \
                (f)->out->failed = true;                                                           \
                break;                                                                             \
            }                                                                                      \
            if ((s)->has_width && (s)->has_precision)                                              \
                n_ = snprintf(buf_, size_, cformat, (s)->width, (s)->precision, value);            \
            else if ((s)->has_width)                                                               \
                n_ = snprintf(buf_, size_, cformat, (s)->width, value);                            \
            else if ((s)->has_precision)                                                           \
                n_ = snprintf(buf_, size_, cformat, (s)->precision, value);                        \
            else                                                                                   \
                n_ = snprintf(buf_, size_, cformat, value);                                        \
            if (n_ < 0 || (size_t)n_ < size_) {                                                    \
                emit((f), buf_, n_);                                                               \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
        if (buf_ != small_)                                                                        \
            free(buf_);                                                                            \
    } while (0)

/* The spec with its length modifier replaced by LENGTH, for a value of that C type. */
static void c_format(const struct spec *s, const char *length, char conversion, char *out)
{
    char *p = out;
    *p++ = '%';
    for (const char *q = s->flags; *q; ++q)
        *p++ = *q;
    if (s->has_width)
        *p++ = '*';
    if (s->has_precision) {
        *p++ = '.';
        *p++ = '*';
    }
    for (const char *q = length; *q; ++q)
        *p++ = *q;
    *p++ = conversion;
    *p = '\0';
}

static bool length_is(const struct spec *s, const char *length)
{
    return strcmp(s->length, length) == 0;
}

/*
 * The bits of the integer type an integer conversion's length reads: the C23 wN is intN_t,
 * wfN the host's int_fastN_t (the device sent the value of its own, which fits it); 0 for
 * a length C does not define.
 */
static int length_bits(const struct spec *s)
{
    const char *l = s->length;
    if (l[0] != 'w')
        return length_is(s, "hh") ? 8 : length_is(s, "h") ? 16 : length_is(s, "") ? 32 : 64;
    bool fast = l[1] == 'f';
    const char *n = l + 1 + fast;
    if (!strcmp(n, "8"))
        return fast ? 8 * (int)sizeof(int_fast8_t) : 8;
    if (!strcmp(n, "16"))
        return fast ? 8 * (int)sizeof(int_fast16_t) : 16;
    if (!strcmp(n, "32"))
        return fast ? 8 * (int)sizeof(int_fast32_t) : 32;
    if (!strcmp(n, "64"))
        return 64;
    return 0;
}

static void format_integer(struct formatter *f, const struct spec *s, uint64_t bits)
{
    bool is_signed = s->conversion == 'd' || s->conversion == 'i';
    /* Every 64-bit length (l ll z j t w64) reads the same bits on an LP64 host. */
    int size = length_bits(s);
    bool wide = size == 64;
    int64_t signed_value = size == 8    ? (signed char)bits
                           : size == 16 ? (short)bits
                           : wide       ? (int64_t)bits
                                        : (int)(int64_t)bits;
    uint64_t unsigned_value = size == 8    ? (unsigned char)bits
                              : size == 16 ? (unsigned short)bits
                              : wide       ? bits
                                           : (unsigned)bits;
    if (!s->has_precision && plain_flags(s, true)) {
        bool negative = is_signed && signed_value < 0;
        uint64_t magnitude = !is_signed ? unsigned_value
                             : negative ? -(uint64_t)signed_value
                                        : (uint64_t)signed_value;
        unsigned base = s->conversion == 'o'                           ? 8
                        : s->conversion == 'x' || s->conversion == 'X' ? 16
                        : s->conversion == 'b' || s->conversion == 'B' ? 2
                                                                       : 10;
        char buffer[72];
        char *end = buffer + sizeof buffer;
        char *digits = digits_of(magnitude, base, s->conversion == 'X', end);
        emit_padded(f, s, negative, digits, (size_t)(end - digits));
        return;
    }
    char cformat[32];
    c_format(s, wide ? "ll" : "", s->conversion, cformat);
    if (is_signed && wide)
        FORMAT_ONE(f, s, cformat, (long long)signed_value);
    else if (is_signed)
        FORMAT_ONE(f, s, cformat, (int)signed_value);
    else if (wide)
        FORMAT_ONE(f, s, cformat, (unsigned long long)unsigned_value);
    else
        FORMAT_ONE(f, s, cformat, (unsigned)unsigned_value);
}

/*
 * %f of a finite double with at most 9 decimals, as the C library prints it: the value is
 * m * 2^e, so value * 10^precision is m * 10^precision (under 2^83) shifted by e, rounded
 * to nearest with ties to even, as printf rounds in the default rounding mode, which the
 * server thread never changes. False when the value does not fit (too large, not finite).
 */
static bool format_fixed(struct formatter *f, const struct spec *s, double value)
{
    static const uint64_t power_of_ten[] = {1,      10,      100,      1000,      10000,
                                            100000, 1000000, 10000000, 100000000, 1000000000};
    int precision = s->has_precision ? s->precision : 6;
    if (precision > 9 || !plain_flags(s, true))
        return false;
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    int biased = (int)(bits >> 52 & 0x7ff);
    uint64_t mantissa = bits & ((1ull << 52) - 1);
    if (biased == 0x7ff)
        return false;
    if (biased)
        mantissa |= 1ull << 52;
    int exponent = biased ? biased - 1075 : -1074;
    unsigned __int128 scaled = (unsigned __int128)mantissa * power_of_ten[precision];
    if (exponent > 11)
        return false;
    if (exponent >= 0) {
        scaled <<= exponent;
    } else if (exponent < -127) {
        scaled = 0; /* under 2^83 / 2^128: rounds to 0 */
    } else {
        unsigned shift = (unsigned)-exponent;
        unsigned __int128 rest = scaled & (((unsigned __int128)1 << shift) - 1);
        unsigned __int128 half = (unsigned __int128)1 << (shift - 1);
        scaled >>= shift;
        if (rest > half || (rest == half && (scaled & 1)))
            scaled++;
    }
    if (scaled >> 64)
        return false;
    uint64_t whole = (uint64_t)scaled / power_of_ten[precision];
    uint64_t fraction = (uint64_t)scaled % power_of_ten[precision];
    char buffer[40];
    char *end = buffer + sizeof buffer, *digits = end;
    if (precision) {
        char *last = digits;
        digits = digits_of(fraction, 10, false, digits);
        while (digits > last - precision)
            *--digits = '0';
        *--digits = '.';
    }
    digits = digits_of(whole, 10, false, digits);
    emit_padded(f, s, bits >> 63, digits, (size_t)(end - digits));
    return true;
}

static void format_string(struct formatter *f, const struct spec *s,
                          const struct devrt_format_arg *a)
{
    const char *data = a->data;
    int size = (int)a->length;
    if (a->tag == DEVRT_OUTPUT_PTR || (a->flags & DEVRT_OUTPUT_NULL) || !data) {
        data = "(null)";
        size = 6;
    }
    if (plain_flags(s, false)) {
        size_t n = s->has_precision && s->precision < size ? (size_t)s->precision : (size_t)size;
        const char *nul = memchr(data, '\0', n); /* where snprintf would stop */
        emit_padded(f, s, false, data, nul ? (size_t)(nul - data) : n);
        return;
    }
    /* The bytes are not NUL-terminated: a precision bounds what snprintf reads. */
    struct spec bounded = *s;
    if (!bounded.has_precision || bounded.precision < 0 || bounded.precision > size)
        bounded.precision = size;
    bounded.has_precision = true;
    char cformat[32];
    c_format(&bounded, "", 's', cformat);
    FORMAT_ONE(f, &bounded, cformat, data);
}

/* Which length modifiers C defines for each conversion. */
static bool length_fits(const struct spec *s)
{
    if (s->length[0] == 'w') /* C23: integers only */
        return length_bits(s) != 0 &&
               (devrt_output_conversion(s->conversion) == DEVRT_CONVERSION_SIGNED ||
                devrt_output_conversion(s->conversion) == DEVRT_CONVERSION_UNSIGNED);
    switch (devrt_output_conversion(s->conversion)) {
    case DEVRT_CONVERSION_SIGNED:
    case DEVRT_CONVERSION_UNSIGNED: return !length_is(s, "L");
    case DEVRT_CONVERSION_CHAR:
    case DEVRT_CONVERSION_STRING: return length_is(s, "") || length_is(s, "l");
    case DEVRT_CONVERSION_POINTER: return length_is(s, "");
    default: /* floating point */ return length_is(s, "") || length_is(s, "l") || length_is(s, "L");
    }
}

/*
 * Whether the spec keeps to the format's kind: numbered (%N$, with *N$ stars) or not.
 * POSIX leaves a mix undefined: from the first spec of the other kind on, every one is
 * printed as written and takes no argument, and the first is reported.
 */
/* Past here devrt_vprintf reads no unnumbered argument (device/printf_types.h). */
static void untyped(struct formatter *f)
{
    if (!f->untyped)
        f->check.typed = f->next;
    f->untyped = true;
}

static bool one_kind(struct formatter *f, const struct spec *s)
{
    if (f->mixed)
        return false;
    bool numbered = s->position > 0;
    if (f->numbered < 0)
        f->numbered = numbered;
    bool stars_fit = (!s->width_star || (s->width_position > 0) == numbered) &&
                     (!s->precision_star || (s->precision_position > 0) == numbered);
    if (numbered == (f->numbered == 1) && stars_fit)
        return true;
    f->mixed = true;
    untyped(f);
    problem(f, s, "the format mixes numbered (%%N$) and unnumbered conversions");
    return false;
}

static void convert(struct formatter *f, struct spec *s)
{
    f->conversions++;
    if (!one_kind(f, s)) {
        as_written(f, s);
        return;
    }
    /*
     * The stars and the value are taken whatever is wrong with the conversion, so that the
     * conversions after it read the arguments meant for them (devrt_vprintf reads them so).
     */
    bool stars = !s->width_star || take_star(f, s, "width", s->width_position, &s->width);
    if (s->precision_star && !take_star(f, s, "precision", s->precision_position, &s->precision))
        stars = false;
    if (s->conversion == 'n') {
        if (!s->position && f->next < f->count)
            f->next++;
        as_written(f, s);
        problem(f, s, "%%n is refused: the host does not write device memory");
        return;
    }
    /* A misfit length is reported before a missing argument: it says more. */
    bool fits = length_fits(s);
    if (!fits)
        untyped(f);
    if (stars && !fits && s->length[0] == 'w' && !length_bits(s))
        problem(f, s, "\"%s\" is not a length C defines (w8 w16 w32 w64, wf8 wf16 wf32 wf64)",
                s->length);
    else if (stars && !fits)
        problem(f, s, "the length modifier \"%s\" does not go with %%%c", s->length, s->conversion);
    size_t index;
    const struct devrt_format_arg *a = take(f, s, "value", s->position, &index);
    if (!stars || !a || !fits) {
        as_written(f, s);
        return;
    }
    if (s->has_precision && s->precision < 0) /* C: a negative precision is none */
        s->has_precision = false;
    if (s->has_width && (s->width > DEVRT_FORMAT_MAX_WIDTH || s->width < -DEVRT_FORMAT_MAX_WIDTH)) {
        as_written(f, s);
        problem(f, s, "width %d is over the limit of %d", s->width, DEVRT_FORMAT_MAX_WIDTH);
        return;
    }
    if (s->has_precision && s->precision > DEVRT_FORMAT_MAX_WIDTH) {
        as_written(f, s);
        problem(f, s, "precision %d is over the limit of %d", s->precision, DEVRT_FORMAT_MAX_WIDTH);
        return;
    }
    switch (devrt_output_conversion(s->conversion)) {
    case DEVRT_CONVERSION_SIGNED:
    case DEVRT_CONVERSION_UNSIGNED:
    case DEVRT_CONVERSION_CHAR:
        if (!is_integer(a->tag))
            break;
        if (s->conversion == 'c') {
            char cformat[32];
            c_format(s, "", 'c', cformat);
            FORMAT_ONE(f, s, cformat, (int)(unsigned char)a->value);
        } else {
            format_integer(f, s, a->value);
        }
        return;
    case DEVRT_CONVERSION_FLOAT: {
        if (a->tag != DEVRT_OUTPUT_F64)
            break;
        double v;
        memcpy(&v, &a->value, sizeof v);
        if ((s->conversion == 'f' || s->conversion == 'F') && !length_is(s, "L") &&
            format_fixed(f, s, v))
            return;
        char cformat[32];
        if (length_is(s, "L")) {
            c_format(s, "L", s->conversion, cformat);
            FORMAT_ONE(f, s, cformat, (long double)v);
        } else {
            c_format(s, "", s->conversion, cformat);
            FORMAT_ONE(f, s, cformat, v);
        }
        return;
    }
    case DEVRT_CONVERSION_STRING:
        if (a->tag == DEVRT_OUTPUT_STR || (a->tag == DEVRT_OUTPUT_PTR && a->value == 0)) {
            format_string(f, s, a);
            if (a->flags & DEVRT_OUTPUT_TRUNCATED)
                problem(f, s, "argument %zu was cut at %u bytes (too long, or unterminated)", index,
                        DEVRT_PRINTF_MAX_STRING);
            return;
        }
        break;
    case DEVRT_CONVERSION_POINTER:
        if (a->tag == DEVRT_OUTPUT_PTR || a->tag == DEVRT_OUTPUT_STR) {
            char cformat[32];
            c_format(s, "", 'p', cformat);
            FORMAT_ONE(f, s, cformat, (void *)(uintptr_t)a->value);
            return;
        }
        break;
    case DEVRT_CONVERSION_COUNT: /* refused above */
    case DEVRT_CONVERSION_NONE: break;
    }
    as_written(f, s);
    f->check.misfits++;
    problem(f, s, "argument %zu is %s", index, kind_name(a->tag));
}

/* Reads a run of digits; a number too large for an int reads as INT_MAX. */
static int read_number(const char *format, size_t length, size_t *i)
{
    long long value = 0;
    while (*i < length && format[*i] >= '0' && format[*i] <= '9') {
        if (value <= INT_MAX)
            value = value * 10 + (format[*i] - '0');
        ++*i;
    }
    return value > INT_MAX ? INT_MAX : (int)value;
}

/* An `N$` at *I (N from 1), past it; 0 with *I unmoved when there is none. */
static int read_position(const char *format, size_t length, size_t *i)
{
    size_t j = *i;
    if (j >= length || format[j] < '1' || format[j] > '9')
        return 0;
    int n = read_number(format, length, &j);
    if (j >= length || format[j] != '$')
        return 0;
    *i = j + 1;
    return n;
}

static bool is_flag(char c)
{
    return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0';
}

/*
 * The length modifier at I (hh h ll l z j t L, C23's wN and wfN with any digits, checked
 * later) into OUT, which holds 8 bytes; returns the bytes it takes.
 */
static size_t read_length(const char *format, size_t length, size_t i, char *out)
{
    if (i >= length)
        return 0;
    char c = format[i];
    switch (c) {
    case 'w': {
        size_t n = 1 + (i + 1 < length && format[i + 1] == 'f');
        while (i + n < length && format[i + n] >= '0' && format[i + n] <= '9')
            ++n;
        /* A number too long for OUT is no length C defines: kept as "w?", refused. */
        size_t kept = n < 7 ? n : 1;
        memcpy(out, format + i, kept);
        out[kept] = kept < n ? '?' : '\0';
        out[kept + (kept < n)] = '\0';
        return n;
    }
    case 'h':
    case 'l':
        if (i + 1 < length && format[i + 1] == c) {
            out[0] = out[1] = c;
            out[2] = '\0';
            return 2;
        }
        /* fall through */
    case 'z':
    case 'j':
    case 't':
    case 'L':
        out[0] = c;
        out[1] = '\0';
        return 1;
    default: return 0;
    }
}

int devrt_format(struct devrt_text *out, const char *format, size_t length,
                 const struct devrt_format_arg *args, size_t count, char *why, size_t why_size)
{
    return devrt_format_checked(out, format, length, args, count, why, why_size, NULL);
}

int devrt_format_checked(struct devrt_text *out, const char *format, size_t length,
                         const struct devrt_format_arg *args, size_t count, char *why,
                         size_t why_size, struct devrt_format_check *check)
{
    struct formatter f = {
        .out = out, .args = args, .count = count, .numbered = -1, .why = why, .why_size = why_size};
    if (why_size)
        why[0] = '\0';
    size_t i = 0;
    while (i < length) {
        const char *percent = memchr(format + i, '%', length - i);
        size_t literal = percent ? (size_t)(percent - (format + i)) : length - i;
        devrt_text_append(out, format + i, literal);
        i += literal;
        if (i >= length)
            break;
        struct spec s = {.start = format + i};
        size_t start = i++;
        if (i < length && format[i] == '%') {
            devrt_text_append(out, "%", 1);
            ++i;
            continue;
        }
        s.position = read_position(format, length, &i);
        size_t nflags = 0;
        while (i < length && is_flag(format[i])) {
            if (!memchr(s.flags, format[i], nflags) && nflags + 1 < sizeof s.flags)
                s.flags[nflags++] = format[i];
            ++i;
        }
        if (i < length && format[i] == '*') {
            s.has_width = s.width_star = true;
            ++i;
            s.width_position = read_position(format, length, &i);
        } else if (i < length && format[i] >= '1' && format[i] <= '9') {
            s.has_width = true;
            s.width = read_number(format, length, &i);
        }
        if (i < length && format[i] == '.') {
            s.has_precision = true;
            ++i;
            if (i < length && format[i] == '*') {
                s.precision_star = true;
                ++i;
                s.precision_position = read_position(format, length, &i);
            } else {
                s.precision = read_number(format, length, &i);
            }
        }
        i += read_length(format, length, i, s.length);
        if (i >= length) { /* the format ends inside a conversion */
            s.size = length - start;
            as_written(&f, &s);
            break;
        }
        s.conversion = format[i++];
        s.size = i - start;
        if (devrt_output_conversion(s.conversion) != DEVRT_CONVERSION_NONE) {
            convert(&f, &s);
        } else {
            /*
             * An unknown conversion, or `%` with anything between: printed as written. Its
             * unnumbered `*` arguments are consumed, as devrt_vprintf read them on the device.
             */
            if (one_kind(&f, &s)) {
                f.next += s.width_star && !s.width_position && f.next < f.count;
                f.next += s.precision_star && !s.precision_position && f.next < f.count;
            }
            untyped(&f);
            as_written(&f, &s);
        }
    }
    if (!f.untyped)
        f.check.typed = f.next;
    f.check.numbered = f.numbered == 1;
    if (check)
        *check = f.check;
    return f.problems ? -1 : 0;
}
