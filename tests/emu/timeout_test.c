/*
 * Launch timeouts (tests/kernels/timeout.c's spin). fires: a kernel that spins until
 * released, never released in time, gets DEVRT_ERROR_TIMEOUT with the lines it printed
 * written; then the module runs the next launch. Its lanes are workgroups of one: on the
 * emulation a lane that spins with no call into devrt is never held where its wave-mates
 * could leave it behind, so a wave-mate's printf would wait for it (docs/runtime.md).
 * fires_in_wave: the same in waves of 32, where lanes are stopped inside the runtime too.
 * in_time, the control: the same kernel released before it starts, under a timeout it ends well
 * within, is not stopped. On the emulation the lanes are stopped; CUDA and HSA cannot stop a
 * kernel, so the test releases it after the timeout and the next launch waits for it
 * (docs/runtime.md, "Timeouts").
 * after: once the timeout is reported, a launch of the module on another stream still waits
 * for the kernel that runs on; after_control launches from a second module of the same
 * image instead, which nothing orders, and must see it start while the spin goes on.
 * other_stream and other_stream_control: the same, with the spin launched asynchronously on
 * a stream of its own, destroyed once its timeout is reported, so that only the module's
 * record of the runaway orders mark after it (launch.c, keep_runaway). All four
 * tell apart only on CUDA: on the emulation the spin was stopped, and the launch starts at
 * once either way; on HSA the device's one queue holds every launch behind the spin.
 * program_signal: a handler the program installed for the signal the emulation stops lanes
 * with (SIGRTMIN + 4) still gets the signals sent to the program's own threads after a
 * launch with a timeout has installed the emulation's.
 * unload_runaway: the module unloaded under its runaway spin (test_unload_runaway).
 * after_sync: no timeout; the spin launched synchronously by one thread, mark by another on
 * a stream of its own, which must wait for the spin (test_after_sync).
 * unload_while_waited: the module unloaded by one thread while another waits for its spin
 * (test_unload_while_waited).
 * server_waits: with no launch in flight the server blocks (test_server_waits), and its
 * control, the spin in flight.
 * timeout_test IMAGE fires|fires_in_wave|in_time|after|after_control|other_stream|
 * other_stream_control|program_signal|unload_runaway|after_sync|unload_while_waited|
 * free_context|raise_and_timeout|server_waits|server_waits_control [BACKEND]; exits 0 when it
 * holds, 1 when not, 77 without a device. It prints how late the timeout came, for
 * docs/reliability.md.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <devrt/abi.h>
#include <devrt/host.h>

#include "faults.h"
#include "harness.h"
#include "hsasim_control.h"

/*
 * The timeout of the launches that must run past it. Nothing is asked of the machine's
 * speed by it: what the lanes print before it and after it is counted either way.
 */
#define LANES 32u
#define TIMEOUT_NS 2000000000ull
/*
 * The timeout of the launches that must end within it (in_time, program_signal): only a
 * failsafe, far past what a released kernel takes on a loaded machine under a sanitizer.
 */
#define FAILSAFE_NS 120000000000ull
/* How long a launch that nothing holds back may take to start before the test gives up. */
#define MARK_WAIT_MS 30000u
/* On CUDA, which shows no hold, how long after_sync's mark is watched while the spin
   runs: where nothing orders it, a lane starts well within this. */
#define SYNC_WATCH_MS 1000u

static devrt_device *device;
static struct devrt_fault_stats launch_events(void);
static devrt_module *module;
/* [0] releases the spin, [1] counts the lanes that ran, [2] the lines they printed,
   [3] the lanes of mark */
static uint32_t *words;
static struct harness_sink sink;
static uint32_t block = 1; /* lanes per workgroup */

/*
 * Whole lines of lanes, at most one a lane; then the sink is emptied for the next launch.
 * ENDED: the launch ran to its end, and every lane that said it printed has its line. Past
 * a timeout, where the emulation stopped the lanes, likewise (a lane stopped after its line
 * and before its count adds one); where the kernel runs on, the lines it sent after the
 * launch returned are dropped (check_usable counts them). Returns the lines.
 */
static long check_output(bool ended)
{
    long lines = 0;
    for (const char *at = sink.data; at && *at; ++lines) {
        unsigned lane;
        int end = 0;
        if (sscanf(at, "lane %u before the spin\n%n", &lane, &end) != 1 || !end) {
            CHECK(false, "a line that no lane printed: %.40s", at);
            break;
        }
        at += end;
    }
    uint32_t printed = __atomic_load_n(&words[2], __ATOMIC_ACQUIRE);
    bool stops = devrt_device_backend(device) == DEVRT_BACKEND_EMU;
    if (ended)
        CHECK(lines == printed, "%ld lines, %u lanes printed", lines, printed);
    else if (stops)
        CHECK(lines >= printed && lines <= LANES, "%ld lines, %u lanes printed", lines, printed);
    else
        CHECK(lines <= LANES, "%ld lines of %u lanes", lines, LANES);
    free(sink.data);
    sink = (struct harness_sink){0};
    return lines;
}

/* The spin on a stream of its own, waited for: its status. */
static int launch_spin_on_stream(uint64_t timeout_ns)
{
    const struct devrt_launch_config config = {
        .grid = {LANES / block, 1, 1}, .block = {block, 1, 1}, .timeout_ns = timeout_ns};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[0]), DEVRT_ARG_PTR(&words[1]),
                               DEVRT_ARG_PTR(&words[2])};
    devrt_stream *stream;
    uint64_t id;
    __atomic_store_n(&words[2], 0u, __ATOMIC_RELAXED); /* a runaway may still count */
    int status = devrt_stream_create(device, &stream);
    if (status != DEVRT_SUCCESS)
        return status;
    status = devrt_launch_async(module, "spin", &config, args, 3, stream, &id);
    if (status == DEVRT_SUCCESS)
        status = devrt_launch_wait(device, id, NULL);
    /* Its launch is taken: the stream goes while the kernel may run on. */
    devrt_stream_destroy(stream);
    return status;
}

static int launch_spin(uint64_t timeout_ns)
{
    const struct devrt_launch_config config = {
        .grid = {LANES / block, 1, 1}, .block = {block, 1, 1}, .timeout_ns = timeout_ns};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[0]), DEVRT_ARG_PTR(&words[1]),
                               DEVRT_ARG_PTR(&words[2])};
    __atomic_store_n(&words[2], 0u, __ATOMIC_RELAXED); /* a runaway may still count */
    return devrt_launch(module, "spin", &config, args, 3, NULL);
}

/*
 * The module runs a launch to its end after whatever came before, and all of that launch's
 * output reaches the sink. DELIVERED (unless negative): the lines of the launch before,
 * which timed out, that reached the sink before it returned. Each of its lanes printed one
 * line; a line the kernel sent after that, if it ran on, was dropped: the next launch waits
 * for the kernel and takes what it sent before it reports, so the two add up to every lane.
 */
static void check_usable(uint32_t ran_before, long delivered)
{
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    /*
     * A kernel that ran on counts its lanes' lines until they pass the spin: launch_spin's
     * reset of that count must come after the last of them, or a late lane's count lands in
     * the next launch's (seen under load on the HSA double: 35 lanes printed of 32). Once a
     * lane has run it has counted its line (program order), and released, every lane runs.
     */
    while (__atomic_load_n(&words[1], __ATOMIC_ACQUIRE) < ran_before) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    int status = launch_spin(0);
    CHECK(status == DEVRT_SUCCESS, "the next launch: %s", devrt_last_error());
    CHECK(words[1] - ran_before == LANES, "the next launch ran %u lanes, expected %u",
          words[1] - ran_before, LANES);
    check_output(true);
    uint64_t dropped = devrt_module_output_dropped(module);
    bool stops = devrt_device_backend(device) == DEVRT_BACKEND_EMU;
    if (delivered >= 0 && !stops && ran_before)
        CHECK(delivered + (long)dropped == (long)LANES,
              "%ld lines before the timeout and %" PRIu64 " dropped after it, expected %u in all",
              delivered, dropped, LANES);
    else
        CHECK(dropped == 0, "%" PRIu64 " units of output dropped where no kernel ran on", dropped);
}

static struct devrt_fault_stats launch_events(void)
{
    struct devrt_fault_stats stats;
    devrt_faults_get(device, &stats);
    return stats;
}

/* A function of the test double behind DEVRT_VARIABLE's library, if it is one; else NULL. */
static void *double_function(const char *variable, const char *name)
{
    const char *path = getenv(variable);
    void *library = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    return library ? dlsym(library, name) : NULL;
}

/*
 * A count that grows when a launch waits behind another, as each backend shows it: the
 * launches devrt holds back itself (the emulation's streams, HSA's queueing while the state
 * cannot be pointed in queue order), the HSA double's packets queued behind the one it runs,
 * the fake HIP's stream waits that blocked. CUDA shows nothing (the test watches there).
 */
static uint64_t held_count(void)
{
    uint64_t held = launch_events().launches_held;
    devrt_hsasim_count_fn *hsasim = double_function("DEVRT_TEST_HSA_LIBRARY", DEVRT_HSASIM_COUNT);
    unsigned (*fake_hip)(void) = double_function("DEVRT_HIP_LIBRARY", "fake_hip_blocked_waits");
    if (hsasim)
        held += hsasim("waiting");
    if (fake_hip)
        held += fake_hip();
    return held;
}

/*
 * Waits until mark (words[3]) has started or a launch is held (held_count past HELD), or,
 * on CUDA, which shows no hold, for WATCH_MS. Returns mark's lanes; HELD_SEEN says whether
 * the hold was seen. Past MARK_WAIT_MS without either, the test fails, saying that it could
 * not reach the condition.
 */
static uint32_t watch_mark(uint64_t held, uint32_t watch_ms, bool expected, bool *held_seen)
{
    bool watch = devrt_device_backend(device) == DEVRT_BACKEND_CUDA;
    uint32_t marked = 0, waited_ms = 0;
    *held_seen = false;
    for (;;) {
        marked = __atomic_load_n(&words[3], __ATOMIC_ACQUIRE);
        *held_seen = !watch && held_count() > held;
        if (watch ? waited_ms >= watch_ms && (!expected || marked) : marked || *held_seen)
            break;
        if (waited_ms >= MARK_WAIT_MS) {
            printf("could not reach the condition: within %u ms mark neither started nor was "
                   "held\n",
                   MARK_WAIT_MS);
            failures++;
            break;
        }
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
        waited_ms += 10;
    }
    return marked;
}

static void test_fires(void)
{
    double start = harness_seconds();
    int status = launch_spin(TIMEOUT_NS);
    double seconds = harness_seconds() - start;
    printf("timeout of %.3f s: the launch returned after %.3f s\n", TIMEOUT_NS / 1e9, seconds);
    CHECK(status == DEVRT_ERROR_TIMEOUT, "status %d (%s): %s", status, devrt_status_string(status),
          devrt_last_error());
    CHECK(strstr(devrt_last_error(), "ran past its timeout"), "message: %s", devrt_last_error());
    long delivered = check_output(false);
    uint32_t ran = __atomic_load_n(&words[1], __ATOMIC_ACQUIRE);
    bool stops = devrt_device_backend(device) == DEVRT_BACKEND_EMU;
    /* Where the kernel runs on, the release lets it end before the next launch runs. */
    CHECK(ran == 0, "%u lanes got past the spin before the timeout", ran);
    check_usable(stops ? 0 : LANES, delivered);
}

/*
 * The spin runs on past its timeout (or is stopped); then one lane of mark goes on a stream
 * of its own, from this module or (control) from another. 300 ms later it must not have
 * started where it is ordered after the spin and the spin runs on, and must have where it
 * is not; released, everything ends.
 */
static void test_after(const char *image, bool control, bool spin_on_stream)
{
    bool stops = devrt_device_backend(device) == DEVRT_BACKEND_EMU;
    devrt_module *other = NULL;
    devrt_stream *stream = NULL;
    if (control && harness_load(device, image, &other) != DEVRT_SUCCESS) {
        CHECK(false, "a second module of %s: %s", image, devrt_last_error());
        return;
    }
    int status = spin_on_stream ? launch_spin_on_stream(TIMEOUT_NS) : launch_spin(TIMEOUT_NS);
    CHECK(status == DEVRT_ERROR_TIMEOUT, "status %d (%s): %s", status, devrt_status_string(status),
          devrt_last_error());
    long delivered = check_output(false);
    CHECK(devrt_stream_create(device, &stream) == DEVRT_SUCCESS, "a stream: %s",
          devrt_last_error());
    if (!stream)
        return;
    const struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[3])};
    uint64_t id = 0;
    /* Every lane of the spin has printed before mark is queued: HSA points the state at
       mark's record at once, and a line sent after that would name mark's launch. */
    for (uint32_t waited_ms = 0;
         !stops && waited_ms < MARK_WAIT_MS && __atomic_load_n(&words[2], __ATOMIC_ACQUIRE) < LANES;
         waited_ms += 10)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    uint64_t held = held_count();
    status = devrt_launch_async(control ? other : module, "mark", &config, args, 1, stream, &id);
    CHECK(status == DEVRT_SUCCESS, "mark: %s", devrt_last_error());
    /* HSA's one queue runs every module's launches in order: nothing passes the spin there. */
    bool one_queue = devrt_device_backend(device) == DEVRT_BACKEND_HSA;
    uint32_t expected = stops || (control && !one_queue) ? 1 : 0;
    /*
     * Until mark has started, or is seen held behind the spin: a launch held back then has
     * not started, however long the test waited. (On CUDA, which shows no hold, a launch
     * held back must not have started after 300 ms.)
     */
    bool held_seen;
    uint32_t marked = watch_mark(held, 300, expected, &held_seen);
    fflush(stdout);
    printf("after the timeout, the spin %s, mark of %s: %u lane%s started%s\n",
           stops ? "stopped" : "running on", control ? "another module" : "the same module", marked,
           marked == 1 ? "" : "s", held_seen ? ", and it is held" : "");
    CHECK(marked == expected, "%u lanes of mark started while the spin %s, expected %u", marked,
          stops ? "was stopped" : "ran on", expected);

    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    if (id) {
        status = devrt_launch_wait(device, id, NULL);
        CHECK(status == DEVRT_SUCCESS, "mark's wait: %s", devrt_last_error());
    }
    CHECK(words[3] == 1, "mark ran %u lanes after the release, expected 1", words[3]);
    devrt_stream_destroy(stream);
    if (other)
        devrt_module_unload(other);
    check_usable(stops ? 0 : LANES, delivered);
}

/*
 * The module is unloaded while its spin runs on past its timeout. The emulation stopped the
 * spin, HSA ends it with its queue; CUDA cannot: the unload gives it one more timeout, then
 * leaves the module's code and memory to it and says so on the report file, instead of
 * freeing them under it. Either way the unload returns, and a module loaded after it runs
 * (on CUDA once the release has ended the spin: its loads wait for the context's kernels).
 */
static void test_unload_runaway(const char *image)
{
    int status = launch_spin(TIMEOUT_NS);
    CHECK(status == DEVRT_ERROR_TIMEOUT, "status %d (%s): %s", status, devrt_status_string(status),
          devrt_last_error());
    check_output(false);
    FILE *report = tmpfile();
    devrt_module_set_report_file(module, report);
    double start = harness_seconds();
    devrt_module_unload(module);
    module = NULL;
    double seconds = harness_seconds() - start;
    char said[512] = "";
    if (report) {
        rewind(report);
        size_t n = fread(said, 1, sizeof said - 1, report);
        said[n] = '\0';
        fclose(report);
    }
    enum devrt_backend backend = devrt_device_backend(device);
    /* CUDA and HIP cannot stop a kernel: the module is left to it. */
    bool left = backend == DEVRT_BACKEND_CUDA || backend == DEVRT_BACKEND_HIP;
    printf("the unload returned after %.3f s%s%s", seconds, said[0] ? "; it said: " : "\n", said);
    CHECK(left == (strstr(said, "its code and device memory are left to it") != NULL),
          "the unload %s the kernel: %s",
          left ? "did not leave the module to" : "left the module to",
          said[0] ? said : "(nothing said)");
    /* CUDA loads a module only once the context's kernels have ended: the spin goes first
       (HIP's later launches wait for it anyway: the spin is the module's latest runaway). */
    if (left)
        __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    CHECK(harness_load(device, image, &module) == DEVRT_SUCCESS, "a load after the unload: %s",
          devrt_last_error());
    if (!module)
        return;
    devrt_module_set_output_callback(module, harness_sink_append, &sink);
    /* CUDA, HIP: the spin ends with the release, before the next launch; elsewhere it was
       ended. */
    check_usable(left ? LANES : 0, -1);
}

static void *launch_spin_thread(void *status)
{
    *(int *)status = launch_spin(0);
    return NULL;
}

/* after_sync's watch: mark's lanes once it has started or is held (watch_mark), then the
   spin's release (on HSA the call that queues mark returns only after that). */
struct sync_watch {
    uint64_t held; /* held_count before mark was queued */
    uint32_t marked;
};

static void *watch_then_release(void *arg)
{
    struct sync_watch *w = arg;
    bool held_seen;
    w->marked = watch_mark(w->held, SYNC_WATCH_MS, false, &held_seen);
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    return NULL;
}

/*
 * A synchronous launch without a timeout, which CUDA and HIP wait for on its stream and
 * give no event, is still ordered before the module's next launch on another stream: mark,
 * queued while the spin runs, must not start until the spin is released. (The control,
 * hipfake.control.drop_waits, loses HIP's stream waits; mark then starts at once.)
 */
static void test_after_sync(void)
{
    pthread_t spinner, watcher;
    int spin_status = -1;
    struct sync_watch watch = {0};
    devrt_stream *stream = NULL;
    CHECK(devrt_stream_create(device, &stream) == DEVRT_SUCCESS, "a stream: %s",
          devrt_last_error());
    if (!stream || pthread_create(&spinner, NULL, launch_spin_thread, &spin_status) != 0)
        return;
    /* Every lane has printed: the spin runs (or the test says it never started). */
    uint32_t waited_ms = 0, printed;
    while ((printed = __atomic_load_n(&words[2], __ATOMIC_ACQUIRE)) < LANES &&
           waited_ms < MARK_WAIT_MS) {
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
        waited_ms += 10;
    }
    CHECK(printed == LANES, "%u lanes of the spin printed within %u ms, expected %u", printed,
          MARK_WAIT_MS, LANES);
    watch.held = held_count();
    if (pthread_create(&watcher, NULL, watch_then_release, &watch) != 0) {
        __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
        pthread_join(spinner, NULL);
        return;
    }
    const struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[3])};
    uint64_t id = 0;
    int status = devrt_launch_async(module, "mark", &config, args, 1, stream, &id);
    CHECK(status == DEVRT_SUCCESS, "mark: %s", devrt_last_error());
    if (id) {
        status = devrt_launch_wait(device, id, NULL);
        CHECK(status == DEVRT_SUCCESS, "mark's wait: %s", devrt_last_error());
    }
    pthread_join(watcher, NULL);
    pthread_join(spinner, NULL);
    printf("while the synchronous spin ran, mark of the same module on another stream: %u "
           "lane%s started\n",
           watch.marked, watch.marked == 1 ? "" : "s");
    CHECK(watch.marked == 0, "mark started while the synchronous spin of its module ran (%u lane)",
          watch.marked);
    CHECK(spin_status == DEVRT_SUCCESS, "the spin: status %d (%s)", spin_status,
          devrt_status_string(spin_status));
    CHECK(words[1] == LANES && words[3] == 1,
          "%u lanes of the spin and %u of mark ran, expected %u and 1", words[1], words[3], LANES);
    check_output(true);
    devrt_stream_destroy(stream);
}

struct waited_launch {
    uint64_t id;
    int status;
    struct devrt_launch_report report;
};

static void *wait_for_launch(void *arg)
{
    struct waited_launch *w = arg;
    w->status = devrt_launch_wait(device, w->id, &w->report);
    return NULL;
}

static void *unload_module(void *unused)
{
    (void)unused;
    devrt_module_unload(module);
    return NULL;
}

/*
 * Waits until the count at FIELD of launch_events() passes BEFORE. Past MARK_WAIT_MS the
 * test fails, saying that it could not reach the condition WHAT.
 */
static void await_event(size_t field, uint64_t before, const char *what)
{
    for (uint32_t waited_ms = 0;; waited_ms += 10) {
        struct devrt_fault_stats stats = launch_events();
        uint64_t now;
        memcpy(&now, (const char *)&stats + field, sizeof now);
        if (now > before)
            return;
        if (waited_ms >= MARK_WAIT_MS) {
            printf("could not reach the condition: %s, within %u ms\n", what, MARK_WAIT_MS);
            failures++;
            return;
        }
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
    }
}

/*
 * One thread waits for the spin's launch; then another unloads the module, whose unload
 * concludes the launches still in flight. The launch is concluded once, by the wait that
 * has it: the unload waits for that wait, and the wait gets the launch's report. (Concluded
 * twice, its backend hold is released twice and its entry used after it is freed.)
 */
static void test_unload_while_waited(void)
{
    const struct devrt_launch_config config = {.grid = {LANES / block, 1, 1},
                                               .block = {block, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[0]), DEVRT_ARG_PTR(&words[1]),
                               DEVRT_ARG_PTR(&words[2])};
    struct waited_launch w = {.status = -1};
    pthread_t waiter, unloader;
    struct devrt_fault_stats events = launch_events();
    int status = devrt_launch_async(module, "spin", &config, args, 3, NULL, &w.id);
    CHECK(status == DEVRT_SUCCESS, "the spin: %s", devrt_last_error());
    if (status != DEVRT_SUCCESS || pthread_create(&waiter, NULL, wait_for_launch, &w) != 0) {
        __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE); /* the unload must not wait on it */
        return;
    }
    /* Both are under way before the release: the wait has taken the launch, then the unload
       waits for that wait. */
    await_event(offsetof(struct devrt_fault_stats, waits_taken), events.waits_taken,
                "the wait took the launch");
    bool unloading = pthread_create(&unloader, NULL, unload_module, NULL) == 0;
    if (unloading)
        await_event(offsetof(struct devrt_fault_stats, detach_waits), events.detach_waits,
                    "the unload waited for the wait");
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    pthread_join(waiter, NULL);
    if (unloading) {
        pthread_join(unloader, NULL);
        module = NULL;
    }
    CHECK(w.status == DEVRT_SUCCESS, "the wait: status %d (%s)", w.status,
          devrt_status_string(w.status));
    CHECK(w.report.launch == 0 || w.report.launch == w.id, "the report names launch %" PRIu64,
          w.report.launch);
    CHECK(words[1] == LANES, "%u lanes of the spin ran, expected %u", words[1], LANES);
    status = devrt_launch_wait(device, w.id, NULL);
    CHECK(status == DEVRT_ERROR_INVALID_ARGUMENT, "a second wait: status %d, expected %d", status,
          DEVRT_ERROR_INVALID_ARGUMENT);
    check_output(true);
}

/*
 * What a program hands its output callback, and ends once the launch has returned: after
 * that, a unit written to it is a use after free.
 */
struct output_context {
    bool ended;     /* the program has let the context go */
    uint32_t units; /* written while it lived */
    uint32_t late;  /* written after it was let go */
};

static void count_unit(void *context, uint32_t stream, const char *data, size_t size)
{
    (void)stream;
    (void)data;
    (void)size;
    struct output_context *c = context;
    if (__atomic_load_n(&c->ended, __ATOMIC_ACQUIRE))
        c->late++;
    else
        c->units++;
}

/*
 * A kernel that prints only once released, after its launch has returned past its timeout:
 * the program lets the callback's context go as soon as the launch returns (here it marks
 * it ended, where a program would free it), then releases the kernel. None of the kernel's
 * lines may reach the callback after that; every one of them is counted as dropped where
 * the kernel ran on (the next launch waits for it and takes what it sent). Where the
 * emulation stopped the lanes, none printed.
 */
static void test_free_context(void)
{
    struct output_context *context = calloc(1, sizeof *context);
    if (!context) {
        CHECK(false, "no memory");
        return;
    }
    devrt_module_set_output_callback(module, count_unit, context);
    const struct devrt_launch_config config = {
        .grid = {LANES, 1, 1}, .block = {1, 1, 1}, .timeout_ns = TIMEOUT_NS};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[0]), DEVRT_ARG_PTR(&words[1])};
    int status = devrt_launch(module, "spin_then_print", &config, args, 2, NULL);
    CHECK(status == DEVRT_ERROR_TIMEOUT, "status %d (%s): %s", status, devrt_status_string(status),
          devrt_last_error());
    __atomic_store_n(&context->ended, true, __ATOMIC_RELEASE);
    bool stops = devrt_device_backend(device) == DEVRT_BACKEND_EMU;
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    /*
     * Every lane has printed once it has counted itself. Only then is the next launch
     * queued: HSA points the state at a later launch's record at once, not in queue order,
     * and the kernel's lines after that would name that launch (docs/runtime.md, "Timeouts").
     */
    uint32_t waited_ms = 0;
    while (!stops && __atomic_load_n(&words[1], __ATOMIC_ACQUIRE) < LANES &&
           waited_ms < MARK_WAIT_MS) {
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
        waited_ms += 10;
    }
    /* The next launch's output goes to the sink. A launch of the module waits for the
       kernel, then for what it sent. */
    devrt_module_set_output_callback(module, harness_sink_append, &sink);
    status = launch_spin(0);
    CHECK(status == DEVRT_SUCCESS, "the next launch: %s", devrt_last_error());
    uint32_t ran = __atomic_load_n(&words[1], __ATOMIC_ACQUIRE);
    uint64_t dropped = devrt_module_output_dropped(module);
    printf("%u lanes printed after the timeout: %u units reached the ended context, %" PRIu64
           " were dropped\n",
           stops ? 0 : LANES, context->late, dropped);
    CHECK(context->late == 0,
          "%u units of the timed-out launch reached its context after it "
          "returned",
          context->late);
    CHECK(context->units == 0, "%u units before the release, which nothing printed",
          context->units);
    CHECK(dropped == (stops ? 0 : LANES), "%" PRIu64 " units dropped, expected %u", dropped,
          stops ? 0 : LANES);
    CHECK(ran == (stops ? 0 : LANES) + LANES, "%u lanes ran in all", ran);
    /* The next launch's own lines all came: only the timed-out launch's are dropped. */
    CHECK(check_output(true) == LANES, "the next launch's lines");
    free(context);
}

/*
 * Workitem 0 raises while the others spin past the timeout: the launch reports both, the
 * raise in *report and on the report file as a launch that only raised would, and
 * DEVRT_ERROR_TIMEOUT with both in its message. The wait starts once every workitem has
 * said it started, and the timeout counts from the wait on CUDA and HSA (on the emulation
 * from the lanes' start; the raise comes right after the count there too). Where the kernel
 * runs on, the raise's message stays in device memory (reading it would be a copy behind
 * the kernel): code and place only.
 */
static void test_raise_and_timeout(void)
{
    FILE *file = tmpfile();
    devrt_module_set_report_file(module, file);
    const struct devrt_launch_config config = {
        .grid = {LANES, 1, 1}, .block = {1, 1, 1}, .timeout_ns = TIMEOUT_NS};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[0]), DEVRT_ARG_PTR(&words[1]),
                               DEVRT_ARG_PTR(&words[3])};
    uint64_t id = 0;
    int status = devrt_launch_async(module, "raise_then_spin", &config, args, 3, NULL, &id);
    CHECK(status == DEVRT_SUCCESS, "the launch: %s", devrt_last_error());
    if (status != DEVRT_SUCCESS)
        return;
    uint32_t waited_ms = 0;
    while (__atomic_load_n(&words[3], __ATOMIC_ACQUIRE) < LANES && waited_ms < MARK_WAIT_MS) {
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
        waited_ms += 10;
    }
    struct devrt_launch_report report = {0};
    status = devrt_launch_wait(device, id, &report);
    char said[1024] = "";
    if (file) {
        rewind(file);
        said[fread(said, 1, sizeof said - 1, file)] = '\0';
        fclose(file);
    }
    devrt_module_set_report_file(module, stderr);
    printf("status %s: %s\nreport file: %s", devrt_status_string(status), devrt_last_error(), said);
    bool stops = devrt_device_backend(device) == DEVRT_BACKEND_EMU;
    if (__atomic_load_n(&words[3], __ATOMIC_ACQUIRE) == 0) {
        printf("could not reach the condition: no workitem had started when the timeout came\n");
        failures++;
    } else {
        CHECK(status == DEVRT_ERROR_TIMEOUT, "status %d (%s)", status, devrt_status_string(status));
        CHECK(strstr(devrt_last_error(), "ran past its timeout") &&
                  strstr(devrt_last_error(), "raised an argument error at workgroup (0,0,0)"),
              "the message names both: %s", devrt_last_error());
        CHECK(report.code == DEVRT_EXCEPTION_ARGUMENT && report.workgroup[0] == 0 &&
                  report.workitem[0] == 0 && report.launch == id,
              "the report: code %u, workgroup %u, launch %" PRIu64, report.code,
              report.workgroup[0], report.launch);
        CHECK(!stops || !strcmp(report.message, "raised before the spin"), "its message: %s",
              report.message);
        CHECK(strstr(said, "raised an argument error at workgroup (0,0,0)") != NULL,
              "the report file: %s", said);
    }
    /* Released, the spinning workitems end: all but the one that raised. */
    check_usable(stops ? 0 : LANES - 1, -1);
}

static volatile sig_atomic_t program_signals;

static void count_signal(int signal)
{
    (void)signal;
    program_signals = program_signals + 1;
}

static void test_program_signal(void)
{
    struct sigaction action = {.sa_handler = count_signal};
    sigemptyset(&action.sa_mask);
    sigaction(SIGRTMIN + 4, &action, NULL);
    words[0] = 1;
    int status = launch_spin(FAILSAFE_NS);
    CHECK(status == DEVRT_SUCCESS, "status %d (%s): %s", status, devrt_status_string(status),
          devrt_last_error());
    check_output(true);
    pthread_kill(pthread_self(), SIGRTMIN + 4);
    printf("the program's handler of SIGRTMIN + 4 ran %d time%s\n", (int)program_signals,
           program_signals == 1 ? "" : "s");
    CHECK(program_signals == 1, "the program's handler ran %d times, expected 1",
          (int)program_signals);
}

static void test_in_time(void)
{
    words[0] = 1;
    int status = launch_spin(FAILSAFE_NS);
    CHECK(status == DEVRT_SUCCESS, "status %d (%s): %s", status, devrt_status_string(status),
          devrt_last_error());
    CHECK(words[1] == LANES, "%u lanes ran, expected %u", words[1], LANES);
    check_usable(LANES, check_output(true));
}

/* The CPU time the device's server thread has used, by its own clock. */
static uint64_t server_cpu_ns(void)
{
    struct devrt_device_info info;
    CHECK(devrt_device_get_info(device, &info) == DEVRT_SUCCESS, "%s", devrt_last_error());
    return info.server_cpu_ns;
}

/*
 * With no launch in flight the server thread blocks: its CPU clock stands still over a
 * second (a poll would wake it ten times). A launch after that quiet is served: its lanes'
 * lines arrive. CONTROL: the spin in flight, unreleased, over the same second: the server
 * polls for it, and its clock moves.
 */
static void test_server_waits(bool control)
{
    uint64_t spin = 0;
    if (control) {
        const struct devrt_launch_config config = {.grid = {LANES, 1, 1}, .block = {1, 1, 1}};
        struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[0]), DEVRT_ARG_PTR(&words[1]),
                                   DEVRT_ARG_PTR(&words[2])};
        CHECK(devrt_launch_async(module, "spin", &config, args, 3, NULL, &spin) == DEVRT_SUCCESS,
              "the spin: %s", devrt_last_error());
    }
    /*
     * Until the server has reached its wait: its clock stands still over 200 ms, twice what
     * a poll would leave it (DEVRT_SERVER_POLL_MS), or 2 s have passed. Waiting for that,
     * not a fixed time, keeps a slow start (a sanitizer's build on a loaded machine) from
     * counting as CPU used while idle; a server that polls never stands still, and fails.
     */
    uint64_t before = server_cpu_ns();
    for (int look = 0; look < 10; ++look) {
        nanosleep(&(struct timespec){0, 200000000}, NULL);
        uint64_t now = server_cpu_ns();
        if (now == before)
            break;
        before = now;
    }
    nanosleep(&(struct timespec){1, 0}, NULL);
    uint64_t used = server_cpu_ns() - before;
    printf("the server used %" PRIu64 " ns of CPU in 1 s %s\n", used,
           control ? "with a launch in flight" : "with none");
    if (control)
        CHECK(used > 0, "the server's clock stood still while a launch was in flight");
    else
        CHECK(used == 0, "the server used %" PRIu64 " ns of CPU with no launch in flight", used);
    if (control) {
        __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
        CHECK(devrt_launch_wait(device, spin, NULL) == DEVRT_SUCCESS, "the spin: %s",
              devrt_last_error());
        check_output(true);
        return;
    }
    check_usable(0, -1);
}

int main(int argc, char **argv)
{
    static const char *const tests[] = {"fires",
                                        "fires_in_wave",
                                        "in_time",
                                        "after",
                                        "after_control",
                                        "other_stream",
                                        "other_stream_control",
                                        "program_signal",
                                        "unload_runaway",
                                        "after_sync",
                                        "unload_while_waited",
                                        "free_context",
                                        "raise_and_timeout",
                                        "server_waits",
                                        "server_waits_control"};
    const char *test = argc > 2 ? argv[2] : "";
    size_t known = 0;
    while (known < sizeof tests / sizeof *tests && strcmp(test, tests[known]))
        ++known;
    if (argc < 3 || known == sizeof tests / sizeof *tests) {
        fprintf(stderr, "usage: timeout_test IMAGE fires|fires_in_wave|in_time|after|"
                        "after_control|other_stream|other_stream_control|program_signal|"
                        "unload_runaway|after_sync|unload_while_waited|free_context|"
                        "raise_and_timeout|server_waits|server_waits_control [emu|hsa|cuda]\n");
        return 2;
    }
    int exit_code =
        harness_open(harness_backend(argc > 3 ? argv[3] : NULL), NULL, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    words = devrt_mem_alloc(device, 4 * sizeof *words);
    if (!words) {
        fprintf(stderr, "no device memory\n");
        return 1;
    }
    devrt_module_set_output_callback(module, harness_sink_append, &sink);
    memset(words, 0, 4 * sizeof *words);
    devrt_faults_set(device, &(struct devrt_fault_settings){.count_launch_events = true});
    if (!strcmp(test, "fires_in_wave"))
        block = 32;
    if (!strcmp(test, "in_time"))
        test_in_time();
    else if (!strcmp(test, "program_signal"))
        test_program_signal();
    else if (!strcmp(test, "unload_runaway"))
        test_unload_runaway(argv[1]);
    else if (!strcmp(test, "after_sync"))
        test_after_sync();
    else if (!strcmp(test, "unload_while_waited"))
        test_unload_while_waited();
    else if (!strcmp(test, "free_context"))
        test_free_context();
    else if (!strcmp(test, "raise_and_timeout"))
        test_raise_and_timeout();
    else if (!strncmp(test, "server_waits", 12))
        test_server_waits(strstr(test, "_control") != NULL);
    else if (!strncmp(test, "after", 5) || !strncmp(test, "other_stream", 12))
        test_after(argv[1], strstr(test, "_control") != NULL, !strncmp(test, "other", 5));
    else
        test_fires();
    devrt_module_unload(module);
    devrt_mem_free(device, words);
    devrt_device_close(device);
    free(sink.data);
    return failures ? 1 : 0;
}
