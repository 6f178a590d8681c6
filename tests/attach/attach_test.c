/*
 * Attach (<devrt/attach.h>): a program loads a devrt kernel image with its own GPU API,
 * attaches devrt, launches on its own stream, synchronizes, checks, detaches. The same
 * sequence runs through each API:
 *
 *   attach_test IMAGE TEST emu    the host API of fake_gpu.c, through devrt_attach (CI)
 *   attach_test IMAGE TEST cuda   the CUDA driver, through devrt_cuda_attach (an NVIDIA GPU)
 *   attach_test IMAGE TEST hip    HIP, through devrt_hip_attach (an AMD GPU, or the fake
 *                                 libamdhip64 of this folder named by DEVRT_HIP_LIBRARY)
 *
 * TEST: rpc, heap, printf (the kernels of tests/kernels), detach_waits, detach_control,
 * two_checks, refuse. Exits 0 when every check holds, 77 when the API has no device; refuse exits
 * with the status devrt gave.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <devrt/abi.h>
#include <devrt/attach.h>

#include "harness.h"

#ifdef ATTACH_TEST_CUDA
#include <cuda.h>

#include <devrt/cuda.h>
#endif
#ifdef ATTACH_TEST_HIP
#include <devrt/hip.h>

#include "hip_calls.h"
#endif
#ifdef ATTACH_TEST_EMU
#include "fake_gpu.h"
#endif

/* What the test does with its API; each API below fills one. */
struct api {
    /* 0, HARNESS_SKIP without a device, or 1 with the reason printed. */
    int (*open)(void);
    int (*load)(const char *path, void **module);
    void (*unload)(void *module);
    int (*attach)(void *module, devrt_module **attached);
    int (*launch)(void *module, const char *kernel, uint32_t grid, uint32_t block,
                  const struct devrt_arg *args, size_t count);
    int (*synchronize)(void);
    /* Host memory the kernels read and write at the same address, zeroed. */
    void *(*host_alloc)(size_t size);
    void (*host_free)(void *ptr);
};

/* ---- The emulation: fake_gpu.c, attached through devrt_attach ---- */

static bool emu_no_wait; /* detach_control: synchronize returns at once */
#ifdef ATTACH_TEST_EMU

static int emu_open(void)
{
    return 0;
}

static int emu_load(const char *path, void **module)
{
    const char *error = NULL;
    if (fake_gpu_load(path, (struct fake_gpu_module **)module, &error) != 0) {
        fprintf(stderr, "cannot load %s: %s\n", path, error);
        return 1;
    }
    return 0;
}

static void emu_unload(void *module)
{
    fake_gpu_unload(module);
}

static int emu_find_global(void *context, const char *name, void **address, size_t *size)
{
    return fake_gpu_global(context, name, address, size);
}

static void *emu_alloc(void *context, size_t size)
{
    (void)context;
    return fake_gpu_alloc(size);
}

static void emu_free(void *context, void *ptr)
{
    (void)context;
    fake_gpu_free(ptr);
}

static int emu_copy(void *context, void *dst, const void *src, size_t size)
{
    (void)context;
    return fake_gpu_copy(dst, src, size);
}

static int emu_synchronize_calls(void *context)
{
    (void)context;
    if (!emu_no_wait)
        fake_gpu_synchronize();
    return 0;
}

static int emu_attach(void *module, devrt_module **attached)
{
    const struct devrt_attach_api api = {
        .backend = DEVRT_BACKEND_EMU,
        .wave_size = 1,
        .find_global = emu_find_global,
        .alloc_device = emu_alloc,
        .free_device = emu_free,
        .alloc_host = emu_alloc,
        .free_host = emu_free,
        .copy = emu_copy,
        .synchronize = emu_synchronize_calls,
    };
    return devrt_attach(&api, module, "emulation module", NULL, attached);
}

static int emu_launch(void *module, const char *kernel, uint32_t grid, uint32_t block,
                      const struct devrt_arg *args, size_t count)
{
    const uint32_t g[3] = {grid, 1, 1}, b[3] = {block, 1, 1};
    return fake_gpu_launch(module, kernel, g, b, args, count);
}

static int emu_synchronize(void)
{
    fake_gpu_synchronize();
    return 0;
}

static void *emu_host_alloc(size_t size)
{
    return fake_gpu_alloc(size);
}

static const struct api emu_api = {emu_open,   emu_load,        emu_unload,     emu_attach,
                                   emu_launch, emu_synchronize, emu_host_alloc, fake_gpu_free};
#else
/* Without libffi (a GPU machine's host-only build) there is no emulation to watch. */
static uint64_t fake_gpu_synchronizations(void)
{
    return 0;
}
static uint64_t fake_gpu_frees_while_running(void)
{
    return 0;
}
static void fake_gpu_synchronize(void) {}
static const struct api emu_api;
#endif

/* ---- The CUDA driver, opened as a program would link it ---- */
#ifdef ATTACH_TEST_CUDA
#define CUDA_NAME_(name) #name
#define CUDA_NAME(name) CUDA_NAME_(name)
#define CUDA_CALLS(X)                                                                              \
    X(cuInit)                                                                                      \
    X(cuDeviceGet)                                                                                 \
    X(cuDevicePrimaryCtxRetain)                                                                    \
    X(cuCtxSetCurrent)                                                                             \
    X(cuModuleLoadData)                                                                            \
    X(cuModuleUnload)                                                                              \
    X(cuLaunchKernel)                                                                              \
    X(cuModuleGetFunction)                                                                         \
    X(cuStreamCreate)                                                                              \
    X(cuStreamSynchronize)                                                                         \
    X(cuMemHostAlloc)                                                                              \
    X(cuMemFreeHost)

static struct {
#define X(fn) __typeof__(fn) *fn;
    CUDA_CALLS(X)
#undef X
    CUcontext context;
    CUstream stream;
} cuda;

static int cuda_open(void)
{
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        printf("skipped: CUDA: no NVIDIA driver (%s)\n", dlerror());
        return HARNESS_SKIP;
    }
#define X(fn)                                                                                      \
    if (!(cuda.fn = (__typeof__(cuda.fn))dlsym(library, CUDA_NAME(fn)))) {                         \
        fprintf(stderr, "the driver lacks %s\n", CUDA_NAME(fn));                                   \
        return 1;                                                                                  \
    }
    CUDA_CALLS(X)
#undef X
    CUdevice device;
    if (cuda.cuInit(0) != CUDA_SUCCESS || cuda.cuDeviceGet(&device, 0) != CUDA_SUCCESS) {
        printf("skipped: CUDA: no NVIDIA GPU\n");
        return HARNESS_SKIP;
    }
    if (cuda.cuDevicePrimaryCtxRetain(&cuda.context, device) != CUDA_SUCCESS ||
        cuda.cuCtxSetCurrent(cuda.context) != CUDA_SUCCESS ||
        cuda.cuStreamCreate(&cuda.stream, 0) != CUDA_SUCCESS) {
        fprintf(stderr, "cannot set up the CUDA context\n");
        return 1;
    }
    return 0;
}

static int cuda_load(const char *path, void **module)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        perror(path);
        return 1;
    }
    static char ptx[8 << 20];
    size_t n = fread(ptx, 1, sizeof ptx - 1, file);
    fclose(file);
    ptx[n] = '\0';
    CUresult r = cuda.cuModuleLoadData((CUmodule *)module, ptx);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuModuleLoadData %s: %d\n", path, (int)r);
        return 1;
    }
    return 0;
}

static void cuda_unload(void *module)
{
    cuda.cuModuleUnload(module);
}

static int cuda_attach(void *module, devrt_module **attached)
{
    return devrt_cuda_attach(module, NULL, attached);
}

static int cuda_launch(void *module, const char *kernel, uint32_t grid, uint32_t block,
                       const struct devrt_arg *args, size_t count)
{
    CUfunction function;
    if (cuda.cuModuleGetFunction(&function, module, kernel) != CUDA_SUCCESS)
        return -1;
    void *params[16];
    for (size_t i = 0; i < count; ++i)
        params[i] = (void *)&args[i].value;
    return cuda.cuLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, cuda.stream, params, NULL) ==
                   CUDA_SUCCESS
               ? 0
               : -1;
}

static int cuda_synchronize(void)
{
    return cuda.cuStreamSynchronize(cuda.stream) == CUDA_SUCCESS ? 0 : -1;
}

static void *cuda_host_alloc(size_t size)
{
    void *ptr = NULL;
    if (cuda.cuMemHostAlloc(&ptr, size, CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS)
        return NULL;
    memset(ptr, 0, size);
    return ptr;
}

static void cuda_host_free(void *ptr)
{
    cuda.cuMemFreeHost(ptr);
}

static const struct api cuda_api = {cuda_open,   cuda_load,        cuda_unload,     cuda_attach,
                                    cuda_launch, cuda_synchronize, cuda_host_alloc, cuda_host_free};
#endif

/* ---- HIP, opened as a program would link it (hip_calls.h) ---- */
#ifdef ATTACH_TEST_HIP
static struct hip_calls hip;
static hipStream_t hip_stream;

static int hip_open(void)
{
    const char *error = hip_calls_open(&hip);
    if (error) {
        printf("skipped: HIP: %s\n", error);
        return HARNESS_SKIP;
    }
    int count = 0;
    if (hip.hipGetDeviceCount(&count) != hipSuccess || count == 0) {
        printf("skipped: HIP: no AMD GPU\n");
        return HARNESS_SKIP;
    }
    if (hip.hipSetDevice(0) != hipSuccess || hip.hipStreamCreate(&hip_stream) != hipSuccess) {
        fprintf(stderr, "cannot set up HIP\n");
        return 1;
    }
    return 0;
}

static int hip_load(const char *path, void **module)
{
    if (hip.hipModuleLoad((hipModule_t *)module, path) != hipSuccess) {
        fprintf(stderr, "hipModuleLoad %s failed\n", path);
        return 1;
    }
    return 0;
}

static void hip_unload(void *module)
{
    hip.hipModuleUnload(module);
}

static int hip_attach(void *module, devrt_module **attached)
{
    return devrt_hip_attach(module, NULL, attached);
}

static int hip_launch(void *module, const char *kernel, uint32_t grid, uint32_t block,
                      const struct devrt_arg *args, size_t count)
{
    hipFunction_t function;
    if (hip.hipModuleGetFunction(&function, module, kernel) != hipSuccess)
        return -1;
    void *params[16];
    for (size_t i = 0; i < count; ++i)
        params[i] = (void *)&args[i].value;
    return hip.hipModuleLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, hip_stream, params,
                                     NULL) == hipSuccess
               ? 0
               : -1;
}

static int hip_synchronize(void)
{
    return hip.hipStreamSynchronize(hip_stream) == hipSuccess ? 0 : -1;
}

static void *hip_host_alloc(size_t size)
{
    void *ptr = NULL;
    if (hip.hipHostMalloc(&ptr, size, hipHostMallocMapped) != hipSuccess)
        return NULL;
    memset(ptr, 0, size);
    return ptr;
}

static void hip_host_free(void *ptr)
{
    hip.hipHostFree(ptr);
}

static const struct api hip_api = {hip_open,   hip_load,        hip_unload,     hip_attach,
                                   hip_launch, hip_synchronize, hip_host_alloc, hip_host_free};
#endif

/* ---- The sequence ---- */

static const struct api *api;
static bool emulated;

static int attach_or_fail(void *module, devrt_module **attached)
{
    int status = api->attach(module, attached);
    if (status != DEVRT_SUCCESS)
        fprintf(stderr, "cannot attach: %s\n", devrt_last_error());
    return status;
}

/* Launch, and after the program's own synchronization, check. */
static int launch_and_check(void *module, devrt_module *attached, const char *kernel, uint32_t grid,
                            uint32_t block, const struct devrt_arg *args, size_t count,
                            struct devrt_launch_report *report)
{
    CHECK(api->launch(module, kernel, grid, block, args, count) == 0, "launching %s", kernel);
    CHECK(api->synchronize() == 0, "synchronizing after %s", kernel);
    const struct devrt_launch_config config = {.grid = {grid, 1, 1}, .block = {block, 1, 1}};
    return devrt_attached_check(attached, kernel, &config, report);
}

static void test_rpc(void *module, devrt_module *attached)
{
    uint32_t *counters = api->host_alloc(2 * sizeof(uint32_t));
    struct devrt_arg echo[] = {DEVRT_ARG_PTR(&counters[0]), DEVRT_ARG_PTR(&counters[1]),
                               DEVRT_ARG_UINT(300), DEVRT_ARG_UINT(3)};
    struct devrt_launch_report report;
    /* Twice on the program's stream, then one check for both. */
    CHECK(api->launch(module, "echo", 2, 32, echo, 4) == 0, "first echo");
    CHECK(api->launch(module, "echo", 2, 32, echo, 4) == 0, "second echo");
    CHECK(api->synchronize() == 0, "synchronize");
    const struct devrt_launch_config config = {.grid = {2, 1, 1}, .block = {32, 1, 1}};
    CHECK(devrt_attached_check(attached, "echo", &config, &report) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    CHECK(counters[0] == 0 && counters[1] == 128, "echo: %u failures, %u of 128 lanes done",
          counters[0], counters[1]);

    struct devrt_arg raise[] = {DEVRT_ARG_U64(37), DEVRT_ARG_UINT(DEVRT_EXCEPTION_BOUNDS)};
    int status = launch_and_check(module, attached, "raise_at", 2, 32, raise, 2, &report);
    CHECK(status == DEVRT_ERROR_EXCEPTION, "raise_at: %s", devrt_status_string(status));
    CHECK(report.code == DEVRT_EXCEPTION_BOUNDS && report.workgroup[0] == 1 &&
              report.workitem[0] == 5,
          "report: %s", report.text);
    CHECK(!strcmp(report.text, "kernel raise_at raised a bounds error at workgroup (1,0,0) "
                               "workitem (5,0,0): raised on purpose"),
          "report: %s", report.text);

    /* The next kernels start clean, and can raise again. */
    counters[1] = 0;
    status = launch_and_check(module, attached, "echo", 2, 32, echo, 4, &report);
    CHECK(status == DEVRT_SUCCESS && counters[1] == 64, "echo after the raise: %s, %u done",
          devrt_status_string(status), counters[1]);
    raise[0] = DEVRT_ARG_U64(3);
    status = launch_and_check(module, attached, "raise_at", 2, 32, raise, 2, &report);
    CHECK(status == DEVRT_ERROR_EXCEPTION && report.workgroup[0] == 0 && report.workitem[0] == 3,
          "the second raise: %s: %s", devrt_status_string(status), report.text);
    CHECK(devrt_detach(attached) == DEVRT_SUCCESS, "detach: %s", devrt_last_error());

    /* Detaching gave __devrt_state back: the module can be attached again. */
    if (attach_or_fail(module, &attached) == DEVRT_SUCCESS) {
        counters[1] = 0;
        status = launch_and_check(module, attached, "echo", 2, 32, echo, 4, &report);
        CHECK(status == DEVRT_SUCCESS && counters[1] == 64, "echo attached again: %s",
              devrt_status_string(status));
        CHECK(devrt_detach(attached) == DEVRT_SUCCESS, "detach: %s", devrt_last_error());
    } else {
        failures++;
    }
    api->host_free(counters);
}

static void test_heap(void *module, devrt_module *attached)
{
    enum { LANES = 64, PER_LANE = 8 };
    struct block {
        void *ptr;
        uint64_t size;
    } *blocks = api->host_alloc(LANES * PER_LANE * sizeof *blocks);
    uint32_t *failed = api->host_alloc(sizeof *failed);
    struct devrt_launch_report report;
    for (uint32_t seed = 1; seed <= 2; ++seed) {
        struct devrt_arg fill[] = {DEVRT_ARG_PTR(blocks), DEVRT_ARG_UINT(PER_LANE),
                                   DEVRT_ARG_UINT(seed), DEVRT_ARG_PTR(failed)};
        int status = launch_and_check(module, attached, "fill", 2, 32, fill, 4, &report);
        CHECK(status == DEVRT_SUCCESS, "fill: %s", devrt_last_error());
        struct devrt_heap_stats stats;
        CHECK(devrt_heap_stats(attached, &stats) == DEVRT_SUCCESS && stats.bytes_in_use > 0,
              "the heap holds the blocks");
        struct devrt_arg check[] = {DEVRT_ARG_PTR(blocks), DEVRT_ARG_UINT(PER_LANE),
                                    DEVRT_ARG_PTR(failed)};
        status = launch_and_check(module, attached, "check_and_free", 2, 32, check, 3, &report);
        CHECK(status == DEVRT_SUCCESS, "check_and_free: %s", devrt_last_error());
        CHECK(*failed == 0, "%u blocks failed", *failed);
        CHECK(devrt_heap_stats(attached, &stats) == DEVRT_SUCCESS && stats.bytes_in_use == 0,
              "%llu bytes still in use", (unsigned long long)stats.bytes_in_use);
    }
    size_t got = 0;
    for (size_t i = 0; i < LANES * PER_LANE; ++i)
        got += blocks[i].ptr != NULL;
    CHECK(got == LANES * PER_LANE, "%zu of %d allocations", got, LANES * PER_LANE);
    CHECK(devrt_detach(attached) == DEVRT_SUCCESS, "detach: %s", devrt_last_error());
    api->host_free(blocks);
    api->host_free(failed);
}

static uint64_t checksum(uint64_t id)
{
    return (id + 1) * 0x9e3779b97f4a7c15ull;
}

static char *read_all(FILE *file)
{
    fflush(file);
    long size = ftell(file);
    char *text = calloc(1, (size_t)size + 1);
    rewind(file);
    if (fread(text, 1, (size_t)size, file) != (size_t)size)
        text[0] = '\0';
    fseek(file, 0, SEEK_END);
    return text;
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        ++n;
    return n;
}

static void test_printf(void *module, devrt_module *attached)
{
    FILE *out = tmpfile();
    devrt_module_set_output_file(attached, out);
    devrt_module_set_report_file(attached, out);
    char *pattern = api->host_alloc(601);
    memset(pattern, 'x', 600);
    struct devrt_arg lines[] = {DEVRT_ARG_PTR(pattern), DEVRT_ARG_UINT(64)};
    CHECK(api->launch(module, "lines", 2, 32, lines, 2) == 0, "first lines");
    CHECK(api->launch(module, "lines", 2, 32, lines, 2) == 0, "second lines");
    CHECK(api->synchronize() == 0, "synchronize");
    struct devrt_launch_report report;
    const struct devrt_launch_config config = {.grid = {2, 1, 1}, .block = {32, 1, 1}};
    CHECK(devrt_attached_check(attached, "lines", &config, &report) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    char *text = read_all(out);
    for (uint64_t id = 0; id < 64; ++id) {
        char sum[64];
        snprintf(sum, sizeof sum, "sum %016llx\n", (unsigned long long)checksum(id));
        CHECK(count_of(text, sum) == 2, "lane %llu's line %zu times, not twice",
              (unsigned long long)id, count_of(text, sum));
    }
    CHECK(count_of(text, "lane ") == 128, "%zu lines", count_of(text, "lane "));
    free(text);

    /* The kernel's output comes before the report line. */
    struct devrt_arg victim[] = {DEVRT_ARG_U64(5)};
    long mark = ftell(out);
    int status = launch_and_check(module, attached, "print_then_raise", 1, 8, victim, 1, &report);
    CHECK(status == DEVRT_ERROR_EXCEPTION && report.code == DEVRT_EXCEPTION_DOMAIN,
          "print_then_raise: %s", devrt_status_string(status));
    text = read_all(out);
    const char *tail = text + mark;
    const char *line = strstr(tail, "kernel print_then_raise raised a domain error at workgroup "
                                    "(0,0,0) workitem (5,0,0): raised after printing");
    CHECK(line != NULL, "no report line in: %s", tail);
    if (line) {
        char *before_report = strndup(tail, (size_t)(line - tail));
        CHECK(count_of(before_report, "before ") == 8 && count_of(before_report, "after ") == 7,
              "the kernel's 15 lines all precede the report: %s", tail);
        CHECK(strchr(line, '\n') == line + strlen(line) - 1, "the report is the last line: %s",
              tail);
        free(before_report);
    }
    free(text);
    /* devrt_module_unload of an attached module detaches it. */
    devrt_module_unload(attached);
    fclose(out);
    api->host_free(pattern);
}

struct detach_thread {
    devrt_module *attached;
    int status;
    bool returned;
};

static void *detach_main(void *arg)
{
    struct detach_thread *d = arg;
    d->status = devrt_detach(d->attached);
    __atomic_store_n(&d->returned, true, __ATOMIC_RELEASE);
    return NULL;
}

struct check_thread {
    devrt_module *attached;
    pthread_barrier_t *together;
    int status;
};

static void *check_main(void *arg)
{
    struct check_thread *c = arg;
    const struct devrt_launch_config config = {.grid = {2, 1, 1}, .block = {32, 1, 1}};
    struct devrt_launch_report report;
    pthread_barrier_wait(c->together);
    c->status = devrt_attached_check(c->attached, "raise_at", &config, &report);
    return NULL;
}

/*
 * Two threads check at once after each raise: one gets the exception, the other a clean
 * check (they take turns), and the module's record stays its own: the kernels after the
 * rounds run clean and raise as before. Checked together, both reported the one raise.
 */
static void test_two_checks(void *module, devrt_module *attached)
{
    devrt_module_set_report_file(attached, NULL);
    struct devrt_arg raise[] = {DEVRT_ARG_U64(37), DEVRT_ARG_UINT(DEVRT_EXCEPTION_BOUNDS)};
    uint32_t exceptions[2] = {0};
    for (int round = 0; round < 20; ++round) {
        CHECK(api->launch(module, "raise_at", 2, 32, raise, 2) == 0 && api->synchronize() == 0,
              "raise_at, round %d", round);
        pthread_barrier_t together;
        pthread_barrier_init(&together, NULL, 2);
        struct check_thread c[2] = {{attached, &together, -1}, {attached, &together, -1}};
        pthread_t threads[2];
        for (int i = 0; i < 2; ++i)
            pthread_create(&threads[i], NULL, check_main, &c[i]);
        for (int i = 0; i < 2; ++i)
            pthread_join(threads[i], NULL);
        pthread_barrier_destroy(&together);
        uint32_t raised =
            (c[0].status == DEVRT_ERROR_EXCEPTION) + (c[1].status == DEVRT_ERROR_EXCEPTION);
        exceptions[raised > 1]++;
        CHECK(raised == 1 && (c[0].status == DEVRT_SUCCESS || c[1].status == DEVRT_SUCCESS),
              "round %d: the two checks returned %s and %s", round,
              devrt_status_string(c[0].status), devrt_status_string(c[1].status));
    }
    printf("20 rounds of two checks at once after a raise: %u with one report, %u with two\n",
           exceptions[0], exceptions[1]);
    uint32_t *counters = api->host_alloc(2 * sizeof(uint32_t));
    struct devrt_arg echo[] = {DEVRT_ARG_PTR(&counters[0]), DEVRT_ARG_PTR(&counters[1]),
                               DEVRT_ARG_UINT(300), DEVRT_ARG_UINT(3)};
    struct devrt_launch_report report;
    int status = launch_and_check(module, attached, "echo", 2, 32, echo, 4, &report);
    CHECK(status == DEVRT_SUCCESS && counters[1] == 64, "echo after the rounds: %s, %u done",
          devrt_status_string(status), counters[1]);
    raise[0] = DEVRT_ARG_U64(3);
    status = launch_and_check(module, attached, "raise_at", 2, 32, raise, 2, &report);
    CHECK(status == DEVRT_ERROR_EXCEPTION && report.workitem[0] == 3, "the last raise: %s: %s",
          devrt_status_string(status), report.text);
    CHECK(devrt_detach(attached) == DEVRT_SUCCESS, "detach: %s", devrt_last_error());
    api->host_free(counters);
}

/*
 * Detach while a kernel waits at a gate: detach waits for it, serving it meanwhile (its
 * line is printed after the gate opens), and frees nothing under it (fake_gpu counts).
 */
static void test_detach_waits(void *module, devrt_module *attached)
{
    FILE *out = tmpfile();
    devrt_module_set_output_file(attached, out);
    uint32_t *gate = api->host_alloc(2 * sizeof *gate);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&gate[0]), DEVRT_ARG_UINT(0), DEVRT_ARG_PTR(&gate[1])};
    CHECK(api->launch(module, "after_gate", 1, 1, args, 3) == 0, "launch after_gate");
    uint64_t waits = fake_gpu_synchronizations();
    /* The fake HIP counts its calls: hipDeviceSynchronize is the detach's wait there. */
    const char *hip_library = getenv("DEVRT_HIP_LIBRARY");
    void *fake_hip = hip_library ? dlopen(hip_library, RTLD_NOW | RTLD_NOLOAD) : NULL;
    unsigned (*fake_hip_calls)(const char *) = fake_hip ? dlsym(fake_hip, "fake_hip_calls") : NULL;
    unsigned hip_waits = fake_hip_calls ? fake_hip_calls("hipDeviceSynchronize") : 0;
    struct detach_thread d = {.attached = attached};
    pthread_t thread;
    pthread_create(&thread, NULL, detach_main, &d);
    if (emulated) {
        /* Until the detach is inside the API's synchronize, which waits for the gate. */
        while (fake_gpu_synchronizations() == waits)
            sched_yield();
    } else if (fake_hip_calls) {
        while (fake_hip_calls("hipDeviceSynchronize") == hip_waits)
            sched_yield();
    } else {
        /* A GPU API's synchronize cannot be watched: give the detach time to reach it. */
        nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    }
    CHECK(!__atomic_load_n(&d.returned, __ATOMIC_ACQUIRE),
          "devrt_detach returned while the kernel still ran");
    __atomic_store_n(&gate[0], 1u, __ATOMIC_RELEASE);
    pthread_join(thread, NULL);
    CHECK(d.status == DEVRT_SUCCESS, "detach: %s", devrt_last_error());
    CHECK(__atomic_load_n(&gate[1], __ATOMIC_ACQUIRE) == 1, "the kernel did not end");
    char *text = read_all(out);
    CHECK(!strcmp(text, "after the gate\n"), "output: '%s'", text);
    free(text);
    if (emulated)
        CHECK(fake_gpu_frees_while_running() == 0, "%llu frees while the kernel ran",
              (unsigned long long)fake_gpu_frees_while_running());
    fclose(out);
    api->host_free(gate);
}

/*
 * The control: with an API whose synchronize does not wait, detach frees memory while the
 * kernel runs, and fake_gpu sees it. So the count above can fail.
 */
static void test_detach_control(void *module, devrt_module *attached)
{
    uint32_t *gate = api->host_alloc(2 * sizeof *gate);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&gate[0]), DEVRT_ARG_UINT(1), DEVRT_ARG_PTR(&gate[1])};
    CHECK(api->launch(module, "after_gate", 1, 1, args, 3) == 0, "launch after_gate");
    emu_no_wait = true;
    CHECK(devrt_detach(attached) == DEVRT_SUCCESS, "detach: %s", devrt_last_error());
    uint64_t freed = fake_gpu_frees_while_running();
    CHECK(freed > 0, "no free seen while the kernel ran");
    printf("frees while the kernel ran, without the wait: %llu\n", (unsigned long long)freed);
    __atomic_store_n(&gate[0], 1u, __ATOMIC_RELEASE);
    fake_gpu_synchronize();
    CHECK(gate[1] == 1, "the kernel did not end");
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s IMAGE TEST [emu|cuda|hip]\n", argv[0]);
        return 2;
    }
    const char *which = argc > 3 ? argv[3] : "emu";
    const char *test = argv[2];
    api = &emu_api;
    emulated = !strcmp(which, "emu");

#ifdef ATTACH_TEST_CUDA
    if (!strcmp(which, "cuda"))
        api = &cuda_api;
#endif
#ifdef ATTACH_TEST_HIP
    if (!strcmp(which, "hip"))
        api = &hip_api;
#endif
    if (api == &emu_api && (!emulated || !emu_api.open)) {
        printf("skipped: the %s API is not built into this test\n", which);
        return HARNESS_SKIP;
    }
    int opened = api->open();
    if (opened)
        return opened;
    /* A hardware test's code object is the one for the GPU's own target. */
    char image[4096];
    snprintf(image, sizeof image, "%s", argv[1]);
    if (strstr(image, "{target}")) {
        devrt_device *device;
        int found = devrt_device_open(DEVRT_BACKEND_HSA, 0, NULL, &device);
        if (found == DEVRT_SUCCESS) {
            found = devrt_device_image_path(device, argv[1], image, sizeof image);
            devrt_device_close(device);
        }
        if (found != DEVRT_SUCCESS) {
            fprintf(stderr, "no code object for this GPU: %s\n", devrt_last_error());
            return 1;
        }
    }
    /* The fake libamdhip64 says what devrt left allocated. */
    size_t (*live_allocations)(void) = NULL;
#ifdef ATTACH_TEST_HIP
    if (api == &hip_api)
        live_allocations = (size_t (*)(void))dlsym(hip.library, "fake_hip_live_allocations");
#endif
    void *module = NULL;
    if (api->load(image, &module))
        return 1;
    size_t live_before = live_allocations ? live_allocations() : 0;
    devrt_module *attached = NULL;
    int status = api->attach(module, &attached);
    if (!strcmp(test, "refuse")) {
        /* The module has no devrt: refused, with the status as the exit code. */
        printf("refused: %s\n", devrt_last_error());
        api->unload(module);
        return attached ? 1 : status;
    }
    if (status != DEVRT_SUCCESS) {
        fprintf(stderr, "cannot attach: %s\n", devrt_last_error());
        return 1;
    }
    if (!strcmp(test, "rpc"))
        test_rpc(module, attached);
    else if (!strcmp(test, "heap"))
        test_heap(module, attached);
    else if (!strcmp(test, "printf"))
        test_printf(module, attached);
    else if (!strcmp(test, "detach_waits"))
        test_detach_waits(module, attached);
    else if (!strcmp(test, "two_checks"))
        test_two_checks(module, attached);
    else if (!strcmp(test, "detach_control") && emulated)
        test_detach_control(module, attached);
    else {
        fprintf(stderr, "unknown test %s\n", test);
        return 2;
    }
    if (live_allocations)
        CHECK(live_allocations() == live_before, "devrt left %zu allocations behind",
              live_allocations() - live_before);
    /* Unloading the module is the program's, after devrt let go of it; the control's kernel
       ended only now. */
    api->unload(module);
    return failures ? 1 : 0;
}
