/*
 * Runs the kernels of tests/kernels/printf.c and checks their output exactly. One test
 * per invocation: printf_test IMAGE TEST [emu|hsa|cuda]. Exits 0 when the test holds, 1 when it
 * does not, 77 (skipped) when the backend has no device.
 *
 *   formats     generated formats and values, each compared with the C library's snprintf
 *   lines       thousands of lanes at once: every line whole, once, never mixed
 *   raw         devrt_puts / devrt_output_write / devrt_putchar, and the stream they report
 *   exception   what the kernel printed reaches the file before the exception report
 *   bad         formats that do not fit their arguments: the documented output and report
 *   variadic    the variadic function on formats it cannot type whole, beside the macro
 *   returns     what the calls return: 0, not a character count
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/host.h>

#include "harness.h"

#include "printf_entries.h"

static devrt_device *device;
static devrt_module *module;

/* Every unit the module printed, in arrival order. */
struct capture {
    pthread_mutex_t lock;
    size_t count, capacity;
    char **units;
    uint32_t *streams;
};

static struct capture captured = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_output(void *context, uint32_t stream, const char *data, size_t size)
{
    struct capture *c = context;
    pthread_mutex_lock(&c->lock);
    if (c->count == c->capacity) {
        c->capacity = c->capacity ? 2 * c->capacity : 1024;
        c->units = realloc(c->units, c->capacity * sizeof *c->units);
        c->streams = realloc(c->streams, c->capacity * sizeof *c->streams);
    }
    char *unit = malloc(size + 1);
    memcpy(unit, data, size);
    unit[size] = '\0';
    c->units[c->count] = unit;
    c->streams[c->count++] = stream;
    pthread_mutex_unlock(&c->lock);
}

static void reset_capture(void)
{
    for (size_t i = 0; i < captured.count; ++i)
        free(captured.units[i]);
    captured.count = 0;
}

static struct devrt_launch_config grid_for(uint32_t lanes)
{
    uint32_t block = lanes < 64 ? lanes : 64;
    return (struct devrt_launch_config){.grid = {(lanes + block - 1) / block, 1, 1},
                                        .block = {block, 1, 1}};
}

/* A small deterministic generator, so a failure can be reproduced. */
static uint64_t rng_state = 0x853c49e6748fea9bull;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33) % n;
}

static const char *pick(const char *const *choices, size_t n)
{
    return choices[rnd((uint32_t)n)];
}
#define PICK(a) pick(a, sizeof a / sizeof *a)

/* The expected text, from the C library, with the very types the kernel passes. */
static int expected(char *out, size_t size, const struct printf_entry *e)
{
#define EXPECT(v)                                                                                  \
    (e->stars == 0   ? snprintf(out, size, e->format, v)                                           \
     : e->stars == 1 ? snprintf(out, size, e->format, e->star[0], v)                               \
                     : snprintf(out, size, e->format, e->star[0], e->star[1], v))
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
    switch (e->kind) {
    case K_INT: return EXPECT((int)e->value.i);
    case K_UINT: return EXPECT((unsigned)e->value.u);
    case K_LL: return EXPECT((long long)e->value.i);
    case K_ULL: return EXPECT((unsigned long long)e->value.u);
    case K_DOUBLE: return EXPECT(e->value.d);
    case K_LDOUBLE: return EXPECT((long double)e->value.d);
    case K_STR: return EXPECT(e->value.s);
    case K_PTR: return EXPECT(e->value.p);
    default: return snprintf(out, size, e->format, 0);
    }
#pragma GCC diagnostic pop
#undef EXPECT
}

/* One random conversion with flags, width and precision that C defines for it. */
static void generate(struct printf_entry *e, char *format, size_t size, uint32_t id,
                     const char *const *strings, size_t nstrings)
{
    static const char conversions[] = "diouxXbBcsfFeEgGaAp%";
    char conversion = conversions[rnd(sizeof conversions - 1)];
    bool is_int = strchr("diouxXbB", conversion), is_float = strchr("fFeEgGaA", conversion);
    bool is_signed = strchr("di", conversion) || is_float;
    char flags[8] = "";
    size_t nf = 0;
    if (rnd(2))
        flags[nf++] = '-';
    if (is_signed && rnd(3) == 0)
        flags[nf++] = rnd(2) ? '+' : ' ';
    if ((strchr("oxXbB", conversion) || is_float) && rnd(3) == 0)
        flags[nf++] = '#';
    if ((is_int || is_float) && rnd(3) == 0)
        flags[nf++] = '0';
    char width[16] = "", precision[16] = "";
    e->stars = 0;
    uint32_t w = rnd(4);
    if (w == 1)
        snprintf(width, sizeof width, "%u", 1 + rnd(24));
    else if (w == 2) {
        strcpy(width, "*");
        e->star[e->stars++] = (int32_t)rnd(41) - 20;
    }
    if (conversion != 'c' && conversion != 'p' && conversion != '%') {
        uint32_t p = rnd(5);
        if (p == 1)
            snprintf(precision, sizeof precision, ".%u", rnd(15));
        else if (p == 2)
            strcpy(precision, ".");
        else if (p == 3) {
            strcpy(precision, ".*");
            e->star[e->stars++] = (int32_t)rnd(18) - 3;
        }
    }
    const char *length = "";
    static const char *const int_lengths[] = {"", "", "hh", "h", "l", "ll", "z", "j", "t"};
    static const char *const float_lengths[] = {"", "", "l", "L"};
    if (is_int)
        length = PICK(int_lengths);
    else if (is_float)
        length = PICK(float_lengths);
    static const int64_t ints[] = {0,
                                   1,
                                   -1,
                                   7,
                                   -42,
                                   127,
                                   128,
                                   255,
                                   256,
                                   -129,
                                   32767,
                                   -32768,
                                   65535,
                                   2147483647,
                                   -2147483647 - 1,
                                   4294967295ll,
                                   4294967296ll,
                                   INT64_MAX,
                                   INT64_MIN,
                                   0x123456789abcdefll};
    static const double doubles[] = {0.0,      -0.0,   1.0,   -1.5,     0.1,
                                     123.456,  1e-300, 1e300, 4.9e-324, 2.5e-5,
                                     9.999999, 0.5,    1e21,  -1e-7,    3.14159265358979};
    if (conversion == '%') {
        e->kind = K_NONE;
        e->stars = 0;
        snprintf(format, size, "%u|%%|\n", id);
    } else {
        snprintf(format, size, "%u|%%%s%s%s%s%c|\n", id, flags, width, precision, length,
                 conversion);
    }
    e->format = format;
    if (is_int) {
        bool wide = length[0] == 'l' || strchr("zjt", length[0] ? length[0] : ' ');
        bool sign = strchr("di", conversion);
        e->kind = wide ? (sign ? K_LL : K_ULL) : (sign ? K_INT : K_UINT);
        e->value.i = ints[rnd(sizeof ints / sizeof *ints)] ^ (rnd(4) ? 0 : (int64_t)rnd(1u << 30));
    } else if (is_float) {
        e->kind = length[0] == 'L' ? K_LDOUBLE : K_DOUBLE;
        uint32_t r = rnd(20);
        e->value.d = r < 15    ? doubles[r] * (rnd(2) ? 1 : -1)
                     : r == 15 ? INFINITY
                     : r == 16 ? -INFINITY
                     : r == 17 ? NAN
                               : (double)rnd(1000000) / 997.0;
    } else if (conversion == 'c') {
        e->kind = K_INT;
        e->value.i = 33 + rnd(94);
    } else if (conversion == 's') {
        e->kind = K_STR;
        e->value.s = strings[rnd((uint32_t)nstrings)];
    } else if (conversion == 'p') {
        e->kind = K_PTR;
        e->value.p = rnd(5) ? (const void *)(uintptr_t)(0x1000u + rnd(1u << 30) * 16u) : NULL;
    }
    e->variadic = id % 2;
}

static uint32_t parse_id(const char *unit)
{
    return (uint32_t)strtoul(unit, NULL, 10);
}

static void test_formats(uint32_t count)
{
    static const char *const pool[] = {"",
                                       "a",
                                       "hello",
                                       "hello, world",
                                       "with %d inside",
                                       "tabs\tand\nnewlines",
                                       "0123456789abcdefghijklmnopqrstuvwxyz"
                                       "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"};
    size_t nstrings = sizeof pool / sizeof *pool;
    /* Everything the kernel reads lives in memory the device can see. */
    char **strings = malloc(nstrings * sizeof *strings);
    for (size_t i = 0; i < nstrings; ++i) {
        strings[i] = devrt_mem_alloc(device, strlen(pool[i]) + 1);
        strcpy(strings[i], pool[i]);
    }
    struct printf_entry *entries = devrt_mem_alloc(device, count * sizeof *entries);
    char *formats = devrt_mem_alloc(device, (size_t)count * 64);
    char **want = calloc(count, sizeof *want);
    for (uint32_t i = 0; i < count; ++i) {
        generate(&entries[i], formats + (size_t)i * 64, 64, i, (const char *const *)strings,
                 nstrings);
        int n = expected(NULL, 0, &entries[i]);
        want[i] = malloc((size_t)n + 1);
        expected(want[i], (size_t)n + 1, &entries[i]);
    }
    reset_capture();
    struct devrt_arg args[] = {DEVRT_ARG_PTR(entries), DEVRT_ARG_UINT(count)};
    struct devrt_launch_config config = grid_for(count);
    int status = devrt_launch(module, "formats", &config, args, 2, NULL);
    CHECK(status == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(captured.count == count, "%zu units for %u entries", captured.count, count);
    uint8_t *seen = calloc(count, 1);
    uint32_t wrong = 0;
    for (size_t i = 0; i < captured.count; ++i) {
        uint32_t id = parse_id(captured.units[i]);
        if (id >= count || seen[id]++) {
            CHECK(0, "unit '%s' has no entry or came twice", captured.units[i]);
            continue;
        }
        if (strcmp(captured.units[i], want[id]) != 0 && wrong++ < 20)
            fprintf(stderr, "entry %u (%s, kind %u, stars %u [%d %d]): got '%s', snprintf '%s'\n",
                    id, entries[id].variadic ? "variadic" : "macro", entries[id].kind,
                    entries[id].stars, entries[id].star[0], entries[id].star[1], captured.units[i],
                    want[id]);
    }
    CHECK(wrong == 0, "%u of %u conversions differ from snprintf", wrong, count);
    printf("%u generated conversions, %u differ from snprintf\n", count, wrong);
    for (uint32_t i = 0; i < count; ++i)
        free(want[i]);
    free(want);
    free(seen);
    for (size_t i = 0; i < nstrings; ++i)
        devrt_mem_free(device, strings[i]);
    free(strings);
    devrt_mem_free(device, entries);
    devrt_mem_free(device, formats);
}

static uint64_t checksum(uint64_t id)
{
    return (id + 1) * 0x9e3779b97f4a7c15ull;
}

static void test_lines(uint32_t count)
{
    char *pattern = devrt_mem_alloc(device, 601);
    for (int i = 0; i < 600; ++i)
        pattern[i] = (char)('a' + i % 26);
    pattern[600] = '\0';
    reset_capture();
    struct devrt_arg args[] = {DEVRT_ARG_PTR(pattern), DEVRT_ARG_UINT(count)};
    struct devrt_launch_config config = grid_for(count);
    int status = devrt_launch(module, "lines", &config, args, 2, NULL);
    CHECK(status == DEVRT_SUCCESS, "%s", devrt_last_error());
    uint8_t *seen = calloc(count, 1);
    uint32_t bad = 0;
    for (size_t i = 0; i < captured.count; ++i) {
        const char *unit = captured.units[i];
        unsigned id = 0;
        if (sscanf(unit, "lane %u", &id) != 1 || id >= count || seen[id]++) {
            if (bad++ < 10)
                fprintf(stderr, "unit %zu unknown or repeated: '%.80s'\n", i, unit);
            continue;
        }
        uint32_t length = (uint32_t)(id * 7 % 600);
        char want[1024];
        snprintf(want, sizeof want, "lane %u [%s] %d %.3f sum %016llx\n", id,
                 pattern + 600 - length, -(int)length, (double)id / 8,
                 (unsigned long long)checksum(id));
        if (strcmp(unit, want) != 0 || captured.streams[i] != DEVRT_OUTPUT_PRINTF) {
            if (bad++ < 10)
                fprintf(stderr, "lane %u: got '%.100s'\n", id, unit);
        }
    }
    uint32_t missing = 0;
    for (uint32_t i = 0; i < count; ++i)
        missing += !seen[i];
    CHECK(bad == 0 && missing == 0 && captured.count == count,
          "%u lines wrong, %u missing, %zu units for %u lanes", bad, missing, captured.count,
          count);
    printf("%u lanes, %zu lines, all whole and once\n", count, captured.count);
    free(seen);
    devrt_mem_free(device, pattern);
}

static void test_raw(uint32_t count)
{
    reset_capture();
    struct devrt_arg args[] = {DEVRT_ARG_UINT(count)};
    struct devrt_launch_config config = grid_for(count);
    CHECK(devrt_launch(module, "raw_lines", &config, args, 1, NULL) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    uint8_t *seen = calloc(count, 1);
    uint32_t bad = 0, bangs = 0;
    for (size_t i = 0; i < captured.count; ++i) {
        const char *unit = captured.units[i];
        unsigned id = 0;
        char want[64];
        CHECK(captured.streams[i] == DEVRT_OUTPUT_RAW, "stream %u", captured.streams[i]);
        if (!strcmp(unit, "!")) {
            bangs++;
            continue;
        }
        if (sscanf(unit, "raw %u", &id) != 1 || id >= count || seen[id]++) {
            bad++;
            continue;
        }
        snprintf(want, sizeof want, "raw %u\n", id);
        bad += strcmp(unit, want) != 0;
    }
    uint32_t missing = 0;
    for (uint32_t i = 0; i < count; ++i)
        missing += !seen[i];
    CHECK(bad == 0 && missing == 0 && bangs == 1, "%u wrong, %u missing, %u putchar units", bad,
          missing, bangs);
    free(seen);
}

static void test_exception(void)
{
    FILE *file = tmpfile();
    devrt_module_set_output_file(module, file);
    devrt_module_set_report_file(module, file);
    const uint32_t lanes = 512;
    struct devrt_arg args[] = {DEVRT_ARG_U64(300)};
    struct devrt_launch_config config = grid_for(lanes);
    int status = devrt_launch(module, "print_then_raise", &config, args, 1, NULL);
    CHECK(status == DEVRT_ERROR_EXCEPTION, "status %d", status);
    rewind(file);
    char line[512];
    uint32_t before = 0, after = 0, reports = 0, out_of_order = 0;
    while (fgets(line, sizeof line, file)) {
        if (!strncmp(line, "before ", 7))
            before++, out_of_order += reports != 0;
        else if (!strncmp(line, "after ", 6))
            after++, out_of_order += reports != 0;
        else if (strstr(line, "kernel print_then_raise raised a domain error") &&
                 strstr(line, "raised after printing"))
            reports++;
        else
            CHECK(0, "unexpected line '%s'", line);
    }
    CHECK(before == lanes && after == lanes - 1 && reports == 1 && out_of_order == 0,
          "%u before, %u after, %u reports, %u lines after the report", before, after, reports,
          out_of_order);
    fclose(file);
    devrt_module_set_output_callback(module, on_output, &captured);
}

/*
 * One case of KERNEL (which, unterminated): the exact output, and the report (NULL: the
 * launch succeeds).
 */
static void kernel_case(const char *kernel, uint32_t which, const char *output,
                        const char *report_part, const char *unterminated)
{
    reset_capture();
    struct devrt_launch_report report;
    struct devrt_arg args[] = {DEVRT_ARG_UINT(which), DEVRT_ARG_PTR(unterminated)};
    struct devrt_launch_config config = grid_for(1);
    devrt_module_set_report_file(module, NULL);
    int status = devrt_launch(module, kernel, &config, args, unterminated ? 2 : 1, &report);
    const char *got = captured.count == 1 ? captured.units[0] : "(no unit)";
    CHECK(captured.count == 1 && strcmp(got, output) == 0,
          "case %u: output '%.60s', expected '%.60s'", which, got, output);
    if (report_part) {
        CHECK(status == DEVRT_ERROR_DEVICE_REQUEST && strstr(report.text, report_part),
              "case %u: status %d, report '%s' lacks '%s'", which, status, report.text,
              report_part);
        printf("case %u: %s\n", which, report.text);
    } else {
        CHECK(status == DEVRT_SUCCESS, "case %u: status %d: %s", which, status, report.text);
    }
}

static void bad_case(uint32_t which, const char *output, const char *report_part,
                     const char *unterminated)
{
    kernel_case("bad", which, output, report_part, unterminated);
}

/*
 * Each even case is the variadic function, the odd one after it the macro on the same
 * call. The macro sends every argument typed, so the host matches them to the conversions
 * it knows; the variadic form stops reading at a conversion it cannot type, so the host
 * has fewer arguments than the format asks for and says so.
 */
static void test_variadic(void)
{
    kernel_case("variadic", 0, "x%yz %s\n", "\"%s\": no argument for its value (0 sent)", NULL);
    kernel_case("variadic", 1, "x%yz %s\n", "argument 1 is a signed integer", NULL);
    kernel_case("variadic", 2, "%5k%s|%d\n", "\"%s\": no argument for its value (0 sent)", NULL);
    kernel_case("variadic", 3, "%5k%s|%d\n", "argument 1 is a floating-point number", NULL);
    const char *simple = "00000000000000000000000000000001A simple string\n\n";
    kernel_case("variadic", 4, simple, NULL, NULL);
    kernel_case("variadic", 5, simple, NULL, NULL);
    const char *c23 = "0B101 -1 1 ff -5 44 -7 8|end\n";
    kernel_case("variadic", 6, c23, NULL, NULL);
    kernel_case("variadic", 7, c23, NULL, NULL);
    kernel_case("variadic", 8, "x    2.500 2.5 8\n", NULL, NULL);
    kernel_case("variadic", 9, "x    2.500 2.5 8\n", NULL, NULL);
    const char *mixed = "the format mixes numbered (%N$) and unnumbered conversions";
    kernel_case("variadic", 10, "4 %s %2$d\n", mixed, NULL);
    kernel_case("variadic", 11, "4 %s %2$d\n", mixed, NULL);
    kernel_case("variadic", 12, "4 %3$s\n", "no argument 3 for its value (1 sent)", NULL);
    kernel_case("variadic", 13, "4 str\n", NULL, NULL);
    kernel_case("variadic", 14, "%1$d %1$s\n", "no argument 1 for its value (0 sent)", NULL);
    const char *w7 = "\"w7\" is not a length C defines";
    kernel_case("variadic", 15, "%w7d %s\n", w7, NULL);
    kernel_case("variadic", 16, "%w7d str\n", w7, NULL);
}

static void test_bad(void)
{
    char *unterminated = devrt_mem_alloc(device, 8192);
    memset(unterminated, 'x', 8192);
    char *cut = malloc(4096 + 4);
    memset(cut, 'x', 4096 + 3);
    cut[0] = '<';
    cut[4097] = '>';
    cut[4098] = '\n';
    cut[4099] = '\0';
    bad_case(0, "a%nb\n", "%n is refused", unterminated);
    bad_case(1, "x%yz 5\n", NULL, unterminated);
    bad_case(2, "1 %d\n", "no argument for its value", unterminated);
    bad_case(3, "%s|\n", "argument 1 is a signed integer", unterminated);
    bad_case(4, "[(null)] [(nu]\n", NULL, unterminated);
    bad_case(5, cut, "was cut at 4096 bytes", unterminated);
    bad_case(6, "100%", NULL, unterminated);
    bad_case(7, "%5000d\n", "width 5000 is over the limit", unterminated);
    char *xs = malloc(4096 + 1);
    memset(xs, 'x', 4096);
    xs[4096] = '\0';
    bad_case(8, xs, "the format was cut at 4096 bytes", unterminated);
    free(xs);
    bad_case(9, "%f %d\n", "argument 1 is a signed integer", unterminated);
    bad_case(10, "%Ld %hs\n", "does not go with %d", unterminated);
    bad_case(11, "v%nw 7\n", "%n is refused", unterminated);
    free(cut);
    devrt_mem_free(device, unterminated);
}

static void test_returns(void)
{
    int32_t *out = devrt_mem_alloc(device, 5 * sizeof *out);
    for (int i = 0; i < 5; ++i)
        out[i] = 99;
    reset_capture();
    devrt_module_set_report_file(module, NULL);
    struct devrt_launch_report report;
    struct devrt_arg args[] = {DEVRT_ARG_PTR(out)};
    struct devrt_launch_config config = grid_for(1);
    int status = devrt_launch(module, "returns", &config, args, 1, &report);
    CHECK(status == DEVRT_ERROR_DEVICE_REQUEST && strstr(report.text, "argument 1 is"),
          "status %d: %s", status, report.text);
    CHECK(captured.count == 5 && !strcmp(captured.units[0], "hello 42\n") &&
              !strcmp(captured.units[1], "hello 42\n") && !strcmp(captured.units[2], "%s|\n"),
          "%zu units", captured.count);
    CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0 && out[3] == 1 && out[4] == '!',
          "returned %d %d %d %d %d, expected 0 0 0 1 33", out[0], out[1], out[2], out[3], out[4]);
    printf("printf returned %d (macro), %d (variadic), %d (reported format)\n", out[0], out[1],
           out[2]);
    devrt_mem_free(device, out);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: printf_test IMAGE TEST [emu|hsa|cuda]\n");
        return 2;
    }
    enum devrt_backend backend = harness_backend(argc > 3 ? argv[3] : NULL);
    int exit_code = harness_open(backend, NULL, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    devrt_module_set_output_callback(module, on_output, &captured);
    const char *test = argv[2];
    /*
     * The emulation runs each test twice (32- and 64-lane waves) and under the sanitizers,
     * its lanes threads on a few cores: it runs the larger tests smaller, to stay within
     * CI's time.
     */
    bool on_emu = harness_host_lanes(backend);
    if (!strcmp(test, "formats"))
        test_formats(on_emu ? 1000 : 3000);
    else if (!strcmp(test, "lines"))
        test_lines(on_emu ? 1024 : 4096);
    else if (!strcmp(test, "raw"))
        test_raw(on_emu ? 512 : 2048);
    else if (!strcmp(test, "exception"))
        test_exception();
    else if (!strcmp(test, "bad"))
        test_bad();
    else if (!strcmp(test, "variadic"))
        test_variadic();
    else if (!strcmp(test, "returns"))
        test_returns();
    else {
        fprintf(stderr, "unknown test %s\n", test);
        return 2;
    }
    devrt_module_unload(module);
    devrt_device_close(device);
    reset_capture();
    free(captured.units);
    free(captured.streams);
    return failures ? 1 : 0;
}
