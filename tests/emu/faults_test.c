/*
 * The server under injected faults, floods and a device-side fuzzer (docs/reliability.md):
 * faults_test IMAGE TEST [BACKEND], the image of tests/kernels/faults.c. Exits 0 when the
 * test holds, 1 when it does not, 77 when the backend has no device. The faults come from
 * the runtime's test hooks (tests/faults/faults.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <devrt/host.h>
#include <devrt/rpc.h>

#include "faults.h"
#include "harness.h"

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

/* The server's poll interval (host/runtime/runtime.h, DEVRT_SERVER_POLL_MS). */
#define POLL_MS 100u

static devrt_device *device;
static devrt_module *module;
static const char *image_path;
static bool on_emu;  /* the backend stops a kernel at its timeout */
static bool small;   /* lanes are host threads: run smaller */
static bool on_cuda; /* the server copies long raw writes there too */

static void sleep_ms(uint32_t ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

struct echo_launch {
    uint32_t *out;
    int status;
    bool done;
    pthread_mutex_t lock;
};

static void *launch_echo_once(void *arg)
{
    struct echo_launch *l = arg;
    struct devrt_arg args[] = {DEVRT_ARG_PTR(l->out)};
    struct devrt_launch_config one = harness_grid1(1, 1);
    int status = devrt_launch(module, "echo_once", &one, args, 1, NULL);
    pthread_mutex_lock(&l->lock);
    l->status = status;
    l->done = true;
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

static bool launch_done(struct echo_launch *l)
{
    pthread_mutex_lock(&l->lock);
    bool done = l->done;
    pthread_mutex_unlock(&l->lock);
    return done;
}

/*
 * A lost doorbell. The idle server sleeps on its doorbell; the hook loses the ring of the
 * launch's one request, so the server sleeps out its poll interval and then finds the
 * request. Deterministic: the first pass after that sleep serves it (0 passes without it);
 * the time from the ring to the hand-back is measured and printed, not judged. A ring that
 * came while the server was awake was not lost: the launch is repeated (at most 20 times).
 * The control turns the poll's recovery off: the request stays unserved for five poll
 * intervals, which the same check refuses; then the hook lets go and the launch ends.
 */
static void test_doorbell(bool control)
{
    uint32_t *out = devrt_mem_alloc(device, sizeof *out);
    struct devrt_fault_stats stats = {0};
    uint32_t attempts = 0;
    while (stats.doorbells_dropped == 0 && attempts < 20 && failures == 0) {
        attempts++;
        *out = 0;
        struct devrt_fault_settings settings = {.drop_doorbells = 1, .no_poll_recovery = control};
        devrt_faults_set(device, &settings);
        struct echo_launch l = {.out = out};
        pthread_mutex_init(&l.lock, NULL);
        pthread_t thread;
        CHECK(pthread_create(&thread, NULL, launch_echo_once, &l) == 0, "no thread");
        /* Until the ring is lost, or the launch ended without losing one. */
        do {
            sleep_ms(1);
            devrt_faults_get(device, &stats);
        } while (stats.doorbells_dropped == 0 && !launch_done(&l));
        if (control && stats.doorbells_dropped) {
            sleep_ms(5 * POLL_MS);
            devrt_faults_get(device, &stats);
            CHECK(stats.recovered,
                  "the request was not served %u ms (5 poll intervals) after "
                  "its doorbell was lost: no recovery",
                  5 * POLL_MS);
        }
        struct devrt_fault_settings none = {0};
        if (control)
            devrt_faults_set(device, &none); /* lets the sleeping server go */
        pthread_join(thread, NULL);
        pthread_mutex_destroy(&l.lock);
        CHECK(l.status == DEVRT_SUCCESS, "launch: %s", devrt_last_error());
        CHECK(*out == 1, "the echo came back wrong");
        if (!control)
            devrt_faults_get(device, &stats);
        devrt_faults_set(device, &none);
    }
    CHECK(stats.doorbells_dropped == 1, "no ring reached a sleeping server in %u launches",
          attempts);
    if (!control && stats.doorbells_dropped) {
        CHECK(stats.recovered && stats.recovery_passes == 0,
              "the lost ring's request was served %llu passes after the poll (recovered: %d)",
              (unsigned long long)stats.recovery_passes, stats.recovered);
        printf("lost doorbell recovered by the first pass after the poll: %.1f ms from the "
               "ring to the hand-back (poll interval %u ms), launch %u\n",
               stats.recovery_ns / 1e6, POLL_MS, attempts);
    }
    devrt_mem_free(device, out);
}

/* Echoes from many lanes, each checked by the kernel; counts[0] wrong, counts[1] done. */
static void echo_many(const char *what)
{
    const uint32_t groups = 8, block = 64, n = groups * block;
    uint32_t *counts = devrt_mem_alloc(device, 3 * sizeof *counts);
    memset(counts, 0, 3 * sizeof *counts);
    /* fuzz_every past the grid: no fuzzing lane but workgroup 0's, which fuzzes 0 rounds. */
    struct devrt_arg args[] = {DEVRT_ARG_UINT(0), DEVRT_ARG_U64(1),      DEVRT_ARG_UINT(1000),
                               DEVRT_ARG_UINT(4), DEVRT_ARG_PTR(counts), DEVRT_ARG_UINT(0)};
    struct devrt_launch_config config = harness_grid1(groups, block);
    int status = devrt_launch(module, "fuzz_server", &config, args, 6, NULL);
    CHECK(status == DEVRT_SUCCESS, "%s: %s", what, devrt_last_error());
    CHECK(counts[0] == 0 && counts[1] == n - block,
          "%s: %u echoes wrong, %u of %u honest lanes done", what, counts[0], counts[1], n - block);
    devrt_mem_free(device, counts);
}

/*
 * A server thread that stops for 300 ms in the middle of serving, and one that waits 200 us
 * before every hand-back: the device waits, every echo comes back right. The statistics
 * show that the fault was applied.
 */
static void test_stall(void)
{
    struct devrt_fault_settings settings = {.stall_ms = 300};
    devrt_faults_set(device, &settings);
    double start = harness_seconds();
    echo_many("stalled server");
    struct devrt_fault_stats stats;
    devrt_faults_get(device, &stats);
    CHECK(stats.stalls == 1, "%u stalls", stats.stalls);
    printf("server stalled %u ms once: the launch took %.0f ms, nothing lost\n", settings.stall_ms,
           (harness_seconds() - start) * 1e3);
    settings = (struct devrt_fault_settings){.hand_back_delay_us = 200};
    devrt_faults_set(device, &settings);
    start = harness_seconds();
    echo_many("delayed hand-backs");
    devrt_faults_get(device, &stats);
    CHECK(stats.delayed_hand_backs > 0, "no hand-back was delayed");
    printf("%llu hand-backs delayed by %u us each: the launch took %.0f ms, nothing lost\n",
           (unsigned long long)stats.delayed_hand_backs, settings.hand_back_delay_us,
           (harness_seconds() - start) * 1e3);
    devrt_faults_set(device, NULL);
}

/* What the flood's callback checks: every line whole, in its lane's order. */
struct sink {
    uint32_t lanes, rounds, bytes, sleep_us;
    uint32_t *next_round;
    uint64_t lines, bytes_seen, bad, out_of_order;
    bool some_line; /* atomic: a line has ended (flood_stopped's stop waits for it) */
    double start;   /* harness_seconds() at the launch, for the progress lines */
};

/* Lines between two progress lines: a flood that runs past its test's timeout says how far
   it came and how fast (the GPU's flood sends 32768 lines). */
#define FLOOD_PROGRESS_LINES 4096u

static uint32_t parse_hex(const char *at)
{
    uint32_t value = 0;
    for (int i = 0; i < 8; ++i) {
        char c = at[i];
        uint32_t digit = c >= '0' && c <= '9'   ? (uint32_t)(c - '0')
                         : c >= 'a' && c <= 'f' ? (uint32_t)(c - 'a' + 10)
                                                : 16u;
        if (digit == 16)
            return UINT32_MAX;
        value = value * 16 + digit;
    }
    return value;
}

static void take_line(void *context, uint32_t stream, const char *data, size_t size)
{
    struct sink *sink = context;
    if (sink->sleep_us) {
        struct timespec t = {0, (long)sink->sleep_us * 1000};
        nanosleep(&t, NULL);
    }
    sink->lines++;
    sink->bytes_seen += size;
    if (sink->lines % FLOOD_PROGRESS_LINES == 0) {
        printf("  progress: %llu lines after %.1f s\n", (unsigned long long)sink->lines,
               harness_seconds() - sink->start);
        fflush(stdout);
    }
    if (stream != DEVRT_OUTPUT_RAW || size != sink->bytes || data[8] != ' ' || data[17] != ' ' ||
        data[size - 1] != '\n') {
        sink->bad++;
        return;
    }
    uint32_t lane = parse_hex(data), round = parse_hex(data + 9);
    if (lane >= sink->lanes || round >= sink->rounds) {
        sink->bad++;
        return;
    }
    for (uint32_t i = 18; i + 1 < size; ++i) {
        if (data[i] != (char)('a' + (lane + round * 7 + i) % 26)) {
            sink->bad++;
            return;
        }
    }
    if (round != sink->next_round[lane])
        sink->out_of_order++;
    sink->next_round[lane] = round + 1;
    __atomic_store_n(&sink->some_line, true, __ATOMIC_RELEASE);
}

static size_t capacity_of(size_t bytes)
{
    size_t capacity = 256;
    while (capacity < bytes)
        capacity *= 2;
    return capacity;
}

/*
 * A flood: `lanes` lanes (workgroups of 64) each write `rounds` lines of `bytes` bytes
 * into a sink that sleeps `sleep_us` per line, under fault `settings` and a launch timeout
 * (0: none). run_flood fills in what came of it.
 */
struct flood {
    uint32_t lanes, bytes, rounds, sleep_us;
    struct devrt_fault_settings settings;
    uint64_t timeout_ns;
    int status;
    double seconds;
    uint32_t refused; /* lines the device's output call refused */
    struct sink sink;
    struct devrt_fault_stats stats;
    long rss_before_mib, rss_after_mib;
};

static bool run_flood(struct flood *f)
{
    char *slices = devrt_mem_alloc(device, (size_t)f->lanes * f->bytes);
    uint32_t *refused = devrt_mem_alloc(device, sizeof *refused);
    CHECK(slices && refused, "no device memory for %u lanes' lines", f->lanes);
    if (!slices || !refused) {
        devrt_mem_free(device, slices);
        devrt_mem_free(device, refused);
        return false;
    }
    *refused = 0;
    f->sink = (struct sink){.lanes = f->lanes,
                            .rounds = f->rounds,
                            .bytes = f->bytes,
                            .sleep_us = f->sleep_us,
                            .next_round = calloc(f->lanes, sizeof(uint32_t)),
                            .start = harness_seconds()};
    devrt_module_set_output_callback(module, take_line, &f->sink);
    devrt_faults_set(device, &f->settings);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    double start = harness_seconds();
    struct devrt_arg args[] = {DEVRT_ARG_PTR(slices), DEVRT_ARG_UINT(f->bytes),
                               DEVRT_ARG_UINT(f->rounds), DEVRT_ARG_PTR(refused)};
    struct devrt_launch_config config = harness_grid1(f->lanes / 64, 64);
    config.timeout_ns = f->timeout_ns;
    f->status = devrt_launch(module, "flood", &config, args, 4, NULL);
    f->seconds = harness_seconds() - start;
    getrusage(RUSAGE_SELF, &after);
    devrt_faults_get(device, &f->stats);
    devrt_faults_set(device, NULL);
    devrt_module_set_output_callback(module, NULL, NULL);
    f->refused = *refused;
    f->rss_before_mib = before.ru_maxrss / 1024;
    f->rss_after_mib = after.ru_maxrss / 1024;
    free(f->sink.next_round);
    f->sink.next_round = NULL;
    devrt_mem_free(device, slices);
    devrt_mem_free(device, refused);
    return true;
}

/*
 * Lanes print far faster than the sink takes (a callback that sleeps per line), with the
 * server's bound set to 256 KiB: the peak of the bytes it holds for unfinished messages
 * stays under the documented bound (docs/output.md, "Memory"): the budget plus two
 * requests of the wave's longest messages. Every line arrives whole, once, in its lane's
 * order. The control lifts the bound and holds every message's end back until the server
 * holds more than the bound (the waves then cannot finish a line each in turn, however
 * slowly the machine runs them): the peak passes it. FLOOD_MIB (environment) sets the
 * volume for a manual run: 2048 on a GPU is the 2 GB.
 */
static void test_flood(bool control)
{
    const char *mib_env = getenv("FLOOD_MIB");
    struct devrt_device_info info;
    devrt_device_get_info(device, &info);
    /*
     * The emulation's 64-lane waves run under a random schedule, and slower, and so does
     * everything under ThreadSanitizer: the test proper sends less there. The control always
     * sends 4 MiB from 256 lanes: the most it can hold is one message per lane, and fewer
     * lanes (2 MiB is 128 lines) could never hold more than the 2.25 MiB bound.
     */
    uint32_t bytes = 16384, lanes = small ? 256 : 16384, block = 64;
    uint64_t emu_mib = control ? 4 : info.wave_size > 32 ? 1 : UNDER_TSAN ? 2 : 4;
    uint64_t mib = mib_env ? strtoull(mib_env, NULL, 10) : small ? emu_mib : 512;
    uint32_t rounds = (uint32_t)((mib << 20) / ((uint64_t)lanes * bytes));
    if (rounds == 0) {
        rounds = 1;
        lanes = (uint32_t)((mib << 20) / bytes / block * block);
    }
    if (lanes < block)
        lanes = block;
    const size_t budget = 256u << 10;
    /* A message of `bytes` raw bytes is its record's words and the end word. */
    size_t request = (size_t)info.wave_size * capacity_of(bytes + 32);
    struct flood f = {
        .lanes = lanes,
        .bytes = bytes,
        .rounds = rounds,
        .sleep_us = small ? 20 : 2,
        /* The bound's subject is messages of many packets: long writes
           stream, except in a manual run of a volume (FLOOD_MIB), which
           measures the path users get. */
        .settings = {.buffer_budget = budget,
                     .unbounded_buffer = control,
                     .hold_ends_until = control ? budget + 2 * request + request / 2 : 0,
                     .hold_limit_ms = 60000,
                     .stream_output = !mib_env}};
    if (!run_flood(&f))
        return;
    if (f.stats.hold_gave_up) {
        printf("could not reach the condition: the waves never held %.2f MiB of unfinished "
               "messages at once\n",
               (budget + 2 * request + request / 2) / 1048576.0);
        failures++;
        return;
    }
    CHECK(f.status == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(f.refused == 0, "%u lines refused", f.refused);
    uint64_t expected = (uint64_t)lanes * rounds;
    CHECK(f.sink.lines == expected && f.sink.bad == 0 && f.sink.out_of_order == 0,
          "%llu of %llu lines, %llu malformed or cut, %llu out of their lane's order",
          (unsigned long long)f.sink.lines, (unsigned long long)expected,
          (unsigned long long)f.sink.bad, (unsigned long long)f.sink.out_of_order);
    size_t bound = budget + (2 + f.stats.stale_favourites) * request;
    double mib_seen = f.sink.bytes_seen / 1048576.0;
    printf("%llu lines, %.1f MiB in %.2f s (%.1f MiB/s) into a callback sleeping %u us per "
           "line; server's buffered peak %.2f MiB, bound %.2f MiB (budget %.2f MiB), %llu "
           "packets deferred (%llu without a read of their port), %llu stale favourites; max "
           "RSS %ld -> %ld MiB\n",
           (unsigned long long)f.sink.lines, mib_seen, f.seconds, mib_seen / f.seconds, f.sleep_us,
           f.stats.buffered_peak / 1048576.0, bound / 1048576.0, budget / 1048576.0,
           (unsigned long long)f.stats.deferred_packets,
           (unsigned long long)f.stats.deferred_unread,
           (unsigned long long)f.stats.stale_favourites, f.rss_before_mib, f.rss_after_mib);
    /* A port the bound deferred is not read again while its packet would be deferred again
       (backpressure.c): the passes of a flood read the favoured message's port alone. */
    CHECK(f.stats.deferred_packets == 0 || f.stats.deferred_unread > 0,
          "each of %llu deferrals read its port", (unsigned long long)f.stats.deferred_packets);
    CHECK(f.stats.buffered_peak <= bound,
          "the server held %.2f MiB of unfinished messages, over "
          "its bound of %.2f MiB",
          f.stats.buffered_peak / 1048576.0, bound / 1048576.0);
}

/*
 * Long raw writes (4 KiB lines from device memory) where the backend's server can copy
 * while it serves: the bytes stay where they are and the server copies them, one packet a
 * request instead of one per 64 bytes. The control streams the same lines packet by packet
 * (stream_output, as on HSA). Both deliver every line whole, once, in its lane's order.
 * Elsewhere (HSA) both stream and the packet counts match: the test says so.
 */
static void test_long_writes(void)
{
    struct flood runs[2];
    for (int stream = 0; stream < 2; ++stream) {
        runs[stream] = (struct flood){
            .lanes = 256, .bytes = 4096, .rounds = 2, .settings = {.stream_output = stream}};
        if (!run_flood(&runs[stream]))
            return;
        struct flood *f = &runs[stream];
        CHECK(f->status == DEVRT_SUCCESS && f->refused == 0, "%s: %u lines refused: %s",
              stream ? "streamed" : "left in place", f->refused, devrt_last_error());
        CHECK(f->sink.lines == 512 && f->sink.bad == 0 && f->sink.out_of_order == 0,
              "%s: %llu of 512 lines, %llu malformed or cut, %llu out of order",
              stream ? "streamed" : "left in place", (unsigned long long)f->sink.lines,
              (unsigned long long)f->sink.bad, (unsigned long long)f->sink.out_of_order);
    }
    uint64_t in_place = runs[0].stats.packets_taken, streamed = runs[1].stats.packets_taken;
    printf("512 lines of 4 KiB: %llu packets left in place, %llu streamed\n",
           (unsigned long long)in_place, (unsigned long long)streamed);
    if (!on_emu && !on_cuda) {
        CHECK(in_place == streamed, "a backend that cannot copy while serving left bytes in place");
        return;
    }
    CHECK(in_place * 16 < streamed, "the writes were not left in place: %llu packets against %llu",
          (unsigned long long)in_place, (unsigned long long)streamed);
}

/*
 * A write left in place at an address the server cannot read (a made-up one) is refused:
 * the device's call returns -1 and the launch reports the address. Only where writes are
 * left in place; elsewhere the device itself would read the address and fault.
 */
static void test_long_write_bad_address(void)
{
    if (!on_emu && !on_cuda) {
        printf("skipped: only the emulation and CUDA leave long writes in place\n");
        exit(77);
    }
    uint32_t *refused = devrt_mem_alloc(device, sizeof *refused);
    CHECK(refused != NULL, "%s", devrt_last_error());
    if (!refused)
        return;
    struct devrt_arg args[] = {DEVRT_ARG_PTR((void *)(uintptr_t)0x1000), DEVRT_ARG_UINT(4096),
                               DEVRT_ARG_PTR(refused)};
    struct devrt_launch_config one = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    struct devrt_launch_report report;
    int status = devrt_launch(module, "write_at", &one, args, 3, &report);
    CHECK(status == DEVRT_ERROR_DEVICE_REQUEST && *refused == 1, "status %s, %u refused: %s",
          devrt_status_string(status), *refused, devrt_last_error());
    CHECK(strstr(report.text, "cannot read the 4096 bytes at 0x1000"), "the report: %s",
          report.text);
    printf("%s\n", report.text);
    devrt_mem_free(device, refused);
}

/*
 * A flood stopped by its timeout (the emulation stops lanes; elsewhere the test is skipped)
 * while most of its waves wait on the bound: the drain of the ended kernel takes their
 * packets at once instead of one favoured message a poll interval, so no favourite goes
 * stale while it drains. The lines that were finished arrive whole and in order. The
 * control keeps the bound in the drain: each waiting port must become the favourite in turn,
 * a poll interval (100 ms) each.
 */
static void test_flood_stopped(bool control)
{
    if (!on_emu) {
        printf("skipped: only the emulation stops a kernel at its timeout\n");
        exit(77);
    }
    /*
     * 256 lanes of 64 lines of 2 KiB into a sink taking 500 lines a second: 32 s at least,
     * and lines short enough that some end before the stop. A budget of a few requests:
     * over it within the first packets, however slow the run.
     */
    struct flood f = {.lanes = 256,
                      .bytes = 2048,
                      .rounds = 64,
                      .sleep_us = 2000,
                      .settings = {.buffer_budget = 16u << 10,
                                   .drain_keeps_bound = control,
                                   .stream_output = true}};
    /*
     * The stop comes once a line has ended and a wave has waited on the bound, whenever that
     * is (a loaded machine starts 256 lanes slowly): the drain then has both to show. The
     * timeout is only a failsafe.
     */
    f.settings.stop_after = &f.sink.some_line;
    f.timeout_ns = 120000000000ull;
    if (!run_flood(&f))
        return;
    printf("%s drain: the launch returned %.2f s after its start; %llu of %llu lines arrived; "
           "%llu packets of the stopped kernel met the bound, %llu favourites gone stale while "
           "draining\n",
           control ? "bounded" : "unbounded", f.seconds, (unsigned long long)f.sink.lines,
           (unsigned long long)f.lanes * f.rounds, (unsigned long long)f.stats.packets_after_end,
           (unsigned long long)f.stats.stale_after_end);
    if (!f.stats.stopped) {
        printf("could not reach the condition: no line ended with a packet deferred before the "
               "failsafe timeout\n");
        failures++;
        return;
    }
    uint64_t all = (uint64_t)f.lanes * f.rounds;
    CHECK(f.status == DEVRT_ERROR_TIMEOUT, "status %d (%s): %s", f.status,
          devrt_status_string(f.status), devrt_last_error());
    CHECK(f.sink.bad == 0 && f.sink.out_of_order == 0,
          "%llu lines malformed or cut, %llu out of their lane's order",
          (unsigned long long)f.sink.bad, (unsigned long long)f.sink.out_of_order);
    CHECK(f.sink.lines > 0 && f.sink.lines < all,
          "%llu lines arrived: the stop came before any line ended, or after all",
          (unsigned long long)f.sink.lines);
    CHECK(f.stats.stale_after_end == 0,
          "the drain of the ended kernel waited for %llu favourites to go stale, a poll "
          "interval each",
          (unsigned long long)f.stats.stale_after_end);
    CHECK(f.stats.packets_after_end > 0, "no packet was held back when the kernel ended");
}

/*
 * Lanes of one workgroup in four fuzz the server's ports while the other lanes echo. The
 * server refuses and reports (at least one refusal per round: each ends with opcode 0);
 * every honest echo comes back right, and the next launch is clean. The control plants a
 * bug in the server (a refused message is kept: the port's next honest request is refused
 * as the middle of it), which the honest lanes must catch.
 */
static void test_fuzz(bool control)
{
    const uint32_t groups = small ? 16 : 256, block = 64, fuzz_every = 4;
    const uint32_t rounds = control ? 20
                            : small ? (UNDER_TSAN ? 30 : 150)
                                    : 2000,
                   echo_rounds = small ? 8 : 32;
    const uint32_t fuzzers = (groups + fuzz_every - 1) / fuzz_every;
    const uint32_t honest = (groups - fuzzers) * block;
    uint32_t *counts = devrt_mem_alloc(device, 3 * sizeof *counts);
    memset(counts, 0, 3 * sizeof *counts);
    size_t printed = 0;
    devrt_module_set_output_callback(module, harness_count_output, &printed);
    devrt_module_set_report_file(module, NULL);
    struct devrt_fault_settings settings = {.keep_refused_message = control};
    devrt_faults_set(device, &settings);
    /* A new seed each run, printed; FUZZ_SEED repeats one. */
    const char *seed_env = getenv("FUZZ_SEED");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : 0x5eed0000u + (uint64_t)time(NULL);
    struct devrt_arg args[] = {DEVRT_ARG_UINT(rounds),     DEVRT_ARG_U64(seed),
                               DEVRT_ARG_UINT(fuzz_every), DEVRT_ARG_UINT(echo_rounds),
                               DEVRT_ARG_PTR(counts),      DEVRT_ARG_UINT(!UNDER_TSAN)};
    struct devrt_launch_config config = harness_grid1(groups, block);
    struct devrt_launch_report report;
    double start = harness_seconds();
    int status = devrt_launch(module, "fuzz_server", &config, args, 6, &report);
    double seconds = harness_seconds() - start;
    devrt_faults_set(device, NULL);
    unsigned long refusals = 0;
    const char *sent = strstr(report.text, " sent ");
    if (sent)
        refusals = strtoul(sent + 6, NULL, 10);
    printf("seed 0x%llx: %u fuzzing lanes x %u rounds, %u honest lanes x %u echoes in %.2f s; "
           "%lu requests refused and reported, %zu bytes of fuzzed output printed\n",
           (unsigned long long)seed, fuzzers, rounds, honest, echo_rounds, seconds, refusals,
           printed);
    CHECK(counts[0] == 0 && counts[1] == honest,
          "the fuzzed server lost honest requests: %u echoes wrong, %u of %u honest lanes done "
          "(status %d: %s)",
          counts[0], counts[1], honest, status, report.text);
    CHECK(status == DEVRT_ERROR_DEVICE_REQUEST && refusals >= (unsigned long)fuzzers * rounds,
          "status %d, %lu refusals reported (at least %u expected): %s", status, refusals,
          fuzzers * rounds, report.text);
    CHECK(counts[2] == fuzzers, "%u of %u fuzzing lanes done", counts[2], fuzzers);
    devrt_module_set_output_callback(module, NULL, NULL);
    devrt_mem_free(device, counts);
    if (failures == 0)
        echo_many("the launch after the fuzzer");
}

/*
 * The ready ring: with the server's passes over every port off (ring_only), a lane echoes
 * RING_ROUNDS times through the last of the device's RING_PORTS ports, and every echo is
 * served, each found through the module's ready ring: the server never looked at the other
 * ports, and a server without the ring never finds them. The control loads a module without a
 * ring (no_ready_ring) and keeps the passes: its echoes are served, found by passes, and the
 * count through the ring is 0.
 */
enum { RING_PORTS = 8192, RING_ROUNDS = 64 };

/*
 * ring_bogus: the same with passes off, each echo announced twice, first with a flip that
 * never comes: the port waits for it on the server's pending list while its real flip is
 * served through the ring (the server once lost track of such a port and looped on it
 * forever, holding its lock: the CI check's hsasim.threads.modules hung under TSan).
 */
static void test_ring(bool control, uint32_t bogus)
{
    struct devrt_fault_settings settings = {.ring_only = !control, .no_ready_ring = control};
    devrt_faults_set(device, &settings);
    /* Loaded under the setting: the control's module has no ring. */
    devrt_module *ringed = NULL;
    CHECK(harness_load(device, image_path, &ringed) == DEVRT_SUCCESS, "load: %s",
          devrt_last_error());
    if (!ringed)
        return;
    uint32_t *ok = devrt_mem_alloc(device, sizeof *ok);
    CHECK(ok != NULL, "%s", devrt_last_error());
    if (!ok) {
        devrt_module_unload(ringed);
        return;
    }
    *ok = 0;
    struct devrt_arg args[] = {DEVRT_ARG_UINT(RING_PORTS - 1), DEVRT_ARG_UINT(RING_ROUNDS),
                               DEVRT_ARG_PTR(ok), DEVRT_ARG_UINT(bogus)};
    struct devrt_launch_config one = harness_grid1(1, 1);
    CHECK(devrt_launch(ringed, "echo_on_port", &one, args, 4, NULL) == DEVRT_SUCCESS, "launch: %s",
          devrt_last_error());
    struct devrt_fault_stats stats;
    devrt_faults_get(device, &stats);
    CHECK(*ok == RING_ROUNDS, "%u of %u echoes came back right", *ok, RING_ROUNDS);
    CHECK(stats.found_by_ring == RING_ROUNDS && stats.packets_taken == RING_ROUNDS,
          "found %llu of %llu requests through the ready ring (%d expected)",
          (unsigned long long)stats.found_by_ring, (unsigned long long)stats.packets_taken,
          RING_ROUNDS);
    devrt_faults_set(device, NULL);
    devrt_mem_free(device, ok);
    devrt_module_unload(ringed);
}

/*
 * Two waves of one workgroup hold ports at once (include/devrt/rpc.h, "Home ports"). shared:
 * both take theirs as waves at one hardware place (HOME_SLOT) would: one gets that place's
 * home port, the other a port of the overflow pool, and both are served. Apart (the
 * control): each at its own place, each at its own home port. The emulation's random
 * schedule may split a wave into groups that take a port each: a wave's later groups share
 * its place, so they overflow to the pool in both forms. The device's default 1024 ports:
 * two places of one SM or CU differ below 512, the number of home ports.
 */
enum { HOME_WAVES = 2, HOME_SLOT = 5, HOME_PORTS = 1024 };

static void test_home_ports(bool shared)
{
    struct devrt_device_info info;
    devrt_device_get_info(device, &info);
    uint32_t lanes = HOME_WAVES * info.wave_size;
    uint32_t *taken = devrt_mem_alloc(device, (1 + lanes + 2) * sizeof *taken);
    CHECK(taken != NULL, "%s", devrt_last_error());
    if (!taken)
        return;
    memset(taken, 0, (1 + lanes + 2) * sizeof *taken);
    uint32_t *counts = taken + 1 + lanes;
    struct devrt_arg args[] = {DEVRT_ARG_PTR(taken), DEVRT_ARG_PTR(counts), DEVRT_ARG_UINT(lanes),
                               DEVRT_ARG_UINT(shared ? HOME_SLOT : ~0u)};
    struct devrt_launch_config one = harness_grid1(1, lanes);
    CHECK(devrt_launch(module, "hold_ports_at", &one, args, 4, NULL) == DEVRT_SUCCESS, "launch: %s",
          devrt_last_error());
    CHECK(counts[1] == lanes, "%u of %u lanes' echoes came back right", counts[1], lanes);
    /* The first home ports taken, as many as there are waves. */
    uint32_t homes = devrt_rpc_home_ports(HOME_PORTS), home[HOME_WAVES] = {0};
    uint32_t at_home = 0, pooled = 0;
    for (uint32_t i = 1; i <= taken[0] && i <= lanes; ++i) {
        if (taken[i] < homes && at_home++ < HOME_WAVES)
            home[at_home - 1] = taken[i];
        pooled += taken[i] >= homes && taken[i] < HOME_PORTS;
    }
    CHECK(taken[0] >= HOME_WAVES && at_home + pooled == taken[0],
          "%u groups took ports, %u of them home ports, %u of the overflow pool", taken[0], at_home,
          pooled);
    if (shared)
        CHECK(at_home == 1 && home[0] == (HOME_SLOT & (homes - 1)),
              "%u groups took home ports (the first %u), not one the home port %u", at_home,
              home[0], HOME_SLOT & (homes - 1));
    else
        CHECK(at_home == HOME_WAVES && home[0] != home[1],
              "%u groups took home ports, not each of the %u waves its own", at_home, HOME_WAVES);
    devrt_mem_free(device, taken);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: faults_test IMAGE TEST [emu|hsa|cuda]\n");
        return 2;
    }
    enum devrt_backend backend = harness_backend(argc > 3 ? argv[3] : NULL);
    on_emu = backend == DEVRT_BACKEND_EMU;
    on_cuda = backend == DEVRT_BACKEND_CUDA;
    small = harness_host_lanes(backend);
    const char *test = argv[2];
    /* The fuzzer shares few ports with the honest lanes, so that it reaches theirs; the
       ready ring's test has many. */
    struct devrt_device_options options = {.rpc_ports = strstr(test, "fuzz")   ? 16
                                                        : strstr(test, "ring") ? RING_PORTS
                                                        : strstr(test, "home") ? HOME_PORTS
                                                                               : 0};
    image_path = argv[1];
    int exit_code = harness_open(backend, &options, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    if (!strcmp(test, "doorbell_drop"))
        test_doorbell(false);
    else if (!strcmp(test, "doorbell_drop_control"))
        test_doorbell(true);
    else if (!strcmp(test, "stall"))
        test_stall();
    else if (!strcmp(test, "flood"))
        test_flood(false);
    else if (!strcmp(test, "long_writes"))
        test_long_writes();
    else if (!strcmp(test, "long_write_bad_address"))
        test_long_write_bad_address();
    else if (!strcmp(test, "flood_control"))
        test_flood(true);
    else if (!strcmp(test, "flood_stopped"))
        test_flood_stopped(false);
    else if (!strcmp(test, "flood_stopped_control"))
        test_flood_stopped(true);
    else if (!strcmp(test, "fuzz"))
        test_fuzz(false);
    else if (!strcmp(test, "fuzz_control"))
        test_fuzz(true);
    else if (!strcmp(test, "ring"))
        test_ring(false, 0);
    else if (!strcmp(test, "ring_bogus"))
        test_ring(false, 7);
    else if (!strcmp(test, "ring_control"))
        test_ring(true, 0);
    else if (!strcmp(test, "home_ports_shared"))
        test_home_ports(true);
    else if (!strcmp(test, "home_ports_apart"))
        test_home_ports(false);
    else {
        fprintf(stderr, "unknown test %s\n", test);
        return 2;
    }
    devrt_module_unload(module);
    devrt_device_close(device);
    if (failures && strstr(test, "control"))
        printf("control: %d failure(s), as planted\n", failures);
    return failures ? 1 : 0;
}
