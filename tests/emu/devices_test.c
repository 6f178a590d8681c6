/*
 * Several devices in one process (issue 18): each device gets a host thread that runs the
 * kernel `work` (tests/kernels/devices.c) on it, all at once, and checks that what came
 * back is the device's own: every output line its kernel printed arrived through its own
 * module's sink and no other, every host call was answered by its own server's handler,
 * and its heap holds exactly the blocks its own kernels kept.
 *
 *   devices_test BACKEND INDEXES IMAGE [IMAGE...] [--crossed|--raise|--raise-all]
 *
 * INDEXES lists the devices to open, "0,1" (two devices) or "0,0" (one GPU opened twice);
 * device i loads IMAGE number i (the last one for the rest). --crossed is the control:
 * each kernel is told the next device's tag, as if its requests reached the wrong server,
 * which the checks must catch. --raise: device 0's kernel raises at the end of each launch
 * (work_then_raise), which must fail every launch of device 0 with its own report and
 * none of the others'; --raise-all, its control, has every device's kernel raise while
 * only device 0 expects it.
 *
 * Exit status: 0 every device's results are its own, 1 a check failed (each printed),
 * 2 the command line was wrong, 77 the backend has fewer devices than asked for.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/abi.h>
#include <devrt/host.h>

#include "harness.h"

#define DEVICES_SERVICE 11u /* as tests/kernels/devices.c */
#define DEVICES_BLOCK 64u
#define MAX_DEVICES 16
#define GROUPS 4u
#define BLOCK 64u
#define LINES 3u
#define LAUNCHES 4u

struct sink {
    uint32_t tag;
    pthread_mutex_t lock;
    uint64_t lines, foreign;
    char first_foreign[128];
};

struct device_run {
    int index;
    uint32_t tag;        /* this device's, in every line and host call it should get */
    uint32_t kernel_tag; /* what its kernel is told (another device's under --crossed) */
    bool raises;         /* its kernel raises at its end (work_then_raise) */
    bool expect_raise;   /* every launch must fail with its own raise (device 0 only) */
    const char *image;
    devrt_device *device;
    devrt_module *module;
    struct sink sink;
    int failures;
    char failure[512];
};

static void fail(struct device_run *run, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(struct device_run *run, const char *format, ...)
{
    if (run->failures++ == 0) {
        va_list args;
        va_start(args, format);
        vsnprintf(run->failure, sizeof run->failure, format, args);
        va_end(args);
    }
}

/* Every unit is one line "device T lane L line I": it must carry the sink's own tag. */
static void receive(void *context, uint32_t stream, const char *data, size_t size)
{
    (void)stream;
    struct sink *sink = context;
    unsigned tag = ~0u;
    char text[128];
    snprintf(text, sizeof text, "%.*s", (int)(size < sizeof text - 1 ? size : sizeof text - 1),
             data);
    pthread_mutex_lock(&sink->lock);
    if (sscanf(text, "device %u ", &tag) == 1 && tag == sink->tag) {
        sink->lines++;
    } else if (sink->foreign++ == 0) {
        text[strcspn(text, "\n")] = '\0';
        snprintf(sink->first_foreign, sizeof sink->first_foreign, "%s", text);
    }
    pthread_mutex_unlock(&sink->lock);
}

/* The host call's answer names the server that gave it (its context) and the caller's tag. */
static uint64_t answer(void *context, uint32_t service, const void *data, size_t size)
{
    (void)service;
    const struct device_run *run = context;
    uint64_t args[4];
    if (size != sizeof args)
        return 0;
    memcpy(args, data, sizeof args);
    return (uint64_t)run->tag << 48 | args[0] << 32 | args[1];
}

static void *drive(void *arg)
{
    struct device_run *run = arg;
    uint32_t lanes = GROUPS * BLOCK;
    uint64_t *out = devrt_mem_alloc(run->device, lanes * sizeof *out);
    if (!out) {
        fail(run, "no memory for the answers: %s", devrt_last_error());
        return NULL;
    }
    struct devrt_launch_config config = {.grid = {GROUPS, 1, 1}, .block = {BLOCK, 1, 1}};
    /* Each device keeps as many blocks per lane as its tag: its heap's footprint. */
    uint32_t keep = run->tag;
    for (uint32_t launch = 0; launch < LAUNCHES && !run->failures; ++launch) {
        memset(out, 0, lanes * sizeof *out);
        struct devrt_arg args[] = {DEVRT_ARG_PTR(out), DEVRT_ARG_UINT(run->kernel_tag),
                                   DEVRT_ARG_UINT(LINES), DEVRT_ARG_UINT(keep)};
        struct devrt_launch_report report = {0};
        int status = devrt_launch(run->module, run->raises ? "work_then_raise" : "work", &config,
                                  args, 4, &report);
        if (run->expect_raise &&
            (status != DEVRT_ERROR_EXCEPTION || report.code != DEVRT_EXCEPTION_ARGUMENT ||
             report.value != run->tag)) {
            fail(run, "launch %u: status %d, exception %u with value %llu; expected its own raise",
                 launch, status, report.code, (unsigned long long)report.value);
            break;
        }
        if (!run->expect_raise && status != DEVRT_SUCCESS) {
            fail(run, "launch %u: %s", launch, devrt_last_error());
            break;
        }
        for (uint32_t lane = 0; lane < lanes; ++lane) {
            uint64_t expected = (uint64_t)run->tag << 48 | (uint64_t)run->tag << 32 | lane;
            if (out[lane] != expected) {
                fail(run, "launch %u lane %u: host call answered 0x%llx, not 0x%llx", launch, lane,
                     (unsigned long long)out[lane], (unsigned long long)expected);
                break;
            }
        }
    }
    devrt_mem_free(run->device, out);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 && !strncmp(argv[argc - 1], "--", 2) ? argv[--argc] : "";
    bool crossed = !strcmp(mode, "--crossed");
    bool raise_all = !strcmp(mode, "--raise-all");
    if (*mode && !crossed && !raise_all && strcmp(mode, "--raise")) {
        fprintf(stderr, "devices_test: unknown option %s\n", mode);
        return 2;
    }
    int indexes[MAX_DEVICES];
    int count = argc >= 4 ? harness_device_list(argv[2], indexes, MAX_DEVICES) : -1;
    if (count < 1) {
        fprintf(stderr, "usage: devices_test BACKEND INDEXES IMAGE [IMAGE...] "
                        "[--crossed|--raise|--raise-all]\n");
        return 2;
    }
    enum devrt_backend backend = harness_backend(argv[1]);
    struct device_run runs[MAX_DEVICES];
    memset(runs, 0, sizeof runs);
    int exit_code = 0;
    for (int i = 0; i < count && !exit_code; ++i) {
        struct device_run *run = &runs[i];
        run->index = indexes[i];
        run->tag = (uint32_t)i + 1;
        run->kernel_tag = crossed ? (uint32_t)(i + 1) % (uint32_t)count + 1 : run->tag;
        run->expect_raise = i == 0 && *mode && !crossed;
        run->raises = run->expect_raise || raise_all;
        run->image = argv[3 + (i < argc - 4 ? i : argc - 4)];
        run->sink.tag = run->tag;
        pthread_mutex_init(&run->sink.lock, NULL);
        int status = devrt_device_open(backend, run->index, NULL, &run->device);
        if (status == DEVRT_ERROR_NO_DEVICE) {
            printf("skipped: %s\n", devrt_last_error());
            exit_code = HARNESS_SKIP;
        } else if (status != DEVRT_SUCCESS) {
            fprintf(stderr, "cannot open device %d: %s\n", run->index, devrt_last_error());
            exit_code = 1;
        } else if (harness_load(run->device, run->image, &run->module) != DEVRT_SUCCESS) {
            fprintf(stderr, "cannot load %s: %s\n", run->image, devrt_last_error());
            exit_code = 1;
        } else if (devrt_register_hostcall(run->device, DEVICES_SERVICE, answer, run) !=
                   DEVRT_SUCCESS) {
            fprintf(stderr, "cannot register the host call: %s\n", devrt_last_error());
            exit_code = 1;
        } else {
            devrt_module_set_output_callback(run->module, receive, &run->sink);
        }
    }

    pthread_t threads[MAX_DEVICES];
    int started = 0;
    for (int i = 0; i < count && !exit_code; ++i, ++started)
        if (pthread_create(&threads[i], NULL, drive, &runs[i]) != 0) {
            fprintf(stderr, "no thread for device %d\n", i);
            exit_code = 1;
            break;
        }
    for (int i = 0; i < started; ++i)
        pthread_join(threads[i], NULL);

    int failures = 0;
    for (int i = 0; i < count && started == count; ++i) {
        struct device_run *run = &runs[i];
        struct devrt_heap_stats stats = {0};
        if (devrt_heap_stats(run->module, &stats) != DEVRT_SUCCESS)
            fail(run, "heap statistics: %s", devrt_last_error());
        uint64_t lines = GROUPS * BLOCK * LINES * LAUNCHES;
        uint64_t kept = (uint64_t)GROUPS * BLOCK * run->tag * LAUNCHES * DEVICES_BLOCK;
        struct devrt_device_info info;
        devrt_device_get_info(run->device, &info);
        printf("device %d (index %d, %s, server on %s): %llu lines, %llu foreign, heap %llu bytes "
               "in use\n",
               i, run->index, info.name, info.server_cpus[0] ? info.server_cpus : "any CPU",
               (unsigned long long)run->sink.lines, (unsigned long long)run->sink.foreign,
               (unsigned long long)stats.bytes_in_use);
        /* Every check that fails says so: the control shows each one catching it. */
        if (run->failures)
            printf("FAIL device %d: %s\n", i, run->failure);
        if (run->sink.foreign)
            printf("FAIL device %d: %llu lines of another device in its sink, the first \"%s\"\n",
                   i, (unsigned long long)run->sink.foreign, run->sink.first_foreign);
        else if (run->sink.lines != lines && !run->failures)
            printf("FAIL device %d: %llu of its %llu lines arrived\n", i,
                   (unsigned long long)run->sink.lines, (unsigned long long)lines);
        if (stats.bytes_in_use != kept && !run->failures)
            printf("FAIL device %d: its heap holds %llu bytes, its kernels kept %llu\n", i,
                   (unsigned long long)stats.bytes_in_use, (unsigned long long)kept);
        failures += run->failures || run->sink.foreign ||
                    (!run->failures && (run->sink.lines != lines || stats.bytes_in_use != kept));
    }
    for (int i = 0; i < count; ++i) {
        devrt_module_unload(runs[i].module);
        devrt_device_close(runs[i].device);
        pthread_mutex_destroy(&runs[i].sink.lock);
    }
    if (exit_code)
        return exit_code;
    printf("%d of %d devices failed\n", failures, count);
    return failures ? 1 : 0;
}
