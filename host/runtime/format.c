/*
 * The host formatter: parses a printf format itself and hands the C library one validated
 * conversion at a time, with an argument of exactly the type that conversion reads. The
 * device's arguments are 64-bit words tagged with their kind; nothing is guessed.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/output.h>

#include "format.h"

void devrt_text_append(struct devrt_text *text, const char *data, size_t size)
{
    if (text->failed || size == 0)
        return;
    if (text->length + size + 1 > text->capacity) {
        size_t capacity = text->capacity ? text->capacity : 256;
        while (capacity < text->length + size + 1)
            capacity *= 2;
        char *grown = realloc(text->data, capacity);
        if (!grown) {
            text->failed = true;
            return;
        }
        text->data = grown;
        text->capacity = capacity;
    }
    memcpy(text->data + text->length, data, size);
    text->length += size;
    text->data[text->length] = '\0';
}

void devrt_text_free(struct devrt_text *text)
{
    free(text->data);
    *text = (struct devrt_text){0};
}

/* A conversion as the format spells it, with its `*` arguments resolved. */
struct spec {
    const char *start; /* the '%' */
    size_t size;       /* through the conversion character */
    char flags[8];     /* at most one of each of "-+ #0" */
    bool has_width, has_precision;
    bool width_star, precision_star; /* given by an argument */
    int width, precision;
    char length[3]; /* "", "hh", "h", "l", "ll", "z", "j", "t", "L" */
    char conversion;
};

struct formatter {
    struct devrt_text *out;
    const struct devrt_format_arg *args;
    size_t count, next;
    unsigned conversions; /* counted from 1, for the report */
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

/* The next argument, or NULL (reported) when the device sent too few. */
static const struct devrt_format_arg *take(struct formatter *f, const struct spec *s,
                                           const char *what)
{
    if (f->next < f->count)
        return &f->args[f->next++];
    problem(f, s, "no argument for its %s (%zu sent)", what, f->count);
    return NULL;
}

/* A `*` width or precision: an integer argument, as C reads it (an int). */
static bool take_star(struct formatter *f, const struct spec *s, const char *what, int *out)
{
    const struct devrt_format_arg *a = take(f, s, what);
    if (!a)
        return false;
    if (!is_integer(a->tag)) {
        problem(f, s, "its %s is argument %zu, %s, not an integer", what, f->next,
                kind_name(a->tag));
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

static void format_integer(struct formatter *f, const struct spec *s, uint64_t bits)
{
    char cformat[32];
    bool is_signed = s->conversion == 'd' || s->conversion == 'i';
    /* Every 64-bit length (l ll z j t) reads the same bits on an LP64 host. */
    if (length_is(s, "hh") || length_is(s, "h") || length_is(s, "")) {
        c_format(s, "", s->conversion, cformat);
        if (is_signed) {
            int v = length_is(s, "hh")  ? (signed char)bits
                    : length_is(s, "h") ? (short)bits
                                        : (int)(int64_t)bits;
            FORMAT_ONE(f, s, cformat, v);
        } else {
            unsigned v = length_is(s, "hh")  ? (unsigned char)bits
                         : length_is(s, "h") ? (unsigned short)bits
                                             : (unsigned)bits;
            FORMAT_ONE(f, s, cformat, v);
        }
    } else {
        c_format(s, "ll", s->conversion, cformat);
        if (is_signed)
            FORMAT_ONE(f, s, cformat, (long long)bits);
        else
            FORMAT_ONE(f, s, cformat, (unsigned long long)bits);
    }
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
    switch (s->conversion) {
    case 'd':
    case 'i':
    case 'u':
    case 'o':
    case 'x':
    case 'X': return !length_is(s, "L");
    case 'c':
    case 's': return length_is(s, "") || length_is(s, "l");
    case 'p': return length_is(s, "");
    default: /* floating point */ return length_is(s, "") || length_is(s, "l") || length_is(s, "L");
    }
}

static void convert(struct formatter *f, struct spec *s)
{
    f->conversions++;
    if (s->width_star && !take_star(f, s, "width", &s->width)) {
        as_written(f, s);
        return;
    }
    if (s->precision_star && !take_star(f, s, "precision", &s->precision)) {
        as_written(f, s);
        return;
    }
    if (s->conversion == 'n') {
        if (f->next < f->count)
            f->next++;
        as_written(f, s);
        problem(f, s, "%%n is refused: the host does not write device memory");
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
    const struct devrt_format_arg *a = take(f, s, "value");
    if (!a) {
        as_written(f, s);
        return;
    }
    if (!length_fits(s)) {
        as_written(f, s);
        problem(f, s, "the length modifier \"%s\" does not go with %%%c", s->length, s->conversion);
        return;
    }
    size_t index = f->next;
    switch (s->conversion) {
    case 'd':
    case 'i':
    case 'u':
    case 'o':
    case 'x':
    case 'X':
    case 'c':
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
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A': {
        if (a->tag != DEVRT_OUTPUT_F64)
            break;
        double v;
        memcpy(&v, &a->value, sizeof v);
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
    case 's':
        if (a->tag == DEVRT_OUTPUT_STR || (a->tag == DEVRT_OUTPUT_PTR && a->value == 0)) {
            format_string(f, s, a);
            if (a->flags & DEVRT_OUTPUT_TRUNCATED)
                problem(f, s, "argument %zu was cut at %u bytes (too long, or unterminated)", index,
                        DEVRT_PRINTF_MAX_STRING);
            return;
        }
        break;
    case 'p':
        if (a->tag == DEVRT_OUTPUT_PTR || a->tag == DEVRT_OUTPUT_STR) {
            char cformat[32];
            c_format(s, "", 'p', cformat);
            FORMAT_ONE(f, s, cformat, (void *)(uintptr_t)a->value);
            return;
        }
        break;
    }
    as_written(f, s);
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

int devrt_format(struct devrt_text *out, const char *format, size_t length,
                 const struct devrt_format_arg *args, size_t count, char *why, size_t why_size)
{
    struct formatter f = {
        .out = out, .args = args, .count = count, .why = why, .why_size = why_size};
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
        size_t nflags = 0;
        while (i < length && strchr("-+ #0", format[i]) && format[i] != '\0') {
            if (!memchr(s.flags, format[i], nflags) && nflags + 1 < sizeof s.flags)
                s.flags[nflags++] = format[i];
            ++i;
        }
        if (i < length && format[i] == '*') {
            s.has_width = s.width_star = true;
            ++i;
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
            } else {
                s.precision = read_number(format, length, &i);
            }
        }
        static const char *const lengths[] = {"hh", "h", "ll", "l", "z", "j", "t", "L"};
        for (size_t k = 0; k < sizeof lengths / sizeof *lengths; ++k) {
            size_t n = strlen(lengths[k]);
            if (length - i >= n && memcmp(format + i, lengths[k], n) == 0) {
                memcpy(s.length, lengths[k], n + 1);
                i += n;
                break;
            }
        }
        if (i >= length) { /* the format ends inside a conversion */
            s.size = length - start;
            as_written(&f, &s);
            break;
        }
        s.conversion = format[i++];
        s.size = i - start;
        if (s.conversion != '\0' && strchr("diuoxXcspfFeEgGaAn", s.conversion)) {
            convert(&f, &s);
        } else {
            /*
             * An unknown conversion, or `%` with anything between: printed as written. Its
             * `*` arguments are consumed, as devrt_vprintf read them on the device.
             */
            f.next += s.width_star && f.next < f.count;
            f.next += s.precision_star && f.next < f.count;
            as_written(&f, &s);
        }
    }
    return f.problems ? -1 : 0;
}
