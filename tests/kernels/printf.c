/* Kernels of the printf and output tests; built for every backend. */
#include <devrt/devrt.h>

#include "printf_entries.h"

static uint64_t flat_id(void)
{
    return devrt_global_id(DEVRT_X);
}

#define CALL(...)                                                                                  \
    do {                                                                                           \
        if (e->variadic)                                                                           \
            (devrt_printf)(e->format, __VA_ARGS__);                                                \
        else                                                                                       \
            devrt_printf(e->format, __VA_ARGS__);                                                  \
    } while (0)
#define BY_STARS(v)                                                                                \
    do {                                                                                           \
        if (e->stars == 0)                                                                         \
            CALL(v);                                                                               \
        else if (e->stars == 1)                                                                    \
            CALL(e->star[0], v);                                                                   \
        else                                                                                       \
            CALL(e->star[0], e->star[1], v);                                                       \
    } while (0)

/* Entry i: one generated format and its value, by the macro or the variadic function. */
DEVRT_KERNEL2(formats, const struct printf_entry *, entries, uint32_t, count)
{
    uint64_t id = flat_id();
    if (id >= count)
        return;
    const struct printf_entry *e = &entries[id];
    switch (e->kind) {
    case K_INT: BY_STARS((int)e->value.i); break;
    case K_UINT: BY_STARS((unsigned)e->value.u); break;
    case K_LL: BY_STARS((long long)e->value.i); break;
    case K_ULL: BY_STARS((unsigned long long)e->value.u); break;
    case K_DOUBLE: BY_STARS(e->value.d); break;
    case K_LDOUBLE: BY_STARS((long double)e->value.d); break;
    case K_STR: BY_STARS(e->value.s); break;
    case K_PTR: BY_STARS(e->value.p); break;
    default:
        if (e->variadic)
            (devrt_printf)(e->format);
        else
            devrt_printf(e->format);
        break;
    }
}

static uint64_t checksum(uint64_t id)
{
    return (id + 1) * 0x9e3779b97f4a7c15ull;
}

/*
 * Every lane prints one line: its id, a string of its own length (0 to 599 bytes, up to
 * ten packets) and a checksum, so the host can tell a cut or mixed line from a whole one.
 */
DEVRT_KERNEL2(lines, const char *, pattern, uint32_t, count)
{
    uint64_t id = flat_id();
    if (id >= count)
        return;
    uint32_t length = (uint32_t)(id * 7 % 600);
    const char *tail = pattern + 600 - length; /* pattern holds 600 bytes, then a NUL */
    devrt_printf("lane %u [%s] %d %.3f sum %016llx\n", (unsigned)id, tail, -(int)length,
                 (double)id / 8, (unsigned long long)checksum(id));
}

/* Raw output: even lanes puts, odd lanes write and putchar; every line tells its lane. */
DEVRT_KERNEL1(raw_lines, uint32_t, count)
{
    uint64_t id = flat_id();
    if (id >= count)
        return;
    char line[64];
    uint32_t n = 0;
    const char *head = "raw ";
    while (*head)
        line[n++] = *head++;
    char digits[24];
    uint32_t d = 0;
    uint64_t v = id;
    do {
        digits[d++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (d)
        line[n++] = digits[--d];
    if (id % 2 == 0) {
        line[n] = '\0';
        devrt_puts(line);
    } else {
        line[n++] = '\n';
        devrt_output_write(devrt_output_context(), line, n);
    }
    if (id == 0)
        devrt_putchar('!');
}

/* Every lane prints, then the victim raises; the others print again. */
DEVRT_KERNEL1(print_then_raise, uint64_t, victim)
{
    uint64_t id = flat_id();
    devrt_printf("before %u\n", (unsigned)id);
    if (id == victim)
        DEVRT_THROW(DEVRT_EXCEPTION_DOMAIN, "raised after printing");
    devrt_printf("after %u\n", (unsigned)id);
}

/* Formats that do not fit their arguments, one case per launch. */
DEVRT_KERNEL2(bad, uint32_t, which, const char *, unterminated)
{
    int n = 0;
    switch (which) {
    case 0: devrt_printf("a%nb\n", &n); break;
    case 1: devrt_printf("x%yz %d\n", 5); break;
    case 2: devrt_printf("%d %d\n", 1); break;
    case 3: devrt_printf("%s|\n", 42); break;
    case 4: devrt_printf("[%s] [%.3s]\n", (const char *)NULL, (const char *)NULL); break;
    case 5: devrt_printf("<%s>\n", unterminated); break;
    case 6: devrt_printf("100%"); break;
    case 7: devrt_printf("%5000d\n", 1); break;
    case 8: devrt_printf(unterminated); break;
    case 9: devrt_printf("%f %d\n", 1, 2.5); break;
    case 10: devrt_printf("%Ld %hs\n", 1, "s"); break;
    case 11: (devrt_printf)("v%nw %d\n", &n, 7); break;
    }
}

/*
 * The variadic function beside the macro on the same calls, one per launch: formats with a
 * conversion the device cannot type, where the variadic form must read no argument past it
 * (it once read the next one as the string's pointer and faulted).
 */
DEVRT_KERNEL1(variadic, uint32_t, which)
{
    switch (which) {
    case 0: (devrt_printf)("x%yz %s\n", 5, "str"); break;
    case 1: devrt_printf("x%yz %s\n", 5, "str"); break;
    case 2: (devrt_printf)("%5k%s|%d\n", 1.5, "str", 7); break;
    case 3: devrt_printf("%5k%s|%d\n", 1.5, "str", 7); break;
    /* LLVM libc's GPU printf test: C23's %b, then a string. */
    case 4: (devrt_printf)("%032b%s\n", 1, "A simple string\n"); break;
    case 5: devrt_printf("%032b%s\n", 1, "A simple string\n"); break;
    /* The variadic call passes each wN its type; the macro narrows as the host reads them. */
    case 6:
        (devrt_printf)("%#B %w8d %w16u %w32x %w64d %wf8d %wf16d %wf64u|%s\n", 5u, (int8_t)-1,
                       (uint16_t)1, (uint32_t)255, (int64_t)-5, (int_fast8_t)44, (int_fast16_t)-7,
                       (uint_fast64_t)8, "end");
        break;
    case 7:
        devrt_printf("%#B %w8d %w16u %w32x %w64d %wf8d %wf16d %wf64u|%s\n", 5u, -1, 65537, 255u,
                     -5ll, 300, -7, 8ull, "end");
        break;
    /* Numbered arguments, the width and precision among them. */
    case 8: (devrt_printf)("%3$s %1$*2$.*4$f %1$g %2$d\n", 2.5, 8, "x", 3); break;
    case 9: devrt_printf("%3$s %1$*2$.*4$f %1$g %2$d\n", 2.5, 8, "x", 3); break;
    /* Mixed: the formatted part, then every conversion as written. */
    case 10: (devrt_printf)("%1$d %s %2$d\n", 4, "str"); break;
    case 11: devrt_printf("%1$d %s %2$d\n", 4, "str"); break;
    /* Position 2 is typed by nothing: the variadic form reads only position 1. */
    case 12: (devrt_printf)("%1$d %3$s\n", 4, 5, "str"); break;
    case 13: devrt_printf("%1$d %3$s\n", 4, 5, "str"); break;
    /* Position 1 typed twice, differently: nothing is read. */
    case 14: (devrt_printf)("%1$d %1$s\n", "str"); break;
    /* A wN C does not define. */
    case 15: (devrt_printf)("%w7d %s\n", 1, "str"); break;
    case 16: devrt_printf("%w7d %s\n", 1, "str"); break;
    }
}

/*
 * What the calls return (docs/output.md): the printf forms 0 once the message is handed
 * over, not the count of characters the host will print (9 here), even for a format the
 * host then reports, since they do not wait for the host.
 */
DEVRT_KERNEL1(returns, int32_t *, out)
{
    out[0] = devrt_printf("hello %d\n", 42);
    out[1] = (devrt_printf)("hello %d\n", 42);
    out[2] = devrt_printf("%s|\n", 42);
    out[3] = devrt_puts("hi");
    out[4] = devrt_putchar('!');
}

/* Throughput: each lane prints `rounds` lines. */
DEVRT_KERNEL1(many_lines, uint32_t, rounds)
{
    uint64_t id = flat_id();
    for (uint32_t i = 0; i < rounds; ++i)
        devrt_printf("lane %u line %u value %f\n", (unsigned)id, i, (double)i * 0.5);
}

/*
 * Lane 0 waits until the host opens the gate, then prints a line (or, quiet, prints
 * nothing and only counts in done): a kernel that is surely still running when the host
 * detaches from its module (tests/attach).
 */
DEVRT_KERNEL3(after_gate, const uint32_t *, gate, uint32_t, quiet, uint32_t *, done)
{
    if (flat_id() != 0)
        return;
    /* Relaxed, not acquire, which LLVM 19's NVPTX cannot select; nothing is read after the
       gate that the host wrote before opening it. */
    while (!__atomic_load_n(gate, __ATOMIC_RELAXED))
        ;
    if (!quiet)
        devrt_printf("after the gate\n");
    __atomic_fetch_add(done, 1u, __ATOMIC_RELAXED);
}
