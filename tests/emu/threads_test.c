/*
 * Host threads sharing a device (tests/kernels/launch.c's tagged kernel): each thread its
 * own module of one image, all threads one module, and one module loaded and unloaded many
 * times. Every launch's three lines must reach the sink of the module it ran in, whole and
 * once, and its lanes must all have run; each module's heap holds what its own kernels
 * took. dlopen_shares is the control for the emulation's private copies: without them the
 * loader hands a second load of an image, or of a copy named as an earlier one was, the
 * first one's object, and with it its state. One test per invocation:
 * threads_test IMAGE TEST [BACKEND]; exits 0 when the test holds, 1 when it does not, 77
 * (skipped) when the backend has no device.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <devrt/host.h>

#include "faults.h"
#include "harness.h"

#define THREADS 4u
#define ROUNDS 25u
#define BLOCK 4u
/* ThreadSanitizer makes each load a tenth of a second: its run proves the locking with fewer,
   and the asan preset's run counts the thousand for leaks. */
#ifdef __SANITIZE_THREAD__
#define LOADS 100u
#else
#define LOADS 1000u
#endif

static devrt_device *device;
static const char *image;
static uint32_t *ran; /* lanes that ran, per tag: device memory the host reads */

/* How many lines of SINK are "launch TAG line N" for each N below 3; -1 for a foreign line. */
static long count_lines(const struct harness_sink *sink, uint32_t tag, uint32_t tags)
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

/* Each lane of a workgroup of LANES takes 64 bytes, a size class of its own: the heap's
   bytes in use grow by exactly 64 * LANES. */
#define HOLD_BYTES 64u
static uint32_t *hold_failed;

static int launch_hold(devrt_module *module, uint32_t lanes)
{
    const struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {lanes, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_UINT(HOLD_BYTES), DEVRT_ARG_PTR(hold_failed)};
    return devrt_launch(module, "hold", &config, args, 2, NULL);
}

static int launch_tagged(devrt_module *module, uint32_t tag)
{
    const struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {BLOCK, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_UINT(tag), DEVRT_ARG_UINT(0), DEVRT_ARG_PTR(ran)};
    return devrt_launch(module, "tagged", &config, args, 3, NULL);
}

struct worker {
    pthread_t thread;
    uint32_t tag;
    devrt_module *module;     /* shared, or NULL: the worker loads its own */
    struct harness_sink sink; /* the worker's own module's output */
    int status;               /* the first failure's status, or DEVRT_SUCCESS */
    char error[256];
    uint64_t heap_in_use; /* its own module's, after its launches */
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
        devrt_module_set_output_callback(module, harness_sink_append, &w->sink);
    }
    for (uint32_t round = 0; round < ROUNDS && w->status == DEVRT_SUCCESS; ++round) {
        w->status = launch_tagged(module, w->tag);
        if (w->status != DEVRT_SUCCESS)
            snprintf(w->error, sizeof w->error, "launch %u: %s", round, devrt_last_error());
    }
    if (!w->module) {
        /* Thread t's module holds (t + 1) blocks, whatever the other modules hold. */
        struct devrt_heap_stats stats = {0};
        if (w->status == DEVRT_SUCCESS) {
            w->status = launch_hold(module, w->tag + 1);
            if (w->status == DEVRT_SUCCESS)
                w->status = devrt_heap_stats(module, &stats);
            if (w->status != DEVRT_SUCCESS)
                snprintf(w->error, sizeof w->error, "hold: %s", devrt_last_error());
        }
        w->heap_in_use = stats.bytes_in_use;
        devrt_module_unload(module);
    }
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
        CHECK(workers[t].heap_in_use == (t + 1) * HOLD_BYTES,
              "thread %u's module's heap holds %llu bytes, expected %u", t,
              (unsigned long long)workers[t].heap_in_use, (t + 1) * HOLD_BYTES);
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
    struct harness_sink sink = {0};
    if (harness_load(device, image, &module) != DEVRT_SUCCESS) {
        CHECK(false, "load: %s", devrt_last_error());
        return;
    }
    devrt_module_set_output_callback(module, harness_sink_append, &sink);
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

/* dlopen a copy of IMAGE from a new anonymous file as /proc/self/fd/N; *fd stays open. */
static void *open_memfd_copy(int *fd)
{
    void *handle = NULL;
    int in = open(image, O_RDONLY | O_CLOEXEC);
    *fd = memfd_create("threads-test", MFD_CLOEXEC);
    char buffer[65536], name[64];
    ssize_t n = 0;
    while (in >= 0 && *fd >= 0 && (n = read(in, buffer, sizeof buffer)) > 0)
        if (write(*fd, buffer, (size_t)n) != n)
            n = -1;
    if (in >= 0 && *fd >= 0 && n == 0) {
        snprintf(name, sizeof name, "/proc/self/fd/%d", *fd);
        handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    }
    if (in >= 0)
        close(in);
    return handle;
}

/*
 * The control: what the loader does without devrt's care. A second dlopen of the image
 * gives the same state; so does a copy whose name an earlier, still loaded copy had (its
 * descriptor closed and the number reused), though the file is another.
 */
static void test_dlopen_shares(void)
{
    void *first = dlopen(image, RTLD_NOW | RTLD_LOCAL);
    void *second = dlopen(image, RTLD_NOW | RTLD_LOCAL);
    CHECK(first && second, "dlopen %s: %s", image, dlerror());
    if (first && second)
        CHECK(dlsym(first, "__devrt_state") == dlsym(second, "__devrt_state"),
              "two loads of one path have states of their own: the copy would not be needed");
    int fd1, fd2;
    void *copy1 = open_memfd_copy(&fd1);
    close(fd1); /* the number is free again while copy1 stays loaded */
    void *copy2 = open_memfd_copy(&fd2);
    CHECK(copy1 && copy2 && fd1 == fd2, "copies: %p %p as fd %d and %d", copy1, copy2, fd1, fd2);
    if (copy1 && copy2)
        CHECK(dlsym(copy1, "__devrt_state") == dlsym(copy2, "__devrt_state"),
              "a copy under an earlier copy's name has a state of its own: keeping the "
              "descriptor open would not be needed");
    void *handles[] = {first, second, copy1, copy2};
    for (size_t i = 0; i < sizeof handles / sizeof *handles; ++i)
        if (handles[i])
            dlclose(handles[i]);
    if (fd2 >= 0)
        close(fd2);
}

/*
 * A module loaded, launched and unloaded LOADS times (LOADS); the asan preset checks for
 * leaks. Its control (leak_control, run by the asan preset only) plants a leak in the
 * runtime's unload through its test hook, which the same check must report.
 */
static void test_load_unload(uint32_t loads)
{
    for (uint32_t load = 0; load < loads; ++load) {
        devrt_module *module;
        struct harness_sink sink = {0};
        int status = harness_load(device, image, &module);
        if (status != DEVRT_SUCCESS) {
            CHECK(false, "load %u: %s", load, devrt_last_error());
            return;
        }
        devrt_module_set_output_callback(module, harness_sink_append, &sink);
        status = launch_tagged(module, 0);
        CHECK(status == DEVRT_SUCCESS, "launch %u: %s", load, devrt_last_error());
        devrt_module_unload(module);
        long lines = count_lines(&sink, 0, 1);
        CHECK(lines == 3, "load %u: %ld lines, expected 3", load, lines);
        free(sink.data);
        if (failures)
            return;
    }
    CHECK(ran[0] == loads * BLOCK, "%u lanes ran, expected %u", ran[0], loads * BLOCK);
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
    hold_failed = devrt_mem_alloc(device, sizeof *hold_failed);
    if (!ran || !hold_failed) {
        fprintf(stderr, "no device memory\n");
        return 1;
    }
    memset(ran, 0, THREADS * sizeof *ran);
    *hold_failed = 0;
    const char *test = argv[2];
    if (!strcmp(test, "modules")) {
        test_modules();
    } else if (!strcmp(test, "one_module")) {
        test_one_module();
    } else if (!strcmp(test, "load_unload")) {
        test_load_unload(LOADS);
    } else if (!strcmp(test, "leak_control")) {
        struct devrt_fault_settings leak = {.leak_unloaded_modules = true};
        devrt_faults_set(device, &leak);
        test_load_unload(10);
    } else if (!strcmp(test, "dlopen_shares")) {
        test_dlopen_shares();
    } else {
        fprintf(stderr, "unknown test %s\n", test);
        return 2;
    }
    CHECK(*hold_failed == 0, "%u allocations failed", *hold_failed);
    devrt_mem_free(device, hold_failed);
    devrt_mem_free(device, ran);
    devrt_device_close(device);
    return failures ? 1 : 0;
}
