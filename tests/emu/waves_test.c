/*
 * The emulation's wide waves under independent scheduling: runs the kernels of
 * tests/kernels/waves.c and checks how their lanes met. One test per invocation:
 * waves_test IMAGE TEST [WAVE]. Exits 0 when the test holds, 1 when it does not.
 *
 *   malloc_atomics     a converged 64-lane wave of mixed-size devrt_malloc calls issues
 *                      about as many atomics as size classes; one-lane waves, one per lane
 *   printf_request     a converged 64-lane printf takes one port (one request: its take
 *                      and the ready ring's announcements are its only atomics) and every
 *                      line arrives whole; one-lane waves make one request per lane
 *   lockstep_control   a kernel that re-reads the active mask inside a collective takes
 *                      slots twice under the random schedule within a bounded number of
 *                      launches (exits 1, saying at which launch)
 *   lockstep_correct   the same kernel taking the mask once passes the same launches
 *   raise_mid_collective  a lane raises between collectives over its wave's mask: the
 *                      others go on without it, the report arrives, nothing hangs
 *   back_to_back       converged code under the converged schedule: a ballot and the
 *                      active mask right after it name the whole wave, in every launch
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/host.h>

#include "harness.h"

/* Launches of the lock-step tests: the control must be caught within them. */
#define LOCKSTEP_LAUNCHES 20u
#define LOCKSTEP_SEED 20261202u

static const char *image;
static devrt_device *device;
static devrt_module *module;

/* How many of the N words a launch set are not 1: each lane was to set its own once. */
static uint32_t not_once(const uint32_t *words, uint32_t n)
{
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < n; ++i)
        wrong += words[i] != 1;
    return wrong;
}

static int open_device(uint32_t wave, uint32_t schedule)
{
    struct devrt_device_options options = {
        .emu_wave_size = wave, .emu_schedule = schedule, .emu_seed = LOCKSTEP_SEED};
    return harness_open(DEVRT_BACKEND_EMU, &options, image, &device, &module);
}

static void close_device(void)
{
    devrt_module_unload(module);
    devrt_device_close(device);
}

/* The image's count of device atomics (device/arch/emu.c), through its test-only hook. */
static uint64_t atomics(void)
{
    void *handle = dlopen(image, RTLD_NOW | RTLD_NOLOAD);
    if (!handle) {
        fprintf(stderr, "the image is not loaded: %s\n", dlerror());
        exit(1);
    }
    uint64_t (*count)(void) = (uint64_t (*)(void))dlsym(handle, "__devrt_emu_atomics");
    if (!count) {
        fprintf(stderr, "the image has no __devrt_emu_atomics\n");
        exit(1);
    }
    uint64_t n = count();
    dlclose(handle);
    return n;
}

/* Atomics of one 64-lane workgroup's devrt_malloc, once the slabs exist. */
static uint64_t malloc_atomics(uint32_t wave)
{
    if (open_device(wave, DEVRT_EMU_SCHEDULE_CONVERGED))
        exit(1);
    uint32_t *failures = devrt_mem_alloc(device, sizeof *failures);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(failures)};
    struct devrt_launch_config config = harness_grid1(1, 64);
    uint64_t before = 0;
    for (int launch = 0; launch < 2; ++launch) {
        before = atomics();
        CHECK(devrt_launch(module, "malloc_mixed", &config, args, 1, NULL) == DEVRT_SUCCESS, "%s",
              devrt_last_error());
    }
    uint64_t taken = atomics() - before;
    CHECK(*failures == 0, "%u allocations failed", *failures);
    devrt_mem_free(device, failures);
    close_device();
    return taken;
}

static void test_malloc_atomics(void)
{
    const uint64_t lanes = 64, classes = 4;
    uint64_t wide = malloc_atomics(64), narrow = malloc_atomics(1);
    printf("64 lanes of %llu size classes: %llu atomics in 64-lane waves, %llu in one-lane waves\n",
           (unsigned long long)classes, (unsigned long long)wide, (unsigned long long)narrow);
    /* A group reserves, claims one bitmap word (sometimes two) and counts its bytes. */
    CHECK(wide <= 4 * classes, "%llu atomics for %llu classes", (unsigned long long)wide,
          (unsigned long long)classes);
    /* The control: alone in its wave, every lane does all of that itself. */
    CHECK(narrow >= 3 * lanes, "one-lane waves took only %llu atomics for %llu lanes",
          (unsigned long long)narrow, (unsigned long long)lanes);
}

/* Every unit the module printed. */
static struct {
    pthread_mutex_t lock;
    size_t count;
    char units[256][64];
    size_t bad;
} output = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_output(void *context, uint32_t stream, const char *data, size_t size)
{
    (void)context;
    (void)stream;
    pthread_mutex_lock(&output.lock);
    if (output.count < 256 && size < 64) {
        memcpy(output.units[output.count], data, size);
        output.units[output.count++][size] = '\0';
    } else {
        output.bad++;
    }
    pthread_mutex_unlock(&output.lock);
}

/* Whether each of `lanes` printed exactly one line, `format` with its lane. */
static uint32_t count_lines(const char *format, uint32_t lanes, uint32_t skip)
{
    uint32_t wrong = 0;
    for (uint32_t lane = 0; lane < lanes; ++lane) {
        char line[64];
        snprintf(line, sizeof line, format, lane);
        uint32_t seen = 0;
        for (size_t i = 0; i < output.count; ++i)
            seen += strcmp(output.units[i], line) == 0;
        wrong += seen != (lane == skip ? 0u : 1u);
    }
    return wrong + (uint32_t)output.bad;
}

static uint64_t printf_requests(uint32_t wave)
{
    if (open_device(wave, DEVRT_EMU_SCHEDULE_CONVERGED))
        exit(1);
    devrt_module_set_output_callback(module, on_output, NULL);
    output.count = output.bad = 0;
    struct devrt_launch_config config = harness_grid1(1, 64);
    uint64_t before = atomics();
    CHECK(devrt_launch(module, "hello", &config, NULL, 0, NULL) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    /*
     * A request takes a port with one atomic, and announces each packet it posts in the ready
     * ring with one more (this one's line fills two packets); nothing else of printf is one.
     */
    uint64_t requests = atomics() - before;
    CHECK(output.count == 64, "%zu units for 64 lanes", output.count);
    uint32_t wrong = count_lines(wave == 1 ? "lane 0 of the wave\n" : "lane %u of the wave\n",
                                 wave == 1 ? 1 : 64, UINT32_MAX);
    CHECK(wave == 1 || wrong == 0, "%u lanes printed something else than their one line", wrong);
    close_device();
    return requests;
}

static void test_printf_request(void)
{
    uint64_t wide = printf_requests(64), narrow = printf_requests(1);
    printf("64 lanes printing: %llu atomics in a 64-lane wave, %llu in one-lane waves\n",
           (unsigned long long)wide, (unsigned long long)narrow);
    /* One port, two packets: a take and two announcements. */
    CHECK(wide == 3, "a 64-lane printf took %llu atomics, not one request's 3",
          (unsigned long long)wide);
    CHECK(narrow == 64 * wide, "one-lane waves took %llu atomics for 64 lanes, not 64 requests'",
          (unsigned long long)narrow);
}

/* Returns the launch (from 1) at which slots were taken twice or never, 0 if none was. */
static uint32_t lockstep(uint32_t reread)
{
    const uint32_t groups = 2, block = 64, n = groups * block;
    if (open_device(64, DEVRT_EMU_SCHEDULE_RANDOM))
        exit(1);
    uint32_t *counter = devrt_mem_alloc(device, sizeof *counter);
    uint32_t *slots = devrt_mem_alloc(device, n * sizeof *slots);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(counter), DEVRT_ARG_PTR(slots), DEVRT_ARG_UINT(n),
                               DEVRT_ARG_UINT(reread)};
    struct devrt_launch_config config = harness_grid1(groups, block);
    uint32_t caught = 0;
    for (uint32_t launch = 1; launch <= LOCKSTEP_LAUNCHES && !caught; ++launch) {
        *counter = 0;
        memset(slots, 0, n * sizeof *slots);
        CHECK(devrt_launch(module, "take_slots", &config, args, 4, NULL) == DEVRT_SUCCESS, "%s",
              devrt_last_error());
        uint32_t wrong = not_once(slots, n);
        if (wrong || *counter != n) {
            printf("launch %u: %u of %u slots taken twice or never\n", launch, wrong, n);
            caught = launch;
        }
    }
    devrt_mem_free(device, counter);
    devrt_mem_free(device, slots);
    close_device();
    return caught;
}

static int test_lockstep_control(void)
{
    uint32_t caught = lockstep(1);
    if (!caught) {
        printf("the lock-step assumption went unnoticed in %u launches\n", LOCKSTEP_LAUNCHES);
        return 0;
    }
    printf("lock-step assumption caught at launch %u of %u\n", caught, LOCKSTEP_LAUNCHES);
    return 1;
}

static void test_lockstep_correct(void)
{
    uint32_t caught = lockstep(0);
    CHECK(caught == 0, "the mask taken once failed at launch %u", caught);
    if (!caught)
        printf("the mask taken once passed %u launches\n", LOCKSTEP_LAUNCHES);
}

static void test_raise_mid_collective(uint32_t wave)
{
    const uint32_t block = 128, victim = 69;
    if (open_device(wave, DEVRT_EMU_SCHEDULE_CONVERGED))
        exit(1);
    devrt_module_set_output_callback(module, on_output, NULL);
    devrt_module_set_report_file(module, NULL);
    output.count = output.bad = 0;
    uint64_t *seen = devrt_mem_alloc(device, block * sizeof *seen);
    uint32_t *first = devrt_mem_alloc(device, block * sizeof *first);
    uint32_t *done = devrt_mem_alloc(device, sizeof *done);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(seen), DEVRT_ARG_PTR(first), DEVRT_ARG_PTR(done),
                               DEVRT_ARG_UINT(victim)};
    struct devrt_launch_config config = harness_grid1(1, block);
    struct devrt_launch_report report;
    int status = devrt_launch(module, "raise_mid_collective", &config, args, 4, &report);
    CHECK(status == DEVRT_ERROR_EXCEPTION, "status %d: %s", status, devrt_last_error());
    const char *expected = "kernel raise_mid_collective raised a bounds error at workgroup "
                           "(0,0,0) workitem (69,0,0): raised mid-collective [";
    CHECK(strncmp(report.text, expected, strlen(expected)) == 0, "report '%s'", report.text);
    CHECK(*done == block - 1, "%u of %u other lanes finished", *done, block - 1);
    uint64_t all = wave == 64 ? ~0ull : (1ull << wave) - 1;
    uint32_t wrong = 0;
    for (uint32_t id = 0; id < block; ++id) {
        if (id == victim)
            continue;
        uint32_t base = id / wave * wave;
        bool mine = victim / wave == id / wave;
        uint64_t expected = mine ? all & ~(1ull << (victim % wave)) : all;
        wrong += seen[id] != expected || first[id] != (mine && victim == base ? base + 1 : base);
    }
    CHECK(wrong == 0, "%u lanes saw the wrong lanes after the raise", wrong);
    wrong = count_lines("lane %u went on\n", block, victim);
    CHECK(wrong == 0, "%u lanes' lines missing or wrong", wrong);
    printf("wave %u: lane %u raised; %u lanes went on\n", wave, victim, *done);
    devrt_mem_free(device, seen);
    devrt_mem_free(device, first);
    devrt_mem_free(device, done);
    close_device();
}

/*
 * The lanes a gathering let go are no longer held: before, the first of them to wake met
 * the others at its next operation as if they were held elsewhere, and closed it alone.
 */
static void test_back_to_back(uint32_t wave)
{
    const uint32_t block = 2 * wave, launches = 50;
    if (open_device(wave, DEVRT_EMU_SCHEDULE_CONVERGED))
        exit(1);
    uint32_t *out = devrt_mem_alloc(device, block * sizeof *out);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(out), DEVRT_ARG_UINT(wave)};
    struct devrt_launch_config config = harness_grid1(1, block);
    uint32_t bad_launches = 0;
    for (uint32_t launch = 0; launch < launches; ++launch) {
        memset(out, 0, block * sizeof *out);
        CHECK(devrt_launch(module, "back_to_back", &config, args, 2, NULL) == DEVRT_SUCCESS, "%s",
              devrt_last_error());
        uint32_t wrong = not_once(out, block);
        bad_launches += wrong != 0;
    }
    printf("wave %u: %u of %u launches had a lane whose ballot and active mask were not its "
           "whole wave\n",
           wave, bad_launches, launches);
    CHECK(bad_launches == 0, "%u launches split a converged wave", bad_launches);
    devrt_mem_free(device, out);
    close_device();
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: waves_test IMAGE TEST [WAVE]\n");
        return 2;
    }
    image = argv[1];
    const char *test = argv[2];
    uint32_t wave = argc > 3 ? (uint32_t)atoi(argv[3]) : 64;
    if (!strcmp(test, "malloc_atomics")) {
        test_malloc_atomics();
    } else if (!strcmp(test, "printf_request")) {
        test_printf_request();
    } else if (!strcmp(test, "lockstep_control")) {
        return test_lockstep_control();
    } else if (!strcmp(test, "lockstep_correct")) {
        test_lockstep_correct();
    } else if (!strcmp(test, "raise_mid_collective")) {
        test_raise_mid_collective(wave);
    } else if (!strcmp(test, "back_to_back")) {
        test_back_to_back(wave);
    } else {
        fprintf(stderr, "unknown test %s\n", test);
        return 2;
    }
    return failures ? 1 : 0;
}
