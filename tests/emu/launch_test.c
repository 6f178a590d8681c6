/*
 * Asynchronous launches (tests/kernels/launch.c): several in flight on one module, one of
 * which raises; waits by stream and by launch, in any order; a module unloaded before the
 * wait. One test per invocation: launch_test IMAGE TEST [BACKEND]. Exits 0 when the test
 * holds, 1 when it does not, 77 (skipped) when the backend has no device.
 *
 * The module's output and its report lines go to one file, so the test sees their order.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/abi.h>
#include <devrt/host.h>

#include "harness.h"

#define BLOCK 4u
#define TAGS 8u

static devrt_device *device;
static devrt_module *module;
static FILE *log_file; /* the module's output and report lines */
static uint32_t *ran;  /* lanes that counted themselves, per tag */

static const struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {BLOCK, 1, 1}};

static int queue(uint32_t tag, bool raise, devrt_stream *stream, uint64_t *id)
{
    struct devrt_arg args[] = {DEVRT_ARG_UINT(tag), DEVRT_ARG_UINT(raise), DEVRT_ARG_PTR(ran)};
    int status = devrt_launch_async(module, "tagged", &config, args, 3, stream, id);
    CHECK(status == DEVRT_SUCCESS, "queueing tag %u: %s", tag, devrt_last_error());
    CHECK(*id != 0, "tag %u got no launch id", tag);
    return status;
}

/* The log's lines, read back whole. */
static size_t read_log(char lines[][256], size_t max)
{
    fflush(log_file);
    rewind(log_file);
    size_t n = 0;
    while (n < max && fgets(lines[n], sizeof lines[n], log_file))
        lines[n][strcspn(lines[n], "\n")] = '\0', n++;
    fseek(log_file, 0, SEEK_END);
    return n;
}

/* Index of the only line containing NEEDLE; -1 (and a failure) unless there is one. */
static long find_once(char lines[][256], size_t n, const char *needle)
{
    long found = -1;
    int count = 0;
    for (size_t i = 0; i < n; ++i)
        if (strstr(lines[i], needle))
            found = (long)i, count++;
    CHECK(count == 1, "'%s' is in the log %d times", needle, count);
    return count == 1 ? found : -1;
}

/*
 * The report of the raising launch RAISER (id): it names that launch, and it comes after
 * every line of the launches up to RAISER (the module's launches run in order).
 */
static void check_report_order(uint32_t raiser, uint64_t id, uint32_t printed_tags)
{
    char lines[64][256];
    size_t n = read_log(lines, 64);
    char report[128];
    snprintf(report, sizeof report, "kernel tagged (launch %" PRIu64 ") raised a bounds error", id);
    long at = find_once(lines, n, report);
    int reports = 0;
    for (size_t i = 0; i < n; ++i)
        reports += strstr(lines[i], " raised ") != NULL;
    CHECK(reports == 1, "%d report lines, expected 1", reports);
    for (uint32_t tag = 0; tag < printed_tags; ++tag)
        for (uint32_t line = 0; line < 3; ++line) {
            char text[64];
            snprintf(text, sizeof text, "launch %u line %u", tag, line);
            long where = find_once(lines, n, text);
            if (tag <= raiser)
                CHECK(where < at, "'%s' (line %ld) comes after the report (line %ld)", text, where,
                      at);
        }
}

static void check_ran(uint32_t tags, uint32_t raiser)
{
    for (uint32_t tag = 0; tag < tags; ++tag)
        CHECK(ran[tag] == (tag == raiser ? BLOCK - 1 : BLOCK), "tag %u: %u lanes ran", tag,
              ran[tag]);
}

static void check_raised(int status, const struct devrt_launch_report *report, uint64_t id)
{
    CHECK(status == DEVRT_ERROR_EXCEPTION, "status %d (%s)", status, devrt_last_error());
    CHECK(report->launch == id, "the report names launch %" PRIu64 ", not %" PRIu64, report->launch,
          id);
    CHECK(report->code == DEVRT_EXCEPTION_BOUNDS, "code %u", report->code);
    CHECK(strcmp(report->message, "raised by a tagged launch") == 0, "message '%s'",
          report->message);
    char name[64];
    snprintf(name, sizeof name, "(launch %" PRIu64 ")", id);
    CHECK(strstr(report->text, name) != NULL, "text '%s' lacks '%s'", report->text, name);
    CHECK(strstr(devrt_last_error(), name) != NULL, "last error '%s'", devrt_last_error());
}

/* Six launches in flight on two streams, the fourth raises; waited for by stream. */
static void test_attribution(void)
{
    devrt_stream *a = NULL, *b = NULL;
    CHECK(devrt_stream_create(device, &a) == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(devrt_stream_create(device, &b) == DEVRT_SUCCESS, "%s", devrt_last_error());
    if (!a || !b)
        return;
    uint64_t id[6] = {0};
    for (uint32_t tag = 0; tag < 6; ++tag)
        queue(tag, tag == 3, tag % 2 ? b : a, &id[tag]);
    struct devrt_launch_report report;
    int status = devrt_stream_wait(device, a, &report);
    CHECK(status == DEVRT_SUCCESS, "stream a (tags 0, 2, 4): %d %s", status, devrt_last_error());
    CHECK(report.launch == 0 && report.text[0] == '\0', "a clean wait left a report: '%s'",
          report.text);
    status = devrt_stream_wait(device, b, &report);
    check_raised(status, &report, id[3]);
    /* Later launches run clean, synchronous or not. */
    struct devrt_arg args[] = {DEVRT_ARG_UINT(6), DEVRT_ARG_UINT(0), DEVRT_ARG_PTR(ran)};
    status = devrt_launch(module, "tagged", &config, args, 3, &report);
    CHECK(status == DEVRT_SUCCESS, "a launch after the exception: %d %s", status,
          devrt_last_error());
    uint64_t later;
    queue(7, false, b, &later);
    status = devrt_launch_wait(device, later, &report);
    CHECK(status == DEVRT_SUCCESS, "an asynchronous launch after the exception: %d %s", status,
          devrt_last_error());
    check_ran(8, 3);
    check_report_order(3, id[3], 8);
    devrt_stream_destroy(a);
    devrt_stream_destroy(b);
}

/* Three launches on the default stream, the middle one raises; waited for last first. */
static void test_out_of_order(void)
{
    uint64_t id[3] = {0};
    for (uint32_t tag = 0; tag < 3; ++tag)
        queue(tag, tag == 1, NULL, &id[tag]);
    struct devrt_launch_report report;
    int status = devrt_launch_wait(device, id[2], &report);
    CHECK(status == DEVRT_SUCCESS, "launch 2: %d %s", status, devrt_last_error());
    status = devrt_launch_wait(device, id[1], &report);
    check_raised(status, &report, id[1]);
    status = devrt_launch_wait(device, id[0], &report);
    CHECK(status == DEVRT_SUCCESS, "launch 0: %d %s", status, devrt_last_error());
    /* A report is taken once; ids that never were are refused too. */
    status = devrt_launch_wait(device, id[1], &report);
    CHECK(status == DEVRT_ERROR_INVALID_ARGUMENT, "waiting twice: %d", status);
    status = devrt_launch_wait(device, id[2] + 1000, &report);
    CHECK(status == DEVRT_ERROR_INVALID_ARGUMENT, "an unknown launch: %d", status);
    status = devrt_stream_wait(device, NULL, &report);
    CHECK(status == DEVRT_SUCCESS, "an empty default stream: %d %s", status, devrt_last_error());
    check_ran(3, 1);
    check_report_order(1, id[1], 3);
}

/* Three launches queued, the module unloaded at once: the launches are waited for there. */
static void test_unload_before_wait(const char *image)
{
    devrt_stream *stream = NULL;
    CHECK(devrt_stream_create(device, &stream) == DEVRT_SUCCESS, "%s", devrt_last_error());
    uint64_t id[3] = {0};
    for (uint32_t tag = 0; tag < 3; ++tag)
        queue(tag, tag == 1, stream, &id[tag]);
    devrt_module_unload(module);
    module = NULL;
    /* Written at the unload, after the lines before it. */
    check_report_order(1, id[1], 3);
    check_ran(3, 1);
    struct devrt_launch_report report;
    int status = devrt_launch_wait(device, id[1], &report);
    check_raised(status, &report, id[1]);
    status = devrt_launch_wait(device, id[0], &report);
    CHECK(status == DEVRT_SUCCESS, "launch 0: %d %s", status, devrt_last_error());
    status = devrt_stream_wait(device, stream, &report);
    CHECK(status == DEVRT_SUCCESS, "the rest of the stream: %d %s", status, devrt_last_error());
    /* The report was written once, at the unload. */
    check_report_order(1, id[1], 3);
    devrt_stream_destroy(stream);
    /* The device goes on: load again and launch. */
    status = harness_load(device, image, &module);
    CHECK(status == DEVRT_SUCCESS, "%s", devrt_last_error());
    if (status != DEVRT_SUCCESS)
        return;
    devrt_module_set_output_file(module, NULL);
    status = devrt_launch(module, "empty", &config, NULL, 0, NULL);
    CHECK(status == DEVRT_SUCCESS, "%s", devrt_last_error());
}

/* What devrt_launch refuses, devrt_launch_async refuses before queueing anything. */
static void test_refused(void)
{
    uint64_t id = 99;
    int status = devrt_launch_async(module, "no_such_kernel", &config, NULL, 0, NULL, &id);
    CHECK(status == DEVRT_ERROR_NO_KERNEL, "a missing kernel: %d %s", status, devrt_last_error());
    CHECK(id == 0, "a refused launch got id %" PRIu64, id);
    struct devrt_launch_config empty_grid = {.grid = {0, 1, 1}, .block = {1, 1, 1}};
    status = devrt_launch_async(module, "empty", &empty_grid, NULL, 0, NULL, &id);
    CHECK(status == DEVRT_ERROR_INVALID_ARGUMENT, "an empty grid: %d", status);
    /* The control: the same launch with a grid is queued and runs. */
    status = devrt_launch_async(module, "empty", &config, NULL, 0, NULL, &id);
    CHECK(status == DEVRT_SUCCESS && id != 0, "%d %s", status, devrt_last_error());
    status = devrt_stream_wait(device, NULL, NULL);
    CHECK(status == DEVRT_SUCCESS, "%d %s", status, devrt_last_error());
}

/* A load of IMAGE whose steps, as devrt_module_get_info reports them, fit in its wall time. */
static devrt_module *load_timed(const char *image)
{
    devrt_module *loaded = NULL;
    uint64_t start = (uint64_t)(harness_seconds() * 1e9);
    int status = harness_load(device, image, &loaded);
    uint64_t wall = (uint64_t)(harness_seconds() * 1e9) - start;
    CHECK(status == DEVRT_SUCCESS, "%s", devrt_last_error());
    if (status != DEVRT_SUCCESS)
        return NULL;
    struct devrt_module_info info;
    memset(&info, 0xff, sizeof info);
    status = devrt_module_get_info(loaded, &info);
    CHECK(status == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(info.load_image_ns && info.load_check_ns && info.load_memory_ns && info.load_state_ns,
          "a step took no time: image %" PRIu64 " check %" PRIu64 " memory %" PRIu64
          " state %" PRIu64,
          info.load_image_ns, info.load_check_ns, info.load_memory_ns, info.load_state_ns);
    uint64_t sum =
        info.load_image_ns + info.load_check_ns + info.load_memory_ns + info.load_state_ns;
    /* Rounded through doubles on the way: a microsecond of slack. */
    CHECK(sum <= wall + 1000, "the steps (%" PRIu64 " ns) exceed the load (%" PRIu64 " ns)", sum,
          wall);
    devrt_module_set_output_file(loaded, log_file);
    devrt_module_set_report_file(loaded, log_file);
    return loaded;
}

/*
 * Loads of one image one after another (what a backend keeps of an unloaded module's memory
 * goes to the next load): a module that raised leaves nothing to the next, whose launches
 * run clean and print through mailboxes and buffers the unload gave back; each load reports
 * where its time went. One at a time: the emulation shares an image's globals between
 * modules of it.
 */
static void test_loads(const char *image)
{
    CHECK(devrt_module_get_info(NULL, &(struct devrt_module_info){0}) ==
              DEVRT_ERROR_INVALID_ARGUMENT,
          "no module");
    CHECK(devrt_module_get_info(module, NULL) == DEVRT_ERROR_INVALID_ARGUMENT, "no info");
    uint64_t id[3] = {0};
    struct devrt_launch_report report;
    for (uint32_t tag = 0; tag < 3; ++tag) {
        devrt_module_unload(module);
        module = load_timed(image);
        if (!module)
            return;
        queue(tag, tag == 0, NULL, &id[tag]);
        int status = devrt_launch_wait(device, id[tag], &report);
        if (tag == 0)
            check_raised(status, &report, id[tag]);
        else
            CHECK(status == DEVRT_SUCCESS, "load %u: %d %s", tag, status, devrt_last_error());
    }
    check_ran(3, 0);
    check_report_order(0, id[0], 3);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: launch_test IMAGE TEST [emu|hsa|cuda]\n");
        return 2;
    }
    int exit_code =
        harness_open(harness_backend(argc > 3 ? argv[3] : NULL), NULL, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    log_file = tmpfile();
    ran = devrt_mem_alloc(device, TAGS * sizeof *ran);
    if (!log_file || !ran) {
        fprintf(stderr, "no log file or no device memory\n");
        return 1;
    }
    devrt_module_set_output_file(module, log_file);
    devrt_module_set_report_file(module, log_file);
    const char *test = argv[2];
    if (!strcmp(test, "attribution")) {
        test_attribution();
    } else if (!strcmp(test, "out_of_order")) {
        test_out_of_order();
    } else if (!strcmp(test, "unload_before_wait")) {
        test_unload_before_wait(argv[1]);
    } else if (!strcmp(test, "loads")) {
        test_loads(argv[1]);
        if (!module)
            return 1;
    } else if (!strcmp(test, "refused")) {
        test_refused();
    } else {
        fprintf(stderr, "unknown test %s\n", test);
        return 2;
    }
    devrt_mem_free(device, ran);
    devrt_module_unload(module);
    devrt_device_close(device);
    fclose(log_file);
    return failures ? 1 : 0;
}
