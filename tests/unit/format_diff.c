/*
 * libFuzzer target that compares the host formatter with the C library: each input is one
 * conversion (conversion, flags, width and precision literal or `*`, length modifier) and
 * its value, formatted by devrt_format and by snprintf. It keeps to what C defines (no `#`
 * on `d`, no precision on `c`, no length C lacks for the conversion), where docs/output.md
 * promises the C library's output byte for byte; a difference aborts with both outputs.
 *
 * It covers C23's %b and %B and its wN and wfN length modifiers, and POSIX numbered arguments
 * (%N$, *N$): glibc 2.36 has %b and numbered arguments but not wN (2.37 has), so the
 * reference reads a wN conversion with the classic length of the same type (w16: h).
 *
 * Input bytes: conversion, flags, width mode and value, precision mode and value, length,
 * numbering (bit 0: numbered, bit 1: the value first, then the stars), then the value (8
 * bytes) and, for `s`, the string (up to its first NUL, 64 bytes).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <devrt/output.h>

#include "format.h"

enum kind { SIGNED, UNSIGNED, CHAR, STRING, POINTER, FLOAT };

struct conversion {
    char letter;
    enum kind kind;
    const char *flags;   /* the flags C defines for it */
    int precision;       /* whether C defines a precision for it */
    const char *lengths; /* the length modifiers C defines for it, '|'-separated */
};

#define INTEGER_LENGTHS "|hh|h|l|ll|z|j|t|w8|w16|w32|w64|wf8|wf16|wf32|wf64"

static const struct conversion conversions[] = {
    {'d', SIGNED, "-+ 0", 1, INTEGER_LENGTHS},
    {'i', SIGNED, "-+ 0", 1, INTEGER_LENGTHS},
    {'o', UNSIGNED, "-#0", 1, INTEGER_LENGTHS},
    {'u', UNSIGNED, "-0", 1, INTEGER_LENGTHS},
    {'x', UNSIGNED, "-#0", 1, INTEGER_LENGTHS},
    {'X', UNSIGNED, "-#0", 1, INTEGER_LENGTHS},
    {'b', UNSIGNED, "-#0", 1, INTEGER_LENGTHS},
    {'B', UNSIGNED, "-#0", 1, INTEGER_LENGTHS},
    {'c', CHAR, "-", 0, ""},
    {'s', STRING, "-", 1, ""},
    {'p', POINTER, "-", 0, ""},
    {'f', FLOAT, "-+ #0", 1, "|L"},
    {'F', FLOAT, "-+ #0", 1, "|L"},
    {'e', FLOAT, "-+ #0", 1, "|L"},
    {'E', FLOAT, "-+ #0", 1, "|L"},
    {'g', FLOAT, "-+ #0", 1, "|L"},
    {'G', FLOAT, "-+ #0", 1, "|L"},
    {'a', FLOAT, "-+ #0", 1, "|L"},
    {'A', FLOAT, "-+ #0", 1, "|L"},
};

/* The INDEX-th of the '|'-separated LENGTHS (modulo their count), into OUT. */
static void pick_length(const char *lengths, unsigned index, char out[8])
{
    unsigned count = 1;
    for (const char *p = lengths; *p; ++p)
        count += *p == '|';
    index %= count;
    const char *start = lengths;
    while (index--)
        start = strchr(start, '|') + 1;
    size_t n = strcspn(start, "|");
    memcpy(out, start, n);
    out[n] = '\0';
}

/* The classic length modifier of the type C23's wN or wfN names, on this host. */
static const char *classic_length(const char *length)
{
    if (length[0] != 'w')
        return length;
    bool fast = length[1] == 'f';
    int bits = atoi(length + 1 + fast);
    size_t size = bits == 8    ? 1
                  : bits == 16 ? (fast ? sizeof(int_fast16_t) : 2)
                  : bits == 32 ? (fast ? sizeof(int_fast32_t) : 4)
                               : 8;
    return size == 1 ? "hh" : size == 2 ? "h" : size == 4 ? "" : "l";
}

/* The value as C's variadic call must pass it for the conversion and length. */
static int reference(char *buffer, size_t size, const char *format, const int *stars,
                     unsigned star_count, bool value_first, enum kind kind, const char *length,
                     uint64_t value, const char *string)
{
    int a = star_count > 0 ? stars[0] : 0, b = star_count > 1 ? stars[1] : 0;
#define DEVRT_CALL(v)                                                                              \
    (star_count == 2 && value_first   ? snprintf(buffer, size, format, v, a, b)                    \
     : star_count == 2                ? snprintf(buffer, size, format, a, b, v)                    \
     : star_count == 1 && value_first ? snprintf(buffer, size, format, v, a)                       \
     : star_count == 1                ? snprintf(buffer, size, format, a, v)                       \
                                      : snprintf(buffer, size, format, v))
    int64_t s = (int64_t)value;
    double d;
    memcpy(&d, &value, sizeof d);
    switch (kind) {
    case SIGNED:
        if (!strcmp(length, "hh") || !strcmp(length, "h") || !*length)
            return DEVRT_CALL((int)s);
        if (!strcmp(length, "l"))
            return DEVRT_CALL((long)s);
        if (!strcmp(length, "ll"))
            return DEVRT_CALL((long long)s);
        if (!strcmp(length, "z"))
            return DEVRT_CALL((ssize_t)s);
        if (!strcmp(length, "j"))
            return DEVRT_CALL((intmax_t)s);
        return DEVRT_CALL((ptrdiff_t)s);
    case UNSIGNED:
        if (!strcmp(length, "hh") || !strcmp(length, "h") || !*length)
            return DEVRT_CALL((unsigned)value);
        if (!strcmp(length, "l"))
            return DEVRT_CALL((unsigned long)value);
        if (!strcmp(length, "ll"))
            return DEVRT_CALL((unsigned long long)value);
        if (!strcmp(length, "j"))
            return DEVRT_CALL((uintmax_t)value);
        return DEVRT_CALL((size_t)value);
    case CHAR: return DEVRT_CALL((int)(unsigned char)value);
    case STRING: return DEVRT_CALL(string);
    case POINTER: return DEVRT_CALL((void *)(uintptr_t)value);
    case FLOAT:
        if (!strcmp(length, "L"))
            return DEVRT_CALL((long double)d);
        return DEVRT_CALL(d);
    }
#undef DEVRT_CALL
    return -1;
}

/*
 * The conversion the input's first bytes describe, with length modifier LENGTH, into OUT:
 * numbered (%N$, *N$) when NUMBERED, the value's position first when VALUE_FIRST.
 */
static void build(const uint8_t *data, const struct conversion *c, const char *length,
                  bool numbered, bool value_first, unsigned star_count, bool minus, char *out)
{
    char *f = out;
    unsigned star = value_first ? 2 : 1, value = value_first ? 1 : star_count + 1;
    *f++ = '%';
    if (numbered)
        f += sprintf(f, "%u$", value);
    if (minus)
        *f++ = '-';
    for (unsigned i = 0; c->flags[i]; ++i)
        if (data[1] & (1u << i))
            *f++ = c->flags[i];
    for (int part = 0; part < 2; ++part) {
        uint8_t mode = data[2 + 2 * part] % 3, amount = data[3 + 2 * part];
        if (mode == 0 || (part == 1 && !c->precision))
            continue;
        if (part == 1)
            *f++ = '.';
        if (mode == 1)
            f += sprintf(f, "%u", amount % 64u);
        else if (numbered)
            f += sprintf(f, "*%u$", star++);
        else
            *f++ = '*';
    }
    sprintf(f, "%s%c", length, c->letter);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    const struct conversion *c = &conversions[data[0] % (sizeof conversions / sizeof *conversions)];
    bool numbered = data[7] & 1, value_first = numbered && (data[7] & 2);

    int stars[2] = {0, 0};
    unsigned star_count = 0;
    struct devrt_format_arg args[3] = {{0}};
    /* Width and precision: none, a literal up to 63, or `*` with a value from -63 to 63. */
    for (int part = 0; part < 2; ++part) {
        uint8_t mode = data[2 + 2 * part] % 3, amount = data[3 + 2 * part];
        if (mode != 2 || (part == 1 && !c->precision))
            continue;
        stars[star_count] = (int)(amount % 127u) - 63;
        struct devrt_format_arg *a = &args[star_count + value_first];
        a->tag = DEVRT_OUTPUT_I64;
        a->value = (uint64_t)(int64_t)stars[star_count];
        ++star_count;
    }
    char length[8];
    pick_length(c->lengths, data[6], length);
    /*
     * The reference takes a negative `*` width as C defines it, the flag `-` and the width:
     * glibc 2.36 pads "%0*f" and "%1$0*2$f" of a negative width with zeros on the right.
     */
    bool minus = data[2] % 3 == 2 && stars[0] < 0;
    int reference_stars[2] = {minus ? -stars[0] : stars[0], stars[1]};
    char format[64], classic[64];
    build(data, c, length, numbered, value_first, star_count, false, format);
    build(data, c, classic_length(length), numbered, value_first, star_count, minus, classic);

    uint64_t value;
    memcpy(&value, data + 8, sizeof value);
    char string[65];
    size_t string_length = strnlen((const char *)data + 16, size - 16);
    if (string_length > 64)
        string_length = 64;
    memcpy(string, data + 16, string_length);
    string[string_length] = '\0';

    struct devrt_format_arg *a = &args[value_first ? 0 : star_count];
    a->value = value;
    switch (c->kind) {
    case SIGNED:
    case CHAR: a->tag = DEVRT_OUTPUT_I64; break;
    case UNSIGNED: a->tag = DEVRT_OUTPUT_U64; break;
    case FLOAT: a->tag = DEVRT_OUTPUT_F64; break;
    case POINTER: a->tag = DEVRT_OUTPUT_PTR; break;
    case STRING:
        a->tag = DEVRT_OUTPUT_STR;
        a->data = string;
        a->length = (uint32_t)strlen(string);
        break;
    }

    struct devrt_text text = {0};
    char why[256] = "";
    int status = devrt_format(&text, format, strlen(format), args, star_count + 1, why, sizeof why);
    char expected[512];
    int n = reference(expected, sizeof expected, classic, reference_stars, star_count, value_first,
                      c->kind, classic_length(length), value, string);
#ifdef DEVRT_FUZZ_PLANTED_BUG
    /* The control build: a sign the formatter would print wrong, which the check must see. */
    if (text.length > 0 && text.data[0] == '-')
        text.data[0] = '+';
#endif
    if (status != 0 || n < 0 || (size_t)n >= sizeof expected || text.failed ||
        text.length != (size_t)n || (n > 0 && memcmp(text.data, expected, (size_t)n) != 0)) {
        fprintf(stderr,
                "format_diff: \"%s\" with value 0x%016llx: devrt printed \"%.*s\" (status %d%s%s),"
                " snprintf \"%.*s\"\n",
                format, (unsigned long long)value, (int)text.length, text.data ? text.data : "",
                status, *why ? ": " : "", why, n < 0 ? 0 : n, expected);
        abort();
    }
    devrt_text_free(&text);
    return 0;
}
