/*
 * What a launch, a module load and a device open cost through devrt, each beside the raw
 * API's figure from the same run:
 *
 *   launch_bench IMAGE [emu|hsa|cuda] [count=N]
 *
 * prints a markdown table (docs/performance.md holds the figures). IMAGE may name the GPU's
 * processor as {target}. The raw API is, on CUDA, the driver (cuLaunchKernel alone, and
 * followed by cuStreamSynchronize; cuModuleLoadData; the kernels from the same PTX); on the
 * emulation a plain call of the kernel's function (libc's malloc and free for the heap
 * kernel; dlopen for a load); on HSA none yet (the AQL packet alone wants a dispatch of its
 * own), so its rows hold devrt's figures only. Each launch figure is the median of N
 * launches (default 1000) of one workitem; an asynchronous figure is the time until
 * devrt_launch_async (cuLaunchKernel) returns, the wait not counted; a rate is 10,000
 * launches queued, then one wait. Loads: the first in the process (cold) and the median of
 * 20 more of the same image (warm), each split into the steps devrt_module_get_info reports
 * (a step's median apart: the medians need not add up). Device open: the first in the
 * process, split as devrt_device_get_info reports it (driver, devrt).
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/host.h>

#include "cuda_driver.h"
#include "harness.h"

#define STREAM_LAUNCHES 10000u
#define LOADS 20u

static devrt_device *device;
static devrt_module *module;
static const char *image;
static bool cuda;
/* HSA has no raw figure yet (the AQL packet alone): devrt's figures stand alone there. */
static bool hsa;
static char path[4096]; /* the image for the device ({target} replaced) */
static const struct devrt_launch_config one = {.grid = {1, 1, 1}, .block = {1, 1, 1}};

static struct cuda_driver cu;
static void *raw_stream;
static char *ptx; /* the image's text, for cuModuleLoadData */

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *samples, size_t n)
{
    qsort(samples, n, sizeof *samples, by_value);
    return samples[n / 2];
}

static void must(int status, const char *what)
{
    if (status != DEVRT_SUCCESS) {
        fprintf(stderr, "%s: %s\n", what, devrt_last_error());
        exit(1);
    }
}

/* devrt's launch of KERNEL, synchronous or only queued (then waited for, untimed). */
static double devrt_once(const char *kernel, bool async)
{
    double start = harness_seconds(), elapsed;
    if (async) {
        uint64_t id;
        must(devrt_launch_async(module, kernel, &one, NULL, 0, NULL, &id), kernel);
        elapsed = harness_seconds() - start;
        must(devrt_launch_wait(device, id, NULL), kernel);
    } else {
        must(devrt_launch(module, kernel, &one, NULL, 0, NULL), kernel);
        elapsed = harness_seconds() - start;
    }
    return elapsed;
}

/* The raw API's: the driver's launch (and synchronize), or a plain call on the emulation. */
struct raw_kernel {
    void *function; /* CUfunction, or the emulation's function */
    bool heap;      /* the emulation: libc's malloc and free instead of a call */
};

static void raw_launch(const struct raw_kernel *k)
{
    if (cu.launch_kernel(k->function, 1, 1, 1, 1, 1, 1, 0, raw_stream, NULL, NULL) != 0) {
        fprintf(stderr, "cuLaunchKernel failed\n");
        exit(1);
    }
}

static double raw_once(const struct raw_kernel *k, bool async)
{
    double start = harness_seconds(), elapsed;
    if (cuda) {
        raw_launch(k);
        if (async) {
            elapsed = harness_seconds() - start;
            cu.stream_synchronize(raw_stream);
            return elapsed;
        }
        cu.stream_synchronize(raw_stream);
    } else if (k->heap) {
        char *volatile p = malloc(16);
        *p = 1;
        free(p);
    } else {
        ((void (*)(void))k->function)();
    }
    return harness_seconds() - start;
}

static double *samples;
static size_t count = 1000;

static void row(const char *what, double devrt, double raw, const char *raw_name)
{
    if (hsa) {
        printf("| %s | %.2f | | | |\n", what, devrt);
        return;
    }
    printf("| %s | %.2f | %.2f | %s | %.2f |\n", what, devrt, raw, raw_name, devrt / raw);
}

static void launch_rows(const char *label, const char *kernel, const struct raw_kernel *raw)
{
    for (int async = 0; async < 2; ++async) {
        devrt_once(kernel, async); /* the first launch of a kernel pays for lookups */
        for (size_t i = 0; i < count; ++i)
            samples[i] = devrt_once(kernel, async);
        double d = median(samples, count);
        double r = 0;
        if (!hsa) {
            raw_once(raw, async);
            for (size_t i = 0; i < count; ++i)
                samples[i] = raw_once(raw, async);
            r = median(samples, count);
        }
        char what[160];
        snprintf(what, sizeof what, "launch, %s, %s (µs)", label,
                 async ? "asynchronous: until queued" : "synchronous");
        const char *raw_name = cuda ? (async ? "cuLaunchKernel" : "cuLaunchKernel + synchronize")
                               : raw->heap ? "malloc + free"
                                           : "a call";
        row(what, d * 1e6, r * 1e6, raw_name);
    }
}

/* 10,000 launches of the empty kernel: queued then waited for once, and one at a time. */
static void rate_rows(const struct raw_kernel *raw)
{
    for (int async = 1; async >= 0; --async) {
        double start = harness_seconds();
        for (uint32_t i = 0; i < STREAM_LAUNCHES; ++i)
            if (async)
                must(devrt_launch_async(module, "empty", &one, NULL, 0, NULL, NULL), "empty");
            else
                must(devrt_launch(module, "empty", &one, NULL, 0, NULL), "empty");
        if (async)
            must(devrt_stream_wait(device, NULL, NULL), "the default stream");
        double devrt = harness_seconds() - start;
        if (hsa) {
            printf("| launches/s, 10,000 empty, %s | %.0f | | | |\n",
                   async ? "queued, then one wait" : "one at a time", STREAM_LAUNCHES / devrt);
            continue;
        }
        start = harness_seconds();
        /* Queued: the driver's launches alone, one synchronize after the last. */
        for (uint32_t i = 0; i < STREAM_LAUNCHES; ++i)
            if (cuda && async)
                raw_launch(raw);
            else
                raw_once(raw, async);
        if (cuda && async)
            cu.stream_synchronize(raw_stream);
        double rate = harness_seconds() - start;
        printf("| launches/s, 10,000 empty, %s | %.0f | %.0f | %s | %.2f |\n",
               async ? "queued, then one wait" : "one at a time", STREAM_LAUNCHES / devrt,
               STREAM_LAUNCHES / rate,
               cuda ? (async ? "cuLaunchKernel, one synchronize" : "cuLaunchKernel + synchronize")
                    : "a call",
               rate / devrt);
    }
}

/*
 * The median of LOADS loads and unloads of the image through the raw API: dlopen, or the
 * driver's cuModuleLoadData, or (WITH_LOG) cuModuleLoadDataEx with an error log.
 */
static double raw_loads(bool with_log)
{
    for (size_t i = 0; i < LOADS; ++i) {
        double t = harness_seconds();
        void *handle = NULL;
        char log[2048] = "";
        int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void *values[] = {log, (void *)(uintptr_t)sizeof log};
        int failed = !cuda      ? !(handle = dlopen(image, RTLD_NOW | RTLD_LOCAL))
                     : with_log ? cu.module_load_data_ex(&handle, ptx, 2, options, values)
                                : cu.module_load_data(&handle, ptx);
        if (failed) {
            fprintf(stderr, "the raw API cannot load %s\n", image);
            exit(1);
        }
        samples[i] = harness_seconds() - t;
        if (cuda)
            cu.module_unload(handle);
        else
            dlclose(handle);
    }
    return median(samples, LOADS);
}

/* The steps of a load as devrt_module_get_info reports them, in seconds. */
#define LOAD_STEPS 4u
static const char *const load_step_names[LOAD_STEPS] = {
    "the image, read and loaded by the driver",
    "the device library's check",
    "memory",
    "the initial state written",
};

static void load_steps(const struct devrt_module_info *info, double seconds[LOAD_STEPS])
{
    const uint64_t ns[LOAD_STEPS] = {info->load_image_ns, info->load_check_ns, info->load_memory_ns,
                                     info->load_state_ns};
    for (size_t step = 0; step < LOAD_STEPS; ++step)
        seconds[step] = ns[step] * 1e-9;
}

static char *read_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    rewind(file);
    char *text = malloc((size_t)size + 1);
    if (text && fread(text, 1, (size_t)size, file) != (size_t)size) {
        free(text);
        text = NULL;
    }
    if (text)
        text[size] = '\0';
    fclose(file);
    return text;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: launch_bench IMAGE [emu|hsa|cuda] [count=N]\n");
        return 2;
    }
    image = argv[1];
    enum devrt_backend backend = harness_backend(argc > 2 ? argv[2] : NULL);
    cuda = backend == DEVRT_BACKEND_CUDA;
    hsa = backend == DEVRT_BACKEND_HSA;
    for (int i = 2; i < argc; ++i)
        if (!strncmp(argv[i], "count=", 6))
            count = strtoul(argv[i] + 6, NULL, 10);
    if (count < 1)
        count = 1;
    samples = calloc(count > LOADS ? count : LOADS, sizeof *samples);

    /* Time to first launch: open, load, launch, each the first in the process. */
    double start = harness_seconds();
    int exit_code = harness_open(backend, NULL, image, &device, NULL);
    if (exit_code)
        return exit_code;
    must(devrt_device_image_path(device, image, path, sizeof path), image);
    image = path;
    double opened = harness_seconds();
    must(devrt_module_load(device, image, &module), "load");
    double loaded = harness_seconds();
    struct devrt_module_info first_load;
    devrt_module_get_info(module, &first_load);
    double first_steps[LOAD_STEPS];
    load_steps(&first_load, first_steps);
    must(devrt_launch(module, "empty", &one, NULL, 0, NULL), "empty");
    double launched = harness_seconds();
    struct devrt_device_info info;
    devrt_device_get_info(device, &info);
    if (cuda && !cuda_driver_open(&cu)) {
        fprintf(stderr, "cannot open libcuda.so.1 for the raw figures\n");
        return 1;
    }
    printf("launch_bench: %s backend, %s, %zu launches per figure\n\n", devrt_backend_name(backend),
           info.name, count);
    printf("| operation | devrt | raw API | raw API is | devrt / raw |\n");
    printf("| --- | --- | --- | --- | --- |\n");

    /* The raw API's kernels, from the same image. */
    struct raw_kernel raw_empty = {0}, raw_heap = {.heap = true};
    void *raw_module = NULL, *emu_handle = NULL;
    if (cuda) {
        ptx = read_file(image);
        if (!ptx || cu.module_load_data(&raw_module, ptx) != 0 ||
            cu.module_get_function(&raw_empty.function, raw_module, "empty") != 0 ||
            cu.module_get_function(&raw_heap.function, raw_module, "heap_once_cuda") != 0 ||
            cu.stream_create(&raw_stream, CU_STREAM_NON_BLOCKING) != 0) {
            fprintf(stderr, "the driver cannot load %s for the raw figures\n", image);
            return 1;
        }
        raw_heap.heap = false;
    } else if (!hsa) {
        emu_handle = dlopen(image, RTLD_NOW | RTLD_LOCAL);
        raw_empty.function = emu_handle ? dlsym(emu_handle, "empty") : NULL;
        if (!raw_empty.function) {
            fprintf(stderr, "cannot find the kernel empty in %s\n", image);
            return 1;
        }
    }
    launch_rows("empty kernel", "empty", &raw_empty);
    launch_rows("a kernel that calls the heap once", "heap_once", &raw_heap);
    rate_rows(&raw_empty);

    /* Loads of the same image: devrt's (a module of an image at a time on the emulation). */
    devrt_module_unload(module);
    if (emu_handle)
        dlclose(emu_handle);
    double steps[LOAD_STEPS][LOADS];
    for (size_t i = 0; i < LOADS; ++i) {
        double t = harness_seconds();
        must(devrt_module_load(device, image, &module), "load");
        samples[i] = harness_seconds() - t;
        struct devrt_module_info load_info;
        devrt_module_get_info(module, &load_info);
        double one[LOAD_STEPS];
        load_steps(&load_info, one);
        for (size_t step = 0; step < LOAD_STEPS; ++step)
            steps[step][i] = one[step];
        devrt_module_unload(module);
    }
    double warm = median(samples, LOADS);
    double raw_warm = hsa ? 0 : raw_loads(false);
    const char *load_name = cuda ? "cuModuleLoadData" : "dlopen";
    printf("| module load, first in the process (ms) | %.3f | | | |\n", (loaded - opened) * 1e3);
    for (size_t step = 0; step < LOAD_STEPS; ++step)
        printf("| of which %s (µs) | %.1f | | | |\n", load_step_names[step],
               first_steps[step] * 1e6);
    row("module load, warm (ms)", warm * 1e3, raw_warm * 1e3, load_name);
    if (cuda) /* what devrt's loader calls: the driver's part of its image step */
        printf("| module load, warm, the driver's call as devrt makes it (ms) | | %.3f | "
               "cuModuleLoadDataEx with a 2 KiB error log | |\n",
               raw_loads(true) * 1e3);
    for (size_t step = 0; step < LOAD_STEPS; ++step)
        printf("| of which %s, median (µs) | %.1f | | | |\n", load_step_names[step],
               median(steps[step], LOADS) * 1e6);
    printf("| device open, first in the process (ms) | %.3f | | | |\n", (opened - start) * 1e3);
    printf("| of which the driver (ms) | %.3f | | | |\n", info.open_driver_ns * 1e-6);
    printf("| of which devrt (ms) | %.3f | | | |\n", info.open_runtime_ns * 1e-6);
    printf("| first launch (ms) | %.3f | | | |\n", (launched - loaded) * 1e3);
    printf("| time to first launch: open + load + launch (ms) | %.3f | | | |\n",
           (launched - start) * 1e3);
    if (cuda) {
        cu.stream_destroy(raw_stream);
        cu.module_unload(raw_module);
    }
    devrt_device_close(device);
    /* A second open: the driver is started already. */
    start = harness_seconds();
    must(devrt_device_open(backend, 0, NULL, &device), "open");
    double reopened = harness_seconds() - start;
    devrt_device_get_info(device, &info);
    printf("| device open, again (ms) | %.3f | | | |\n", reopened * 1e3);
    printf("| of which the driver (ms) | %.3f | | | |\n", info.open_driver_ns * 1e-6);
    printf("| of which devrt (ms) | %.3f | | | |\n", info.open_runtime_ns * 1e-6);
    devrt_device_close(device);
    free(samples);
    free(ptx);
    return 0;
}
