/*
 * Host threads sharing a device (tests/kernels/launch.c's tagged kernel): each thread its
 * own module of one image, all threads one module, and one module loaded and unloaded many
 * times. Every launch's three lines must reach the sink of the module it ran in, whole and
 * once, and its lanes must all have run. One test per invocation:
 * threads_test IMAGE TEST [BACKEND]; exits 0 when the test holds, 1 when it does not, 77
 * (skipped) when the backend has no device.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/host.h>

#include "harness.h"

#define THREADS 4u
#define ROUNDS 25u
#define BLOCK 4u
#define LOADS 1000u

static devrt_device *device;
static const char *image;
static uint32_t *ran; /* lanes that ran, per tag: device memory the host reads */

/* What one module printed: its output callback appends, and only the server thread calls it. */
struct sink {
    char *data;
    size_t length;
    bool failed;
};

static void append(void *context, uint32_t stream, const char *data, size_t size)
{
    (void)stream;
    struct sink *sink = context;
    char *grown = realloc(sink->data, sink->length + size + 1);
    if (!grown) {
        sink->failed = true;
        return;
    }
    memcpy(grown + sink->length, data, size);
    sink->length += size;
    grown[sink->length] = '\0';
    sink->data = grown;
}

/* How many lines of SINK are "launch TAG line N" for each N below 3; -1 for a foreign line. */
static long count_lines(const struct sink *sink, uint32_t tag, uint32_t tags)
{
    long count = 0;
    for (const char *line = sink->data; line && *line;) {
        unsigned t, n;
        int end = 0;
        if (sscanf(line, "launch %u line %u\n%n", &t, &n, &end) != 2 || end == 0 || n > 2 ||
            t >= tags)
            return -1;
        count += t == tag;
        line += end;
    }
    return count;
}

static int launch_tagged(devrt_module *module, uint32_t tag)
{
    const struct devrt_launch_config config = {{1, 1, 1}, {BLOCK, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_UINT(tag), DEVRT_ARG_UINT(0), DEVRT_ARG_PTR(ran)};
    return devrt_launch(module, "tagged", &config, args, 3, NULL);
}

struct worker {
    pthread_t thread;
    uint32_t tag;
    devrt_module *module; /* shared, or NULL: the worker loads its own */
    struct sink sink;     /* the worker's own module's output */
    int status;           /* the first failure's status, or DEVRT_SUCCESS */
    char error[256];
};

static void *work(void *arg)
{
    struct worker *w = arg;
    devrt_module *module = w->module;
    if (!module) {
        w->status = harness_load(device, image, &module);
        if (w->status != DEVRT_SUCCESS) {
            snprintf(w->error, sizeof w->error, "load: %s", devrt_last_error());
            return NULL;
        }
        devrt_module_set_output_callback(module, append, &w->sink);
    }
    for (uint32_t round = 0; round < ROUNDS && w->status == DEVRT_SUCCESS; ++round) {
        w->status = launch_tagged(module, w->tag);
        if (w->status != DEVRT_SUCCESS)
            snprintf(w->error, sizeof w->error, "launch %u: %s", round, devrt_last_error());
    }
    if (!w->module)
        devrt_module_unload(module);
    return NULL;
}

/* THREADS workers at once, each on SHARED or, without it, on a module of its own. */
static void run_workers(struct worker workers[THREADS], devrt_module *shared)
{
    for (uint32_t t = 0; t < THREADS; ++t) {
        workers[t] = (struct worker){.tag = t, .module = shared, .status = DEVRT_SUCCESS};
        int error = pthread_create(&workers[t].thread, NULL, work, &workers[t]);
        CHECK(error == 0, "pthread_create: %s", strerror(error));
        if (error)
            workers[t].thread = 0;
    }
    for (uint32_t t = 0; t < THREADS; ++t) {
        if (workers[t].thread)
            pthread_join(workers[t].thread, NULL);
        CHECK(workers[t].status == DEVRT_SUCCESS, "thread %u: %s", t, workers[t].error);
        CHECK(ran[t] == ROUNDS * BLOCK, "thread %u: %u lanes ran, expected %u", t, ran[t],
              ROUNDS * BLOCK);
    }
}

/* Each thread loads the image as a module of its own: its output is its own. */
static void test_modules(void)
{
    struct worker workers[THREADS];
    run_workers(workers, NULL);
    for (uint32_t t = 0; t < THREADS; ++t) {
        CHECK(!workers[t].sink.failed, "thread %u: no memory for its output", t);
        for (uint32_t other = 0; other < THREADS; ++other) {
            long lines = count_lines(&workers[t].sink, other, THREADS);
            long expected = other == t ? 3 * ROUNDS : 0;
            CHECK(lines == expected, "thread %u's module has %ld lines of tag %u, expected %ld", t,
                  lines, other, expected);
        }
        free(workers[t].sink.data);
    }
}

/* All threads launch on one module: each launch's lines arrive, once. */
static void test_one_module(void)
{
    devrt_module *module;
    struct sink sink = {0};
    if (harness_load(device, image, &module) != DEVRT_SUCCESS) {
        CHECK(false, "load: %s", devrt_last_error());
        return;
    }
    devrt_module_set_output_callback(module, append, &sink);
    struct worker workers[THREADS];
    run_workers(workers, module);
    devrt_module_unload(module);
    CHECK(!sink.failed, "no memory for the output");
    for (uint32_t t = 0; t < THREADS; ++t) {
        long lines = count_lines(&sink, t, THREADS);
        CHECK(lines == 3 * ROUNDS, "%ld lines of tag %u, expected %u", lines, t, 3 * ROUNDS);
    }
    free(sink.data);
}

/* A module loaded, launched and unloaded LOADS times; the asan preset checks for leaks. */
static void test_load_unload(void)
{
    for (uint32_t load = 0; load < LOADS; ++load) {
        devrt_module *module;
        struct sink sink = {0};
        int status = harness_load(device, image, &module);
        if (status != DEVRT_SUCCESS) {
            CHECK(false, "load %u: %s", load, devrt_last_error());
            return;
        }
        devrt_module_set_output_callback(module, append, &sink);
        status = launch_tagged(module, 0);
        CHECK(status == DEVRT_SUCCESS, "launch %u: %s", load, devrt_last_error());
        devrt_module_unload(module);
        long lines = count_lines(&sink, 0, 1);
        CHECK(lines == 3, "load %u: %ld lines, expected 3", load, lines);
        free(sink.data);
        if (failures)
            return;
    }
    CHECK(ran[0] == LOADS * BLOCK, "%u lanes ran, expected %u", ran[0], LOADS * BLOCK);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: threads_test IMAGE TEST [emu|hsa|cuda]\n");
        return 2;
    }
    image = argv[1];
    int exit_code =
        harness_open(harness_backend(argc > 3 ? argv[3] : NULL), NULL, image, &device, NULL);
    if (exit_code)
        return exit_code;
    ran = devrt_mem_alloc(device, THREADS * sizeof *ran);
    if (!ran) {
        fprintf(stderr, "no device memory\n");
        return 1;
    }
    memset(ran, 0, THREADS * sizeof *ran);
    const char *test = argv[2];
    if (!strcmp(test, "modules")) {
        test_modules();
    } else if (!strcmp(test, "one_module")) {
        test_one_module();
    } else if (!strcmp(test, "load_unload")) {
        test_load_unload();
    } else {
        fprintf(stderr, "unknown test %s\n", test);
        return 2;
    }
    devrt_mem_free(device, ran);
    devrt_device_close(device);
    return failures ? 1 : 0;
}
