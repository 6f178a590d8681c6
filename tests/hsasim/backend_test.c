/*
 * The HSA backend against faults the runtime double injects (double/hsasim_control.h), and
 * the defects a review of hsa.c against ROCr found, each shown on the double. Usage:
 * backend_test IMAGE TEST, IMAGE the timeout kernels' code object ({target} in its path),
 * whose emulation image is in $DEVRT_HSASIM_IMAGES. Exits 0 when the test holds, 1 when it
 * does not, 2 on a wrong command line. No wait here is without a bound: each ends with the
 * failure it waited for.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include "faults.h"
#include "harness.h"
#include "hsasim_control.h"

static devrt_device *device;
static devrt_module *module;
static const char *image;
static uint32_t *words; /* spin's release, ran and printed; mark's count */

/* Waits until COND holds, a bound only as a failsafe that says the condition was not met. */
#define WAIT_FOR(cond, what)                                                                       \
    for (int waited_ms = 0; !(cond); waited_ms += 10) {                                            \
        if (waited_ms == 60000) {                                                                  \
            fprintf(stderr, "could not reach the condition: %s\n", what);                          \
            exit(3);                                                                               \
        }                                                                                          \
        nanosleep(&(struct timespec){0, 10000000}, NULL);                                          \
    }

static void *double_function(const char *name)
{
    void *library = dlopen(getenv("DEVRT_TEST_HSA_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
    void *f = library ? dlsym(library, name) : NULL;
    if (!f) {
        fprintf(stderr, "FAIL: the HSA runtime double has no %s\n", name);
        exit(1);
    }
    return f;
}

static void inject(enum devrt_hsasim_fault kind, uint64_t n)
{
    ((devrt_hsasim_inject_fn *)double_function(DEVRT_HSASIM_INJECT))(kind, n);
}

static uint64_t count(const char *what)
{
    return ((devrt_hsasim_count_fn *)double_function(DEVRT_HSASIM_COUNT))(what);
}

/* Opens GPU 0 (harness_open) or another, loads the image and allocates the words. */
static int open_device(int gpu)
{
    int status = 0;
    if (gpu == 0) {
        status = harness_open(DEVRT_BACKEND_HSA, NULL, image, &device, &module);
    } else if (devrt_device_open(DEVRT_BACKEND_HSA, gpu, NULL, &device) != DEVRT_SUCCESS ||
               harness_load(device, image, &module) != DEVRT_SUCCESS) {
        fprintf(stderr, "cannot open GPU %d and load %s: %s\n", gpu, image, devrt_last_error());
        status = 1;
    }
    if (status == 0) {
        words = devrt_mem_alloc(device, 4 * sizeof *words);
        if (!words)
            status = 1;
    }
    return status;
}

static int launch_mark(uint32_t lanes, uint64_t *id, devrt_stream *stream)
{
    const struct devrt_launch_config config = {.grid = {lanes, 1, 1}, .block = {1, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[3])};
    if (id)
        return devrt_launch_async(module, "mark", &config, args, 1, stream, id);
    return devrt_launch(module, "mark", &config, args, 1, NULL);
}

static int launch_spin(uint64_t timeout_ns, devrt_stream *stream, uint64_t *id)
{
    const struct devrt_launch_config config = {
        .grid = {4, 1, 1}, .block = {1, 1, 1}, .timeout_ns = timeout_ns};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[0]), DEVRT_ARG_PTR(&words[1]),
                               DEVRT_ARG_PTR(&words[2])};
    if (id)
        return devrt_launch_async(module, "spin", &config, args, 3, stream, id);
    return devrt_launch(module, "spin", &config, args, 3, NULL);
}

/*
 * Another user of the runtime in the process (HIP, a profiler): a system event handler
 * registered before devrt's, with a runtime reference the test keeps, which claims nothing
 * and counts its calls.
 */
static int own_handler_calls;

static hsa_status_t own_handler(const hsa_amd_event_t *event, void *data)
{
    (void)event;
    (void)data;
    __atomic_add_fetch(&own_handler_calls, 1, __ATOMIC_RELAXED);
    return HSA_STATUS_ERROR;
}

static void register_own_handler(void)
{
    void *library = dlopen(getenv("DEVRT_TEST_HSA_LIBRARY"), RTLD_NOW);
    __typeof__(hsa_init) *init =
        library ? (__typeof__(hsa_init) *)dlsym(library, "hsa_init") : NULL;
    __typeof__(hsa_amd_register_system_event_handler) *add =
        library ? (__typeof__(hsa_amd_register_system_event_handler) *)dlsym(
                      library, "hsa_amd_register_system_event_handler")
                : NULL;
    if (!init || !add || init() != HSA_STATUS_SUCCESS) {
        fprintf(stderr, "FAIL: the HSA runtime double did not start for the test's handler\n");
        exit(1);
    }
    CHECK(add(own_handler, NULL) == HSA_STATUS_SUCCESS, "the test's handler was refused");
}

/* Launches the spin, held, and waits until each of its lanes has printed; its launch id. */
static uint64_t start_spin(void)
{
    __atomic_store_n(&words[0], 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&words[2], 0u, __ATOMIC_RELEASE);
    uint64_t id = 0;
    CHECK(launch_spin(0, NULL, &id) == DEVRT_SUCCESS, "the spin: %s", devrt_last_error());
    WAIT_FOR(__atomic_load_n(&words[2], __ATOMIC_ACQUIRE) == 4,
             "the spin's lanes did not all print");
    return id;
}

/*
 * Releases the spin and waits until its lanes have ended: a launch lost to a fault leaves
 * them running in the double, and an unload before they end is a fault of its own.
 */
static void release_spin(void)
{
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    WAIT_FOR(count("running") == 0, "the released spin's lanes did not end");
}

/* A kernel that runs to its end, counted: the device works. */
static void check_usable(const char *after)
{
    uint32_t before = __atomic_load_n(&words[3], __ATOMIC_ACQUIRE);
    int status = launch_mark(8, NULL, NULL);
    CHECK(status == DEVRT_SUCCESS, "a launch after %s: %s", after, devrt_last_error());
    CHECK(words[3] - before == 8, "a launch after %s ran %u lanes of 8", after, words[3] - before);
}

/*
 * A memory fault during a kernel (CONTROL: none): the launch fails naming the fault, the
 * device is lost, launches in flight and later calls fail at once, the close works, and an
 * open afterwards says that only a new process can use the GPU (the kernel driver keeps the
 * process's queues on it evicted). Without the fault the same open works.
 */
static void test_memory_fault(bool control)
{
    devrt_stream *stream;
    CHECK(devrt_stream_create(device, &stream) == DEVRT_SUCCESS, "%s", devrt_last_error());
    if (!control)
        inject(DEVRT_HSASIM_MEMORY_FAULT, 1);
    uint64_t first, second = 0;
    CHECK(launch_mark(4, &first, stream) == DEVRT_SUCCESS, "%s", devrt_last_error());
    /* The second is refused at once when the fault came first, or fails waiting. */
    int pending = launch_mark(4, &second, stream);
    struct devrt_launch_report report;
    int status = devrt_launch_wait(device, first, &report);
    if (pending == DEVRT_SUCCESS)
        pending = devrt_launch_wait(device, second, NULL);
    devrt_stream_destroy(stream);
    if (control) {
        CHECK(status == DEVRT_SUCCESS && pending == DEVRT_SUCCESS, "%s", devrt_last_error());
        check_usable("two launches");
        devrt_device_close(device);
        device = NULL;
        module = NULL;
        CHECK(open_device(0) == 0, "open again: %s", devrt_last_error());
        if (device)
            check_usable("the device was opened again");
        return;
    }
    CHECK(status == DEVRT_ERROR_DEVICE_LOST, "the faulting launch: %s (%s)",
          devrt_status_string(status), devrt_last_error());
    CHECK(strstr(report.text, "GPU memory fault at address 0xdead0000") && report.launch == first,
          "its report: %s", report.text);
    CHECK(pending == DEVRT_ERROR_DEVICE_LOST, "the launch after it: %s (%s)",
          devrt_status_string(pending), devrt_last_error());
    CHECK(launch_mark(1, NULL, NULL) == DEVRT_ERROR_DEVICE_LOST, "a later launch: %s",
          devrt_last_error());
    CHECK(devrt_mem_alloc(device, 64) == NULL && strstr(devrt_last_error(), "the device is lost"),
          "an allocation: %s", devrt_last_error());
    devrt_module *other = NULL;
    CHECK(harness_load(device, image, &other) == DEVRT_ERROR_DEVICE_LOST, "a load: %s",
          devrt_last_error());
    devrt_device_close(device);
    device = NULL;
    module = NULL;
    /* The runtime is started anew by each open; the kernel driver's process is not. */
    for (int attempt = 1; attempt <= 2; ++attempt) {
        devrt_device *again = NULL;
        int reopened = devrt_device_open(DEVRT_BACKEND_HSA, 0, NULL, &again);
        printf("open %d after the fault: %s: %s\n", attempt, devrt_status_string(reopened),
               reopened ? devrt_last_error() : "");
        CHECK(reopened == DEVRT_ERROR_DEVICE_LOST &&
                  strstr(devrt_last_error(), "only a new process can use the GPU") &&
                  strstr(devrt_last_error(), "0xdead0000"),
              "open %d after the fault: status %d (%s): %s", attempt, reopened,
              devrt_status_string(reopened), devrt_last_error());
        if (reopened == DEVRT_SUCCESS)
            devrt_device_close(again);
    }
}

/*
 * A fault in devrt's launch with another user's handler registered first: ROCr calls both,
 * devrt's claims it (the launch reports the device lost, the process goes on), and the other
 * is called once. Its control ($DEVRT_HSASIM_PLANT=one_handler) is a runtime that keeps one
 * handler: devrt's is refused, no one claims the fault, and the process aborts.
 */
static void test_two_handlers(void)
{
    inject(DEVRT_HSASIM_MEMORY_FAULT, 1);
    uint64_t id = 0;
    struct devrt_launch_report report;
    int status = launch_mark(4, &id, NULL);
    if (status == DEVRT_SUCCESS)
        status = devrt_launch_wait(device, id, &report);
    printf("the faulting launch: %s; the test's handler called %d time%s\n",
           devrt_status_string(status), own_handler_calls, own_handler_calls == 1 ? "" : "s");
    CHECK(status == DEVRT_ERROR_DEVICE_LOST && strstr(report.text, "GPU memory fault"),
          "the faulting launch: %s (%s)", devrt_status_string(status), devrt_last_error());
    CHECK(own_handler_calls == 1, "the test's handler was called %d times, expected once",
          own_handler_calls);
}

/* A queue error with two launches in flight (CONTROL: none): both fail, the next works. */
static void test_queue_error(bool control)
{
    devrt_stream *a, *b;
    CHECK(devrt_stream_create(device, &a) == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(devrt_stream_create(device, &b) == DEVRT_SUCCESS, "%s", devrt_last_error());
    if (!control)
        inject(DEVRT_HSASIM_QUEUE_ERROR, 1);
    uint64_t first, second;
    CHECK(launch_mark(4, &first, a) == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(launch_mark(4, &second, b) == DEVRT_SUCCESS, "%s", devrt_last_error());
    int s1 = devrt_launch_wait(device, first, NULL);
    int s2 = devrt_launch_wait(device, second, NULL);
    devrt_stream_destroy(a);
    devrt_stream_destroy(b);
    int expected = control ? DEVRT_SUCCESS : DEVRT_ERROR_LAUNCH;
    CHECK(s1 == expected, "the first launch: %s", devrt_status_string(s1));
    CHECK(s2 == expected, "the second launch: %s", devrt_status_string(s2));
    check_usable("a queue error");
}

/* The device's interrupts dropped (CONTROL: delivered): every request is still served. */
static void test_dropped_interrupts(bool control)
{
    ((devrt_hsasim_drop_interrupts_fn *)double_function(DEVRT_HSASIM_DROP_INTERRUPTS))(!control);
    struct harness_sink sink = {0};
    devrt_module_set_output_callback(module, harness_sink_append, &sink);
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    int status = launch_spin(0, NULL, NULL);
    CHECK(status == DEVRT_SUCCESS, "%s", devrt_last_error());
    long lines = 0;
    for (const char *at = sink.data; at && (at = strstr(at, "before the spin")); ++at)
        lines++;
    CHECK(lines == 4, "%ld lines of 4", lines);
    free(sink.data);
}

/* The loader refuses the code object: the message names the step and the HSA status. */
static void test_loader(void)
{
    inject(DEVRT_HSASIM_LOADER, 1);
    devrt_module *other = NULL;
    int status = harness_load(device, image, &other);
    CHECK(status == DEVRT_ERROR_IMAGE, "status %s", devrt_status_string(status));
    CHECK(strstr(devrt_last_error(), "loading the code object") &&
              strstr(devrt_last_error(), "HSA_STATUS_ERROR_INVALID_CODE_OBJECT"),
          "message: %s", devrt_last_error());
    CHECK(harness_load(device, image, &other) == DEVRT_SUCCESS, "the next load: %s",
          devrt_last_error());
    devrt_module_unload(other);
}

/* A pool allocation, or a grant of access, fails: a clear error, and the next one works. */
static void test_allocation(enum devrt_hsasim_fault kind)
{
    inject(kind, 1);
    void *p = devrt_mem_alloc(device, 100);
    CHECK(p == NULL, "the allocation did not fail");
    CHECK(strstr(devrt_last_error(), "100 bytes"), "message: %s", devrt_last_error());
    p = devrt_mem_alloc(device, 100);
    CHECK(p != NULL, "the next allocation: %s", devrt_last_error());
    devrt_mem_free(device, p);
    check_usable("a failed allocation");
}

/*
 * Kernel arguments come from memory granted to the GPU once: no grant per launch (CONTROL:
 * host allocations, each granted, show the count counts).
 */
static void test_kernarg_grants(bool control)
{
    enum { LAUNCHES = 50 };
    check_usable("the first launch");
    uint64_t grants = count("grants");
    void *blocks[LAUNCHES] = {0};
    for (int i = 0; i < LAUNCHES; ++i) {
        if (control)
            blocks[i] = devrt_mem_alloc(device, 64);
        else
            CHECK(launch_mark(1, NULL, NULL) == DEVRT_SUCCESS, "%s", devrt_last_error());
    }
    uint64_t more = count("grants") - grants;
    for (int i = 0; i < LAUNCHES; ++i)
        devrt_mem_free(device, blocks[i]);
    CHECK(more < 4, "%" PRIu64 " grants of access for %d %s", more, LAUNCHES,
          control ? "allocations" : "launches");
}

/*
 * More launches in flight than the kernel argument ring has slots: the rest allocate and
 * grant their own, and every launch runs.
 */
static void test_kernarg_overflow(void)
{
    enum { LAUNCHES = 300 };
    devrt_stream *stream;
    CHECK(devrt_stream_create(device, &stream) == DEVRT_SUCCESS, "%s", devrt_last_error());
    uint64_t grants = count("grants");
    uint32_t before = __atomic_load_n(&words[3], __ATOMIC_ACQUIRE);
    static uint64_t ids[LAUNCHES];
    for (int i = 0; i < LAUNCHES; ++i)
        CHECK(launch_mark(1, &ids[i], stream) == DEVRT_SUCCESS, "%s", devrt_last_error());
    for (int i = 0; i < LAUNCHES; ++i)
        CHECK(devrt_launch_wait(device, ids[i], NULL) == DEVRT_SUCCESS, "%s", devrt_last_error());
    devrt_stream_destroy(stream);
    CHECK(words[3] - before == LAUNCHES, "%u lanes of %d ran", words[3] - before, LAUNCHES);
    CHECK(count("grants") - grants >= LAUNCHES - 256,
          "%" PRIu64 " grants for launches past the ring", count("grants") - grants);
}

/*
 * Opening fails cleanly: a GPU past the last ($DEVRT_HSASIM_GPUS lists 1 or 2), the kernel
 * argument ring's allocation or its grant refused, a missing code object; the open after
 * them works.
 */
static void test_open_failures(void)
{
    devrt_module_unload(module);
    devrt_device_close(device);
    module = NULL;
    device = NULL;
    devrt_device *other = NULL;
    const char *listed = getenv("DEVRT_HSASIM_GPUS");
    int gpus = listed && !strcmp(listed, "2") ? 2 : 1;
    char past[64];
    snprintf(past, sizeof past, "no AMD GPU %d (found %d)", gpus, gpus);
    int status = devrt_device_open(DEVRT_BACKEND_HSA, gpus, NULL, &other);
    CHECK(status == DEVRT_ERROR_NO_DEVICE && strstr(devrt_last_error(), past),
          "a GPU past the last: %s", devrt_last_error());
    if (status == DEVRT_SUCCESS)
        devrt_device_close(other);
    static const struct {
        enum devrt_hsasim_fault kind;
        const char *message;
    } refused[] = {{DEVRT_HSASIM_ALLOCATION, "the kernel argument memory"},
                   {DEVRT_HSASIM_ACCESS, "the kernel argument memory"}};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; ++i) {
        /* The third of the open's allocations and grants: the doorbell, staging, the ring. */
        inject(refused[i].kind, 3);
        status = devrt_device_open(DEVRT_BACKEND_HSA, 0, NULL, &other);
        CHECK(status == DEVRT_ERROR_BACKEND && strstr(devrt_last_error(), refused[i].message),
              "open with fault %d: %s", (int)refused[i].kind, devrt_last_error());
        inject(refused[i].kind, 0);
    }
    CHECK(open_device(0) == 0, "the open after: %s", devrt_last_error());
    devrt_module *missing = NULL;
    CHECK(devrt_module_load(device, "no-such-code-object.hsaco", &missing) == DEVRT_ERROR_IMAGE,
          "a missing code object: %s", devrt_last_error());
    check_usable("failed opens");
}

/*
 * The module is unloaded while its kernel runs on past its timeout: its code and state must
 * not go from under it (the double faults the GPU if they do). The device works on after.
 */
static void test_unload_runaway(void)
{
    __atomic_store_n(&words[0], 0u, __ATOMIC_RELEASE);
    int status = launch_spin(50000000, NULL, NULL);
    CHECK(status == DEVRT_ERROR_TIMEOUT, "the spin: %s", devrt_last_error());
    /* A launch of another module waits behind the spin on the queue: it ends with it. */
    devrt_module *other = NULL;
    devrt_stream *stream = NULL;
    uint64_t behind = 0;
    CHECK(harness_load(device, image, &other) == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(devrt_stream_create(device, &stream) == DEVRT_SUCCESS, "%s", devrt_last_error());
    const struct devrt_launch_config one = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    struct devrt_arg mark_args[] = {DEVRT_ARG_PTR(&words[3])};
    CHECK(other && devrt_launch_async(other, "mark", &one, mark_args, 1, stream, &behind) ==
                       DEVRT_SUCCESS,
          "%s", devrt_last_error());
    devrt_module_unload(module);
    module = NULL;
    status = devrt_launch_wait(device, behind, NULL);
    CHECK(status == DEVRT_ERROR_LAUNCH && strstr(devrt_last_error(), "stopped with its queue"),
          "the launch behind the spin: %s (%s)", devrt_status_string(status), devrt_last_error());
    devrt_stream_destroy(stream);
    devrt_module_unload(other);
    CHECK(harness_load(device, image, &module) == DEVRT_SUCCESS, "a load after: %s",
          devrt_last_error());
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE); /* the spin ends */
    if (module)
        check_usable("the unload of a module under a runaway");
}

/*
 * Five modules unloaded under a runaway each retire a queue (devrt stops the runaway with
 * its queue); a retired queue is destroyed once its launches are released, as ROCr keeps
 * an inactive queue's scratch until then: one queue lives at the end, the current one.
 */
static void test_retired_queues(void)
{
    for (int round = 0; round < 5; ++round) {
        __atomic_store_n(&words[0], 0u, __ATOMIC_RELEASE);
        int status = launch_spin(50000000, NULL, NULL);
        CHECK(status == DEVRT_ERROR_TIMEOUT, "round %d's spin: %s", round, devrt_last_error());
        devrt_module_unload(module);
        module = NULL;
        __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
        CHECK(harness_load(device, image, &module) == DEVRT_SUCCESS, "a load: %s",
              devrt_last_error());
        if (!module)
            return;
    }
    uint64_t live = count("queues");
    printf("after five unloads under runaways: %llu queue%s live\n", (unsigned long long)live,
           live == 1 ? "" : "s");
    CHECK(live == 1, "%llu queues live, expected the current one", (unsigned long long)live);
    check_usable("five unloads under runaways");
}

/* A second launch of the module while the first one's kernel runs (its report untaken). */
static void *launch_second(void *unused)
{
    (void)unused;
    uint64_t id = 0;
    int status = launch_mark(1, &id, NULL);
    if (status == DEVRT_SUCCESS)
        status = devrt_launch_wait(device, id, NULL);
    return (void *)(intptr_t)status;
}

/* A launch of another module, counted in *(int *)DONE once it is queued. */
static void *launch_other(void *done)
{
    devrt_module *other = NULL;
    int status = harness_load(device, image, &other);
    uint64_t id = 0;
    const struct devrt_launch_config one = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[3])};
    if (status == DEVRT_SUCCESS)
        status = devrt_launch_async(other, "mark", &one, args, 1, NULL, &id);
    __atomic_store_n((int *)done, status == DEVRT_SUCCESS ? 1 : -1, __ATOMIC_RELEASE);
    if (status == DEVRT_SUCCESS)
        status = devrt_launch_wait(device, id, NULL);
    if (other)
        devrt_module_unload(other);
    return (void *)(intptr_t)status;
}

/*
 * A launch that must wait for its module's running kernel (it needs a record of its own)
 * holds up no other launch of the device meanwhile: another module's launch is queued while
 * the spin still runs. Before the fix the wait held launch.c's lock, and the other launch
 * waited for the spin's end. Bounded: after 10 s the spin is ended and the test fails.
 */
static void test_launch_lock(void)
{
    __atomic_store_n(&words[0], 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&words[2], 0u, __ATOMIC_RELEASE);
    uint64_t spin = 0;
    CHECK(launch_spin(0, NULL, &spin) == DEVRT_SUCCESS, "%s", devrt_last_error());
    for (int i = 0; i < 10000 && !__atomic_load_n(&words[2], __ATOMIC_ACQUIRE); ++i)
        usleep(1000);
    CHECK(__atomic_load_n(&words[2], __ATOMIC_ACQUIRE), "the spin did not start in 10 s");
    pthread_t second, other;
    int queued = 0;
    devrt_faults_set(device, &(struct devrt_fault_settings){.count_launch_events = true});
    CHECK(pthread_create(&second, NULL, launch_second, NULL) == 0, "no thread");
    /* Until the second launch waits for the spin (held, the launches' lock let go). */
    struct devrt_fault_stats events = {0};
    for (int i = 0; i < 10000 && !events.launches_held; ++i) {
        devrt_faults_get(device, &events);
        usleep(1000);
    }
    CHECK(events.launches_held, "could not reach the condition: the second launch was not "
                                "held within 10 s");
    CHECK(pthread_create(&other, NULL, launch_other, &queued) == 0, "no thread");
    for (int i = 0; i < 10000 && !__atomic_load_n(&queued, __ATOMIC_ACQUIRE); ++i)
        usleep(1000);
    int seen = __atomic_load_n(&queued, __ATOMIC_ACQUIRE);
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE); /* the spin ends */
    void *second_status, *other_status;
    pthread_join(second, &second_status);
    pthread_join(other, &other_status);
    CHECK(devrt_launch_wait(device, spin, NULL) == DEVRT_SUCCESS, "the spin: %s",
          devrt_last_error());
    CHECK(seen == 1, "another module's launch was %s while the spin ran",
          seen ? "refused" : "held up for 10 s");
    CHECK((intptr_t)second_status == DEVRT_SUCCESS && (intptr_t)other_status == DEVRT_SUCCESS,
          "the launches after the spin: %s", devrt_last_error());
    printf("another module's launch was queued while a launch waited for the spin\n");
}

/*
 * Two NUMA nodes, the GPU attached to node $DEVRT_HSASIM_NEAREST_CPU: the host memory the
 * open allocated (the kernel argument ring, the staging buffer) is that node's, whichever
 * CPU agent ROCr lists first (node 0's).
 */
static void test_nearest_cpu(void)
{
    const char *nearest = getenv("DEVRT_HSASIM_NEAREST_CPU");
    uint64_t node1 = count("node1_allocations");
    printf("%" PRIu64 " of %" PRIu64 " allocations from node 1's CPU, the GPU near node %s\n",
           node1, count("allocations"), nearest ? nearest : "?");
    if (nearest && !strcmp(nearest, "1"))
        CHECK(node1 >= 2, "host memory from node 0's CPU, not from node 1's, nearest the GPU");
    else
        CHECK(node1 == 0, "host memory from node 1's CPU, not from node 0's, nearest the GPU");
}

/* A fault no launch of devrt's caused: not devrt's to claim (the process ends, as ROCr
   ends it); CONTROL: the same fault while a launch of devrt's runs is claimed. */
static void test_foreign_fault(bool control)
{
    devrt_hsasim_foreign_fault_fn *fault = double_function(DEVRT_HSASIM_FOREIGN_FAULT);
    if (!control) {
        fault();
        printf("the process lives on after a fault devrt did not cause\n");
        return;
    }
    inject(DEVRT_HSASIM_MEMORY_FAULT, 1);
    int status = launch_mark(1, NULL, NULL);
    CHECK(status == DEVRT_ERROR_DEVICE_LOST, "%s", devrt_last_error());
}

/*
 * Launches of two modules on one stream run in the stream's order: mark of a second module,
 * queued behind the spin on the spin's stream, is held by its packet's barrier bit until
 * the spin ends (the double counts the hold). Its control ($DEVRT_HSASIM_PLANT=clear_barrier:
 * the double ignores the bit, as if devrt had not set it) runs mark while the spin runs.
 */
static void test_stream_order(void)
{
    devrt_module *other = NULL;
    devrt_stream *stream = NULL;
    CHECK(harness_load(device, image, &other) == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(devrt_stream_create(device, &stream) == DEVRT_SUCCESS, "%s", devrt_last_error());
    if (!other || !stream)
        return;
    __atomic_store_n(&words[0], 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&words[2], 0u, __ATOMIC_RELEASE);
    uint32_t marked = __atomic_load_n(&words[3], __ATOMIC_ACQUIRE);
    uint64_t spin = 0, mark = 0;
    CHECK(launch_spin(0, stream, &spin) == DEVRT_SUCCESS, "the spin: %s", devrt_last_error());
    WAIT_FOR(__atomic_load_n(&words[2], __ATOMIC_ACQUIRE) == 4,
             "the spin's lanes did not all print");
    uint64_t holds = count("barrier_holds");
    const struct devrt_launch_config one = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[3])};
    CHECK(devrt_launch_async(other, "mark", &one, args, 1, stream, &mark) == DEVRT_SUCCESS,
          "mark: %s", devrt_last_error());
    /* Either the queue holds mark behind the spin, or mark runs. */
    WAIT_FOR(count("barrier_holds") > holds ||
                 __atomic_load_n(&words[3], __ATOMIC_ACQUIRE) != marked,
             "mark was neither held nor run");
    bool ran_during = __atomic_load_n(&words[3], __ATOMIC_ACQUIRE) != marked;
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE); /* the spin ends */
    CHECK(devrt_launch_wait(device, spin, NULL) == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(devrt_launch_wait(device, mark, NULL) == DEVRT_SUCCESS, "%s", devrt_last_error());
    printf("mark of another module, behind the spin on its stream: %s\n",
           ran_during ? "ran while the spin ran" : "held until the spin ended");
    CHECK(!ran_during, "mark of another module ran while the spin before it on its stream ran");
    CHECK(words[3] == marked + 1, "mark ran %u times, expected once", words[3] - marked);
    devrt_stream_destroy(stream);
    devrt_module_unload(other);
}

/* An allocation of another user of the runtime: the GPU's memory, from the double directly. */
static hsa_status_t first_gpu_pool(hsa_amd_memory_pool_t pool, void *data)
{
    *(hsa_amd_memory_pool_t *)data = pool;
    return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t gpu_agent(hsa_agent_t agent, void *data)
{
    __typeof__(hsa_agent_get_info) *info = double_function("hsa_agent_get_info");
    hsa_device_type_t type;
    if (info(agent, HSA_AGENT_INFO_DEVICE, &type) != HSA_STATUS_SUCCESS ||
        type != HSA_DEVICE_TYPE_GPU)
        return HSA_STATUS_SUCCESS;
    *(hsa_agent_t *)data = agent;
    return HSA_STATUS_INFO_BREAK;
}

static void *foreign_allocation(size_t size)
{
    hsa_agent_t gpu = {0};
    hsa_amd_memory_pool_t pool = {0};
    void *ptr = NULL;
    ((__typeof__(hsa_iterate_agents) *)double_function("hsa_iterate_agents"))(gpu_agent, &gpu);
    ((__typeof__(hsa_amd_agent_iterate_memory_pools) *)double_function(
        "hsa_amd_agent_iterate_memory_pools"))(gpu, first_gpu_pool, &pool);
    if (((__typeof__(hsa_amd_memory_pool_allocate) *)double_function(
            "hsa_amd_memory_pool_allocate"))(pool, size, 0, &ptr) != HSA_STATUS_SUCCESS) {
        fprintf(stderr, "FAIL: no allocation of the test's own\n");
        exit(1);
    }
    return ptr;
}

/*
 * A fault at an address in another user's allocation while devrt's spin runs is that
 * user's (a HIP kernel of the same process): devrt leaves it to ROCr, which ends the process
 * (exit status 134, the double's "claimed by no handler"). The control faults at devrt's own
 * memory (the words the spin reads): devrt claims it, and the spin's launch reports where.
 */
static void test_fault_in_flight(bool control)
{
    devrt_hsasim_fault_at_fn *fault_at = double_function(DEVRT_HSASIM_FAULT_AT);
    char *theirs = foreign_allocation(4096);
    uint64_t address = control ? (uint64_t)(uintptr_t)&words[2] : (uint64_t)(uintptr_t)theirs + 64;
    uint64_t id = start_spin();
    fault_at(0, address);
    printf("the fault at 0x%" PRIx64 " was claimed\n", address);
    CHECK(control, "devrt claimed a fault at another user's allocation (0x%" PRIx64 ")", address);
    struct devrt_launch_report report;
    int status = devrt_launch_wait(device, id, &report);
    release_spin();
    CHECK(status == DEVRT_ERROR_DEVICE_LOST && strstr(report.text, "in devrt's memory"),
          "the spin: %s; its report: %s", devrt_status_string(status), report.text);
}

/*
 * After devrt's fault on GPU 0, another user's kernel faults GPU 1, unreported; then devrt
 * loads a module there, whose state must be zeroed. ROCr's fill would wait forever for its
 * blit kernel on the evicted GPU (the double ends the process saying so); devrt's copies
 * find the GPU stopped, and the load says the device is lost.
 */
static void test_second_gpu_load(void)
{
    devrt_hsasim_fault_at_fn *fault_at = double_function(DEVRT_HSASIM_FAULT_AT);
    devrt_device *first = device;
    devrt_module *first_module = module;
    uint64_t id = start_spin();
    fault_at(0, (uint64_t)(uintptr_t)&words[2]);
    CHECK(devrt_launch_wait(device, id, NULL) == DEVRT_ERROR_DEVICE_LOST, "the spin on GPU 0");
    release_spin();
    module = NULL;
    device = NULL;
    if (open_device(1) != 0) {
        CHECK(false, "GPU 1 did not open");
        return;
    }
    fault_at(1, 0xf0e1d2c3b4a50000ull);
    devrt_module *other = NULL;
    int loaded = harness_load(device, image, &other);
    printf("a load on GPU 1 after its unreported fault: %s: %s\n", devrt_status_string(loaded),
           devrt_last_error());
    CHECK(loaded == DEVRT_ERROR_DEVICE_LOST && strstr(devrt_last_error(), "did not report"),
          "the load: %s: %s", devrt_status_string(loaded), devrt_last_error());
    if (other)
        devrt_module_unload(other);
    devrt_module_unload(first_module);
    devrt_device_close(first);
}

/*
 * A fault while a kernel holds a port with its line half sent (CONTROL: no fault): the launch
 * is lost, the kernel's waves are preempted where they are (the double stops its lanes, as the
 * eviction does), the close returns, and the half line is not written as if it were whole.
 * Without the fault the line comes whole once the kernel is released.
 */
static void test_fault_holding_port(bool control)
{
    devrt_hsasim_fault_at_fn *fault_at = double_function(DEVRT_HSASIM_FAULT_AT);
    struct harness_sink sink = {0};
    devrt_module_set_output_callback(module, harness_sink_append, &sink);
    __atomic_store_n(&words[0], 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&words[2], 0u, __ATOMIC_RELEASE);
    const struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[0]), DEVRT_ARG_PTR(&words[2])};
    uint64_t id = 0;
    CHECK(devrt_launch_async(module, "spin_holding_port", &config, args, 2, NULL, &id) ==
              DEVRT_SUCCESS,
          "the launch: %s", devrt_last_error());
    WAIT_FOR(__atomic_load_n(&words[2], __ATOMIC_ACQUIRE) == 1, "the kernel did not take its port");
    if (control)
        __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    else
        fault_at(0, (uint64_t)(uintptr_t)&words[2]);
    struct devrt_launch_report report;
    int status = devrt_launch_wait(device, id, &report);
    printf("the kernel holding a port: %s: %s\n", devrt_status_string(status), report.text);
    if (!control) {
        CHECK(status == DEVRT_ERROR_DEVICE_LOST &&
                  strstr(report.text, "kernel spin_holding_port (launch"),
              "the launch: %s: %s", devrt_status_string(status), report.text);
        WAIT_FOR(count("running") == 0, "the evicted kernel's lanes did not stop");
    }
    devrt_module_unload(module);
    module = NULL;
    devrt_device_close(device);
    device = NULL;
    printf("output: [%s]\n", sink.data ? sink.data : "");
    bool whole = sink.data && strstr(sink.data, "and the rest after it: lane 0\n");
    if (control)
        CHECK(status == DEVRT_SUCCESS && whole, "the launch: %s; the line %s",
              devrt_status_string(status), whole ? "whole" : "not whole");
    else
        CHECK(!whole, "the half-sent line was written whole: %s", sink.data);
    free(sink.data);
}

/* What a thread that queued or loaded while the runaway ran saw. */
struct behind_runaway {
    int status;
    uint64_t id;
    devrt_module *loaded;
    bool returned; /* atomic */
};

static void *launch_behind_runaway(void *arg)
{
    struct behind_runaway *job = arg;
    job->status = launch_mark(1, &job->id, NULL);
    __atomic_store_n(&job->returned, true, __ATOMIC_RELEASE);
    return NULL;
}

static void *load_behind_runaway(void *arg)
{
    struct behind_runaway *job = arg;
    job->status = harness_load(device, image, &job->loaded);
    __atomic_store_n(&job->returned, true, __ATOMIC_RELEASE);
    return NULL;
}

/*
 * ROCr copies with blit kernels (HSA_ENABLE_SDMA=0 here, as on an APU), and the spin's four
 * waves hold the GPU's four wave slots (DEVRT_HSASIM_WAVE_SLOTS=4) after its timeout. A
 * launch of the module then needs the state pointed at a record of its own: the launch
 * returns while the runaway still fills the GPU, its copy waiting in the queue, and runs
 * once the spin ends. (devrt waited for that copy under its launch lock before: the launch
 * never returned.) CONTROL: a module's load, whose copies devrt waits for, waits for the
 * spin to end, as any copy behind a full GPU does there.
 */
static void test_blit_behind_runaway(bool control)
{
    __atomic_store_n(&words[0], 0u, __ATOMIC_RELEASE);
    uint32_t marked = __atomic_load_n(&words[3], __ATOMIC_ACQUIRE);
    int status = launch_spin(50000000, NULL, NULL);
    CHECK(status == DEVRT_ERROR_TIMEOUT, "the spin: %s", devrt_last_error());
    struct behind_runaway job = {0};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, control ? load_behind_runaway : launch_behind_runaway,
                         &job) == 0,
          "no thread");
    WAIT_FOR(count("blit_waits") >= 1, "no copy waited for a wave slot");
    if (control) {
        CHECK(!__atomic_load_n(&job.returned, __ATOMIC_ACQUIRE),
              "a load returned while its copy waited for a wave slot");
    } else {
        /* The bound is the failsafe of the hang this test is about. */
        bool returned = false;
        for (int i = 0; i < 2000 && !(returned = __atomic_load_n(&job.returned, __ATOMIC_ACQUIRE));
             ++i)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        CHECK(returned && job.status == DEVRT_SUCCESS,
              "the launch after the runaway %s while its copy waited for a wave slot: %s",
              returned ? "failed" : "did not return in 20 s", devrt_last_error());
    }
    CHECK(count("running") >= 1, "the spin ended before its release");
    release_spin();
    pthread_join(thread, NULL);
    CHECK(job.status == DEVRT_SUCCESS, "after the spin: %s", devrt_last_error());
    if (control) {
        devrt_module_unload(job.loaded);
        return;
    }
    status = devrt_launch_wait(device, job.id, NULL);
    CHECK(status == DEVRT_SUCCESS, "the launch after the runaway: %s", devrt_last_error());
    CHECK(__atomic_load_n(&words[3], __ATOMIC_ACQUIRE) - marked == 1,
          "the launch after the runaway ran %u lanes of 1", words[3] - marked);
}

/*
 * Host memory comes from ROCr's plain fine-grained pool and kernel arguments from its kernel
 * argument pool, where only the ring of kernel arguments is allocated. Its control lists
 * ROCm 5's pools ($DEVRT_HSASIM_PLANT=rocm5_pools), whose one fine-grained pool is the kernel
 * argument pool: devrt takes its host memory there too, and the kernel still runs.
 */
static void test_pools(void)
{
    check_usable("the open");
    uint64_t in_kernarg = count("kernarg_allocations");
    printf("%" PRIu64 " allocations in the kernel argument pool\n", in_kernarg);
    CHECK(in_kernarg == 1,
          "%" PRIu64 " allocations in the kernel argument pool, expected 1 (the ring)", in_kernarg);
}

/* Releases the spin on the words it reads once N probe packets completed. */
static void *release_after_probes(void *n)
{
    WAIT_FOR(count("barriers") >= (uint64_t)(uintptr_t)n, "devrt sent no probe packets");
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    return NULL;
}

/*
 * A memory fault on GPU 1 after one on GPU 0: the runtime reports one fault a process
 * (ROCr's VMFaultHandler), so GPU 1's goes unreported and its queues stay evicted. devrt's
 * wait for its spin there ends all the same: the device is lost, and a later open of GPU 1 is
 * refused. The control makes no second fault: the spin on GPU 1, waited for across three
 * probes of the GPU, ends when released, and the GPU stays usable.
 */
static void test_second_gpu_fault(bool control)
{
    devrt_hsasim_fault_at_fn *fault_at = double_function(DEVRT_HSASIM_FAULT_AT);
    /* GPU 0 stays open, lost: closing the last device would end the runtime, and a new one
       reports a fault again. */
    devrt_device *first = device;
    devrt_module *first_module = module;
    for (int gpu = 0; gpu < 2; ++gpu) {
        if (gpu == 1) {
            module = NULL;
            device = NULL;
            if (open_device(1) != 0) {
                CHECK(false, "GPU 1 did not open");
                return;
            }
        }
        uint64_t id = start_spin();
        pthread_t releaser;
        bool releasing = gpu == 1 && control;
        if (releasing)
            pthread_create(&releaser, NULL, release_after_probes, (void *)(uintptr_t)3);
        else
            fault_at((unsigned)gpu, (uint64_t)(uintptr_t)&words[2]);
        struct devrt_launch_report report;
        int status = devrt_launch_wait(device, id, &report);
        printf("GPU %d: the spin: %s: %s\n", gpu, devrt_status_string(status), report.text);
        if (releasing) {
            pthread_join(releaser, NULL);
            CHECK(status == DEVRT_SUCCESS, "the spin on GPU 1: %s", devrt_last_error());
            check_usable("three probes");
            devrt_module *other = NULL;
            CHECK(harness_load(device, image, &other) == DEVRT_SUCCESS, "a load on GPU 1: %s",
                  devrt_last_error());
            if (other)
                devrt_module_unload(other);
            devrt_module_unload(first_module);
            devrt_device_close(first);
            return;
        }
        release_spin();
        CHECK(status == DEVRT_ERROR_DEVICE_LOST, "the spin on GPU %d: %s", gpu,
              devrt_status_string(status));
        CHECK(strstr(report.text, gpu == 0 ? "in devrt's memory" : "did not report"),
              "its report: %s", report.text);
    }
    devrt_module_unload(module);
    devrt_device_close(device);
    module = NULL;
    device = NULL;
    devrt_device *again = NULL;
    int reopened = devrt_device_open(DEVRT_BACKEND_HSA, 1, NULL, &again);
    devrt_module_unload(first_module);
    devrt_device_close(first);
    CHECK(reopened == DEVRT_ERROR_DEVICE_LOST &&
              strstr(devrt_last_error(), "only a new process can use the GPU"),
          "open GPU 1 again: %s: %s", devrt_status_string(reopened), devrt_last_error());
    if (reopened == DEVRT_SUCCESS)
        devrt_device_close(again);
}

/* An allocation, then a grant of access, refused by the runtime. */
static void test_allocation_refused(void)
{
    test_allocation(DEVRT_HSASIM_ALLOCATION);
}

static void test_access_refused(void)
{
    test_allocation(DEVRT_HSASIM_ACCESS);
}

/*
 * The runtime refuses a copy: the one that points the state at a launch's own record (the
 * second of two launches in flight needs one) fails that launch, saying so, and the one
 * that fills a loading module's state fails the load; the launch in flight, the next
 * launch and the next load go on.
 */
static void test_copy_refused(void)
{
    uint64_t first = 0, second = 0;
    CHECK(launch_mark(1, &first, NULL) == DEVRT_SUCCESS, "%s", devrt_last_error());
    inject(DEVRT_HSASIM_COPY, 1);
    int status = launch_mark(1, &second, NULL);
    CHECK(status == DEVRT_ERROR_BACKEND && strstr(devrt_last_error(), "cannot point the state"),
          "the launch whose copy was refused: %s (%s)", devrt_status_string(status),
          devrt_last_error());
    CHECK(devrt_launch_wait(device, first, NULL) == DEVRT_SUCCESS, "the launch in flight: %s",
          devrt_last_error());
    check_usable("a refused copy of the state pointer");
    devrt_module *other = NULL;
    inject(DEVRT_HSASIM_COPY, 1);
    CHECK(harness_load(device, image, &other) != DEVRT_SUCCESS, "a load whose copy was refused");
    CHECK(harness_load(device, image, &other) == DEVRT_SUCCESS, "the next load: %s",
          devrt_last_error());
    devrt_module_unload(other);
}

/*
 * mark built at -O0 with a call of ockl's hostcall and stripped of ockl's symbols
 * ($DEVRT_TEST_OCKL_IMAGE) is refused at launch, naming the load that reads the hostcall
 * buffer, where 0 would send ockl through a null pointer; CONTROL: the same kernel without
 * the call ($DEVRT_TEST_NO_OCKL_IMAGE) runs, its buffer 0.
 */
static void test_ockl_hostcall(bool control)
{
    const char *path = getenv(control ? "DEVRT_TEST_NO_OCKL_IMAGE" : "DEVRT_TEST_OCKL_IMAGE");
    devrt_module *other = NULL;
    CHECK(path && harness_load(device, path, &other) == DEVRT_SUCCESS, "loading %s: %s",
          path ? path : "(no image given)", devrt_last_error());
    if (!other)
        return;
    uint32_t *marked = devrt_mem_alloc(device, 2 * sizeof *marked);
    CHECK(marked != NULL, "%s", devrt_last_error());
    if (!marked) {
        devrt_module_unload(other);
        return;
    }
    marked[0] = marked[1] = 0;
    const struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(marked)};
    int status = devrt_launch(other, "mark", &config, args, 1, NULL);
    uint32_t seen[2] = {marked[0], marked[1]};
    if (control)
        CHECK(status == DEVRT_SUCCESS && seen[0] == 1, "without ockl: %s (%s), marked %u",
              devrt_status_string(status), devrt_last_error(), seen[0]);
    else
        CHECK(status == DEVRT_ERROR_LAUNCH && seen[0] == 0 &&
                  strstr(devrt_last_error(), "hidden_hostcall_buffer") &&
                  strstr(devrt_last_error(), "its code may read it: s_load_dwordx2") &&
                  strstr(devrt_last_error(), "devrt does not serve ockl's hostcall"),
              "with ockl: %s (%s), marked %u", devrt_status_string(status), devrt_last_error(),
              seen[0]);
    devrt_mem_free(device, marked);
    devrt_module_unload(other);
    check_usable("a kernel refused for ockl's hostcall");
}

/* Each test: without a control (plain), or with one, NAME_control (checked). */
static const struct {
    const char *name;
    void (*plain)(void);
    void (*checked)(bool control);
} tests[] = {
    {"memory_fault", NULL, test_memory_fault},
    {"queue_error", NULL, test_queue_error},
    {"dropped_interrupts", NULL, test_dropped_interrupts},
    {"loader", test_loader, NULL},
    {"kernarg_overflow", test_kernarg_overflow, NULL},
    {"open_failures", test_open_failures, NULL},
    {"allocation", test_allocation_refused, NULL},
    {"access", test_access_refused, NULL},
    {"copy_refused", test_copy_refused, NULL},
    {"kernarg_grants", NULL, test_kernarg_grants},
    {"unload_runaway", test_unload_runaway, NULL},
    {"launch_lock", test_launch_lock, NULL},
    {"nearest_cpu", test_nearest_cpu, NULL},
    {"nearest_cpu_control", test_nearest_cpu, NULL},
    {"foreign_fault", NULL, test_foreign_fault},
    {"two_handlers", test_two_handlers, NULL},
    {"fault_in_flight", NULL, test_fault_in_flight},
    {"stream_order", test_stream_order, NULL},
    {"retired_queues", test_retired_queues, NULL},
    {"second_gpu_fault", NULL, test_second_gpu_fault},
    {"second_gpu_load", test_second_gpu_load, NULL},
    {"fault_holding_port", NULL, test_fault_holding_port},
    {"pools", test_pools, NULL},
    {"blit_behind_runaway", NULL, test_blit_behind_runaway},
    {"ockl_hostcall", NULL, test_ockl_hostcall},
};

int main(int argc, char **argv)
{
    size_t known = 0, length = 0;
    bool control = false;
    for (; argc == 3 && known < sizeof tests / sizeof *tests; ++known) {
        length = strlen(tests[known].name);
        if (strncmp(argv[2], tests[known].name, length))
            continue;
        control = !strcmp(argv[2] + length, "_control") && tests[known].checked;
        if (!argv[2][length] || control)
            break;
    }
    if (argc != 3 || known == sizeof tests / sizeof *tests) {
        fprintf(stderr, "usage: backend_test IMAGE TEST (tests: memory_fault, queue_error, ...)\n");
        return 2;
    }
    image = argv[1];
    const char *test = argv[2];
    if (!strcmp(test, "two_handlers"))
        register_own_handler();
    int exit_code = open_device(0);
    if (exit_code)
        return exit_code == HARNESS_SKIP ? 1 : exit_code; /* the double is always there */
    if (tests[known].plain)
        tests[known].plain();
    else
        tests[known].checked(control);
    if (device) {
        if (module)
            devrt_module_unload(module);
        devrt_device_close(device);
    }
    printf("%s: %d failure%s\n", test, failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
