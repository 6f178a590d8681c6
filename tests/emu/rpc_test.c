/*
 * Runs the kernels of tests/kernels/rpc.c and rogue.c through the host runtime and checks
 * what they did. One test per invocation: rpc_test IMAGE TEST [BACKEND]. Exits 0 when the
 * test holds, 1 when it does not, 77 (skipped) when the backend has no device.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <devrt/host.h>

#include "faults.h"
#include "harness.h"
#include <devrt/rpc.h>

static devrt_device *device;
static devrt_module *module;
/*
 * The emulation runs each test twice (32- and 64-lane waves) and under the sanitizers, its
 * lanes threads on a few cores: it runs the larger tests smaller, to stay within CI's time.
 */
static bool on_emu;

/* Thousands of lanes, every port busy, messages from empty to many packets long. */
static void test_echo(uint32_t groups, uint32_t block, uint32_t max_length, uint32_t rounds)
{
    uint32_t *counts = devrt_mem_alloc(device, 2 * sizeof *counts);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&counts[0]), DEVRT_ARG_PTR(&counts[1]),
                               DEVRT_ARG_UINT(max_length), DEVRT_ARG_UINT(rounds)};
    struct devrt_launch_config config = harness_grid1(groups, block);
    int status = devrt_launch(module, "echo", &config, args, 4, NULL);
    CHECK(status == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(counts[0] == 0, "%u of %u round trips came back wrong", counts[0],
          groups * block * rounds);
    CHECK(counts[1] == groups * block, "%u of %u lanes finished", counts[1], groups * block);
    devrt_mem_free(device, counts);
}

static uint64_t answer(void *context, uint32_t service, const void *data, size_t size)
{
    uint64_t args[4];
    if (size != sizeof args)
        return 0;
    memcpy(args, data, sizeof args);
    return args[0] * 1000 + args[1] + service + (uint64_t)(uintptr_t)context;
}

static void test_hostcall(void)
{
    const uint32_t groups = 8, block = 64, n = groups * block;
    CHECK(devrt_register_hostcall(device, 5, answer, (void *)(uintptr_t)1) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    uint64_t *out = devrt_mem_alloc(device, n * sizeof *out);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(out), DEVRT_ARG_UINT(5)};
    struct devrt_launch_config config = harness_grid1(groups, block);
    CHECK(devrt_launch(module, "hostcall", &config, args, 2, NULL) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    uint32_t wrong = 0;
    for (uint64_t i = 0; i < n; ++i)
        wrong += out[i] != i * 1000 + i * 3 + 5 + 1;
    CHECK(wrong == 0, "%u of %u host calls answered wrongly", wrong, n);

    /* A service nobody registered is refused and reported, and the launch says so. */
    struct devrt_launch_report report;
    args[1] = DEVRT_ARG_UINT(6);
    config = harness_grid1(1, 1);
    devrt_module_set_report_file(module, NULL);
    int status = devrt_launch(module, "hostcall", &config, args, 2, &report);
    CHECK(status == DEVRT_ERROR_EXCEPTION, "unregistered service: status %d", status);
    CHECK(strstr(report.text, "host call refused") != NULL, "report: %s", report.text);
    devrt_mem_free(device, out);
}

/*
 * What a host call handler returns after reading device memory (the heap's statistics):
 * 1 when the read was refused for being on the path that serves the device, 2 when it
 * read, 3 for any other failure.
 */
static uint64_t read_heap(void *context, uint32_t service, const void *data, size_t size)
{
    (void)service;
    (void)data;
    (void)size;
    struct devrt_heap_stats stats;
    int status = devrt_heap_stats(context, &stats);
    if (status == DEVRT_ERROR_BACKEND && strstr(devrt_last_error(), "while the server serves"))
        return 1;
    return status == DEVRT_SUCCESS ? 2 : 3;
}

/*
 * The emulation refuses copies of device memory while the server serves a request (on a
 * GPU such a copy can wait behind the kernel waiting for the reply): a handler's read is
 * refused; the control, the same read outside the handler, is done.
 */
static void test_copy_while_serving(void)
{
    struct devrt_heap_stats stats;
    CHECK(devrt_heap_stats(module, &stats) == DEVRT_SUCCESS, "outside a handler: %s",
          devrt_last_error());
    CHECK(devrt_register_hostcall(device, 7, read_heap, module) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    uint64_t *out = devrt_mem_alloc(device, sizeof *out);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(out), DEVRT_ARG_UINT(7)};
    struct devrt_launch_config config = harness_grid1(1, 1);
    CHECK(devrt_launch(module, "hostcall", &config, args, 2, NULL) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    CHECK(out[0] == 1, "a handler's read of device memory gave %llu (1: refused, 2: read)",
          (unsigned long long)out[0]);
    devrt_mem_free(device, out);
}

static void test_exception(void)
{
    /* groups (4,1,1) of (8,2,1): the flat lane 8*2*2 + 8 + 3 = 43 is workgroup (2,0,0)
     * workitem (3,1,0). */
    struct devrt_launch_config config = {.grid = {4, 1, 1}, .block = {8, 2, 1}};
    struct devrt_launch_report report;
    devrt_module_set_report_file(module, NULL);
    /* global id x = 2*8 + 3 = 19, y = 1; flat = 19 + 32 * 1 = 51 */
    struct devrt_arg args[] = {DEVRT_ARG_U64(51), DEVRT_ARG_UINT(3)};
    int status = devrt_launch(module, "raise_at", &config, args, 2, &report);
    CHECK(status == DEVRT_ERROR_EXCEPTION, "status %d", status);
    CHECK(report.code == 3, "code %u", report.code);
    CHECK(report.workgroup[0] == 2 && report.workgroup[1] == 0 && report.workgroup[2] == 0,
          "workgroup (%u,%u,%u)", report.workgroup[0], report.workgroup[1], report.workgroup[2]);
    CHECK(report.workitem[0] == 3 && report.workitem[1] == 1 && report.workitem[2] == 0,
          "workitem (%u,%u,%u)", report.workitem[0], report.workitem[1], report.workitem[2]);
    CHECK(strcmp(report.message, "raised on purpose") == 0, "message '%s'", report.message);
    CHECK(strcmp(report.text, "kernel raise_at raised a domain error at workgroup (2,0,0) "
                              "workitem (3,1,0): raised on purpose") == 0,
          "text '%s'", report.text);

    /* The next launch starts clean: nobody raises (victim past the grid). */
    args[0] = DEVRT_ARG_U64(1u << 30);
    status = devrt_launch(module, "raise_at", &config, args, 2, &report);
    CHECK(status == DEVRT_SUCCESS, "clean launch after an exception: %d %s", status,
          devrt_last_error());

    /* The plain form: an unknown exception, no message. */
    args[0] = DEVRT_ARG_U64(0);
    args[1] = DEVRT_ARG_UINT(0);
    status = devrt_launch(module, "raise_at", &config, args, 2, &report);
    CHECK(status == DEVRT_ERROR_EXCEPTION && report.code == 1 && report.message[0] == 0,
          "plain exception: status %d code %u message '%s'", status, report.code, report.message);
}

static void test_raise_mid_request(void)
{
    const uint32_t groups = on_emu ? 8 : 16, block = 32, n = groups * block;
    uint32_t *done = devrt_mem_alloc(device, sizeof *done);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(done), DEVRT_ARG_U64(n / 2 + 5),
                               DEVRT_ARG_UINT(on_emu ? 5 : 20)};
    struct devrt_launch_config config = harness_grid1(groups, block);
    struct devrt_launch_report report;
    devrt_module_set_report_file(module, NULL);
    int status = devrt_launch(module, "raise_mid_request", &config, args, 3, &report);
    CHECK(status == DEVRT_ERROR_EXCEPTION, "status %d: %s", status, devrt_last_error());
    CHECK(report.code == 2 && strstr(report.text, "index out of range"), "%s", report.text);
    CHECK(*done == n - 1, "%u of %u other lanes finished their requests", *done, n - 1);
    devrt_mem_free(device, done);
    /* Nothing is left behind: the next launch's requests are served normally. */
    test_echo(4, 16, 300, 2);
}

/*
 * Waves that end holding a port (a raise between devrt_printf_begin and devrt_printf_end)
 * must not leak it: each launch takes such ports back. The kernel counts the locked ports
 * after every launch, so a leak fails at its first launch; without the count, launch
 * ports + 1 would wait forever for a free port. The raising lane is alone in its grid and
 * always tries port 0 first, and every other launch has flipped that port's outbox word:
 * a port taken back with the wrong outbox value would hang the launch after it.
 */
static void test_raise_holding_port(void)
{
    uint32_t *out = devrt_mem_alloc(device, 2 * sizeof *out);
    struct devrt_arg count_args[] = {DEVRT_ARG_PTR(out)};
    struct devrt_launch_config one = harness_grid1(1, 1);
    CHECK(devrt_launch(module, "count_locked_ports", &one, count_args, 1, NULL) == DEVRT_SUCCESS,
          "%s", devrt_last_error());
    uint32_t ports = out[1];
    CHECK(out[0] == 0 && ports == 16, "%u of %u ports locked before any launch", out[0], ports);
    devrt_module_set_report_file(module, NULL);
    uint32_t launches = 0;
    for (uint32_t i = 0; i <= ports && failures == 0; ++i) {
        struct devrt_arg args[] = {DEVRT_ARG_UINT(i & 1)};
        struct devrt_launch_report report;
        int status = devrt_launch(module, "raise_holding_port", &one, args, 1, &report);
        CHECK(status == DEVRT_ERROR_EXCEPTION && strstr(report.text, "raised holding a port"),
              "launch %u: status %d, report '%s'", i + 1, status, report.text);
        CHECK(devrt_launch(module, "count_locked_ports", &one, count_args, 1, NULL) ==
                  DEVRT_SUCCESS,
              "%s", devrt_last_error());
        CHECK(out[0] == 0, "%u of %u ports left locked after launch %u", out[0], ports, i + 1);
        launches++;
    }
    printf("%u launches ended holding a port; %u of %u ports locked after the last\n", launches,
           out[0], ports);
    devrt_mem_free(device, out);
    /* The ports serve the next launch's requests as before. */
    if (failures == 0)
        test_echo(2, 32, 300, 2);
}

/* The launch reclaim_while_held queues while a raised launch is concluded. */
struct holder {
    uint32_t *flags; /* [0]: it holds its port; [1]: the host has concluded the raise */
    uint32_t *out;   /* [0]: the ports it saw locked */
    devrt_stream *stream;
    uint64_t id;
    int status;
};

/* devrt_faults' before_reclaim: hold_port_and_count queued, and waited for until it holds. */
static void queue_holder(devrt_module *raised, void *arg)
{
    struct holder *h = arg;
    struct devrt_arg args[] = {DEVRT_ARG_PTR(h->flags), DEVRT_ARG_PTR(h->out)};
    struct devrt_launch_config one = harness_grid1(1, 1);
    h->status = devrt_launch_async(raised, "hold_port_and_count", &one, args, 2, h->stream, &h->id);
    for (uint32_t waited_ms = 0; h->status == DEVRT_SUCCESS && waited_ms < 30000 &&
                                 !__atomic_load_n(&h->flags[0], __ATOMIC_ACQUIRE);
         ++waited_ms) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
}

/*
 * A launch raises holding a port; as it is concluded, before its ports are taken back,
 * another launch of the module is queued and takes a port (the hook). The take-back must
 * leave that port alone: the holder sees it locked still, and the dead wave's. (Taken back
 * with the rest, it is unlocked under its holder, and another wave may take it.) The
 * holder's launch, concluded with none after it, takes the raise's port back.
 */
static void test_reclaim_while_held(void)
{
    uint32_t *words = devrt_mem_alloc(device, 4 * sizeof *words);
    struct holder h = {.flags = words, .out = words + 2, .status = -1};
    memset(words, 0, 4 * sizeof *words);
    CHECK(devrt_stream_create(device, &h.stream) == DEVRT_SUCCESS, "%s", devrt_last_error());
    devrt_faults_set(device, &(struct devrt_fault_settings){.before_reclaim = queue_holder,
                                                            .before_reclaim_arg = &h});
    devrt_module_set_report_file(module, NULL);
    struct devrt_launch_config one = harness_grid1(1, 1);
    struct devrt_arg long_format[] = {DEVRT_ARG_UINT(1)};
    int status = devrt_launch(module, "raise_holding_port", &one, long_format, 1, NULL);
    devrt_faults_set(device, &(struct devrt_fault_settings){0});
    CHECK(status == DEVRT_ERROR_EXCEPTION, "the raise: status %d: %s", status, devrt_last_error());
    uint32_t holding = __atomic_load_n(&words[0], __ATOMIC_ACQUIRE);
    CHECK(h.status == DEVRT_SUCCESS && holding == 1, "the holder: status %d, holding %u", h.status,
          holding);
    __atomic_store_n(&words[1], 1u, __ATOMIC_RELEASE);
    if (h.id)
        CHECK(devrt_launch_wait(device, h.id, NULL) == DEVRT_SUCCESS, "the holder: %s",
              devrt_last_error());
    printf("a launch holding a port while a raise was concluded saw %u port%s locked\n", words[2],
           words[2] == 1 ? "" : "s");
    CHECK(words[2] == 2, "the holder saw %u ports locked, expected 2 (its own and the raise's)",
          words[2]);
    /* The holder's launch, concluded with none after it, took the raise's port back. */
    struct devrt_arg count_args[] = {DEVRT_ARG_PTR(&words[2])};
    CHECK(devrt_launch(module, "count_locked_ports", &one, count_args, 1, NULL) == DEVRT_SUCCESS,
          "%s", devrt_last_error());
    CHECK(words[2] == 0, "%u ports left locked after the holder's launch", words[2]);
    devrt_stream_destroy(h.stream);
    devrt_mem_free(device, words);
}

/* The report of a raise whose message is at `message`. */
static void raise_with_string(uint64_t message, struct devrt_launch_report *report)
{
    struct devrt_arg args[] = {DEVRT_ARG_U64(message)};
    struct devrt_launch_config one = harness_grid1(1, 1);
    devrt_module_set_report_file(module, NULL);
    int status = devrt_launch(module, "raise_with_string", &one, args, 1, report);
    CHECK(status == DEVRT_ERROR_EXCEPTION, "status %d: %s", status, devrt_last_error());
    CHECK(strstr(report->file, "rpc.c") != NULL, "file '%s'", report->file);
}

/*
 * A message at an address no memory is mapped at is reported as unreadable, and the
 * process lives. Controls: a message that ends a few bytes before its allocation does (the
 * chunk that holds it runs past the allocation), and one that spans several chunks.
 */
static void test_bad_string(void)
{
    struct devrt_launch_report report;
    raise_with_string(0x10, &report);
    CHECK(strstr(report.message, "unreadable string at 0x10") != NULL, "message '%s'",
          report.message);
    printf("%s\n", report.text);

    char *block = devrt_mem_alloc(device, 200);
    memcpy(block + 195, "end", 4);
    raise_with_string((uint64_t)(uintptr_t)(block + 195), &report);
    CHECK(strcmp(report.message, "end") == 0, "message '%s'", report.message);
    for (int i = 0; i < 150; ++i)
        block[i] = (char)('a' + i % 26);
    block[150] = '\0';
    raise_with_string((uint64_t)(uintptr_t)(block + 3), &report);
    CHECK(strlen(report.message) == 147 && memcmp(report.message, block + 3, 147) == 0,
          "message '%s'", report.message);
    devrt_mem_free(device, block);
}

static void test_barrier(void)
{
    const uint32_t groups = 6, block = 64, n = groups * block;
    uint32_t *slots = devrt_mem_alloc(device, n * sizeof *slots);
    uint32_t *sums = devrt_mem_alloc(device, n * sizeof *sums);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(slots), DEVRT_ARG_PTR(sums)};
    struct devrt_launch_config config = harness_grid1(groups, block);
    CHECK(devrt_launch(module, "barrier_sum", &config, args, 2, NULL) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < n; ++i)
        wrong += sums[i] != block * (block + 1) / 2;
    CHECK(wrong == 0, "%u lanes read their workgroup before the barrier was passed", wrong);
    devrt_mem_free(device, slots);
    devrt_mem_free(device, sums);
}

/* Only some lanes of each wave call (tests/kernels/rpc.c says which); the rest must not. */
static void test_divergent(void)
{
    const uint32_t groups = on_emu ? 8 : 64, block = 128, rounds = 3, n = groups * block;
    uint64_t *out = devrt_mem_alloc(device, n * sizeof *out);
    uint32_t *failures = devrt_mem_alloc(device, sizeof *failures);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(out), DEVRT_ARG_PTR(failures), DEVRT_ARG_UINT(rounds)};
    struct devrt_launch_config config = harness_grid1(groups, block);
    CHECK(devrt_launch(module, "divergent_echo", &config, args, 3, NULL) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    CHECK(*failures == 0, "%u echoes came back wrong", *failures);
    uint32_t wrong = 0, callers = 0;
    uint8_t message[200];
    for (uint64_t id = 0; id < n; ++id) {
        uint64_t wave = id / 32;
        int calls = (id % 32) % (wave % 5 + 2) == 0 || (id % 32) == 31 - wave % 32;
        uint64_t expected = ~id;
        if (calls) {
            callers++;
            expected = 0;
            for (uint32_t round = 0; round < rounds; ++round) {
                uint32_t length = (uint32_t)((id * 13 + round * 29) % sizeof message);
                for (uint32_t i = 0; i < length; ++i)
                    message[i] = (uint8_t)(id ^ (round + i));
                expected += devrt_rpc_checksum(message, length);
            }
        }
        wrong += out[id] != expected;
    }
    CHECK(wrong == 0, "%u of %u lanes (%u calling) ended with the wrong value", wrong, n, callers);

    CHECK(devrt_register_hostcall(device, 5, answer, (void *)(uintptr_t)1) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    struct devrt_arg call_args[] = {DEVRT_ARG_PTR(out), DEVRT_ARG_UINT(5)};
    CHECK(devrt_launch(module, "divergent_hostcall", &config, call_args, 2, NULL) == DEVRT_SUCCESS,
          "%s", devrt_last_error());
    wrong = 0;
    for (uint64_t id = 0; id < n; ++id)
        wrong += out[id] != (id & 1 ? id * 1000 + id * 3 + 5 + 1 : ~id);
    CHECK(wrong == 0, "%u of %u lanes got the wrong host call answer", wrong, n);
    devrt_mem_free(device, out);
    devrt_mem_free(device, failures);
}

/*
 * The rogue kernel's requests (tests/kernels/rogue.c, enum rogue_kind in its order) and
 * what the report must say of each; NULL: well-formed, served.
 */
struct rogue {
    const char *name;
    uint32_t kind;
    const char *expected;
};

static const struct rogue rogues[] = {
    {"rogue_control", 0, NULL},
    {"rogue_opcode", 1, "unknown opcode 77"},
    {"rogue_length", 2, "limit is"},
    {"rogue_lane_mask", 3, "lane mask"},
    {"rogue_lane_mask64", 3, NULL}, /* the same request from a wave of 64 is well-formed */
    {"rogue_flags", 4, "unknown flags"},
    {"rogue_truncated", 5, "before its stated length"},
    {"rogue_switch", 6, "opcode or lanes changed in the middle of a message"},
    {"rogue_past_end", 7, "a packet past the end of every lane's message"},
    {"rogue_word", 8, NULL},
    {"rogue_word_refused", 9, "unknown opcode 77"},
    {"rogue_both_replies", 10, "a reply asked for as a packet and as a word"},
    {"rogue_word_streamed", 11, NULL},
    {"rogue_word_lane_mask", 12, "lane mask"},
};

static const struct rogue *rogue_named(const char *name)
{
    for (size_t i = 0; i < sizeof rogues / sizeof *rogues; ++i)
        if (!strcmp(rogues[i].name, name))
            return &rogues[i];
    return NULL;
}

static void test_rogue(uint32_t kind, const char *expected)
{
    uint32_t *out = devrt_mem_alloc(device, 2 * sizeof *out);
    struct devrt_arg args[] = {DEVRT_ARG_UINT(kind), DEVRT_ARG_PTR(&out[0]),
                               DEVRT_ARG_PTR(&out[1])};
    struct devrt_launch_config config = harness_grid1(1, 1);
    struct devrt_launch_report report;
    devrt_module_set_report_file(module, NULL);
    int status = devrt_launch(module, "rogue", &config, args, 3, &report);
    if (!expected) {
        CHECK(status == DEVRT_SUCCESS, "a well-formed request was refused: %s", report.text);
        CHECK(out[0] == DEVRT_RPC_OK, "status %u", out[0]);
    } else {
        CHECK(status == DEVRT_ERROR_DEVICE_REQUEST, "status %d", status);
        CHECK(out[0] == DEVRT_RPC_REFUSED, "the server answered %u, not refused", out[0]);
        CHECK(strstr(report.text, expected) != NULL, "report '%s' lacks '%s'", report.text,
              expected);
    }
    CHECK(out[1] == 1, "the request after it was not served");
    devrt_mem_free(device, out);
}

/*
 * Arguments of the right size and the wrong kind are refused before the launch wherever
 * the image records which parameters are pointers (not in CUDA's PTX), as is a count past
 * the arguments' end, before any of them past the kernel's count is read (CUDA records the
 * count only with a driver of 12.4 or newer). Integers of the other signedness are taken.
 */
static void test_argument_kinds(enum devrt_backend backend)
{
    struct devrt_launch_config config = harness_grid1(1, 1);
    struct devrt_arg args[] = {DEVRT_ARG_I64(1 << 30), DEVRT_ARG_I32(2)};
    CHECK(devrt_launch(module, "raise_at", &config, args, 2, NULL) == DEVRT_SUCCESS,
          "an i64 and an i32 for a u64 and a u32: %s", devrt_last_error());
    if (backend == DEVRT_BACKEND_CUDA)
        return;
    uint32_t *sums = devrt_mem_alloc(device, 64);
    struct devrt_arg wrong[] = {DEVRT_ARG_U64(5), DEVRT_ARG_PTR(sums)};
    int status = devrt_launch(module, "barrier_sum", &config, wrong, 2, NULL);
    const char *error = devrt_last_error();
    CHECK(status == DEVRT_ERROR_ARGUMENTS &&
              !strncmp(error, "kernel barrier_sum: argument 1 ", 31) &&
              strstr(error, "is a pointer, given u64"),
          "a u64 for a pointer: %s (%s)", devrt_status_string(status), error);
    status = devrt_launch(module, "raise_at", &config, args, (size_t)-1, NULL);
    CHECK(status == DEVRT_ERROR_ARGUMENTS &&
              !strcmp(devrt_last_error(),
                      "kernel raise_at takes 2 arguments (8 bytes, 4 bytes), given "
                      "18446744073709551615 (i64: 8 bytes, i32: 4 bytes, and 18446744073709551613 "
                      "more)"),
          "a count of (size_t)-1: %s (%s)", devrt_status_string(status), devrt_last_error());
    devrt_mem_free(device, sums);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: rpc_test IMAGE TEST [emu|hsa|cuda]\n");
        return 2;
    }
    enum devrt_backend backend = harness_backend(argc > 3 ? argv[3] : NULL);
    on_emu = harness_host_lanes(backend);
    /*
     * Fewer ports than live lanes, so that every port is contended; raise_holding_port
     * launches more times than there are ports, so it has few.
     */
    struct devrt_device_options options = {.rpc_ports =
                                               strcmp(argv[2], "raise_holding_port") ? 64 : 16};
    /* The server bounds a request's lanes by the module's waves: lane 40 exists in these. */
    if (!strcmp(argv[2], "rogue_lane_mask64"))
        options.emu_wave_size = 64;
    int exit_code = harness_open(backend, &options, argv[1], &device, NULL);
    if (exit_code)
        return exit_code;
    const char *test = argv[2];
    int status = harness_load(device, argv[1], &module);
    if (!strcmp(test, "abi_mismatch")) {
        CHECK(status == DEVRT_ERROR_ABI_MISMATCH, "status %d", status);
        CHECK(strstr(devrt_last_error(), "ABI version 99") != NULL, "message: %s",
              devrt_last_error());
        printf("refused: %s\n", devrt_last_error());
    } else if (status != DEVRT_SUCCESS) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], devrt_last_error());
        return 1;
    } else if (!strcmp(test, "echo")) {
        test_echo(on_emu ? 16 : 64, 64, 64,
                  4); /* 4096 lanes (1024 on the emulation), one or two packets each */
    } else if (!strcmp(test, "stream")) {
        test_echo(8, 32, 4096, 3); /* up to 65 packets per message */
    } else if (!strcmp(test, "hostcall")) {
        test_hostcall();
    } else if (!strcmp(test, "copy_while_serving")) {
        test_copy_while_serving();
    } else if (!strcmp(test, "exception")) {
        test_exception();
    } else if (!strcmp(test, "raise_mid_request")) {
        test_raise_mid_request();
    } else if (!strcmp(test, "raise_holding_port")) {
        test_raise_holding_port();
    } else if (!strcmp(test, "reclaim_while_held")) {
        test_reclaim_while_held();
    } else if (!strcmp(test, "bad_string")) {
        test_bad_string();
    } else if (!strcmp(test, "barrier")) {
        test_barrier();
    } else if (!strcmp(test, "divergent")) {
        test_divergent();
    } else if (!strcmp(test, "argument_kinds")) {
        test_argument_kinds(backend);
    } else if (!strncmp(test, "rogue_", 6)) {
        const struct rogue *r = rogue_named(test);
        if (!r) {
            fprintf(stderr, "unknown test %s\n", test);
            return 2;
        }
        test_rogue(r->kind, r->expected);
    } else {
        fprintf(stderr, "unknown test %s\n", test);
        return 2;
    }
    devrt_module_unload(module);
    devrt_device_close(device);
    return failures ? 1 : 0;
}
