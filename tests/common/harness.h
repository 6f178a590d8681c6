/*
 * What the test and benchmark programs share: a check that counts failures, opening the
 * backend a program runs on (so one program serves the emu, hardware and nvptx labels),
 * and a clock.
 */
#ifndef DEVRT_TEST_HARNESS_H
#define DEVRT_TEST_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <devrt/host.h>

/* CTest's code for a test that cannot run here: the backend sees no device. */
#define HARNESS_SKIP 77

__attribute__((unused)) static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* The backend a test program's optional argument names: emu (the default), hsa, hip or cuda. */
static inline enum devrt_backend harness_backend(const char *name)
{
    if (name && !strcmp(name, "hsa"))
        return DEVRT_BACKEND_HSA;
    if (name && !strcmp(name, "cuda"))
        return DEVRT_BACKEND_CUDA;
    if (name && !strcmp(name, "hip"))
        return DEVRT_BACKEND_HIP;
    return DEVRT_BACKEND_EMU;
}

/*
 * Whether BACKEND's lanes are host threads: the emulation, the HSA backend on the HSA
 * runtime double (tests/hsasim), which the registry names in $DEVRT_TEST_HSA_LIBRARY, or the
 * HIP backend on the fake libamdhip64 (tests/attach), named in $DEVRT_HIPFAKE_IMAGES. The
 * tests run smaller there, to stay within CI's time on a few cores.
 */
static inline bool harness_host_lanes(enum devrt_backend backend)
{
    const char *double_library = getenv("DEVRT_TEST_HSA_LIBRARY");
    const char *fake_images = getenv("DEVRT_HIPFAKE_IMAGES");
    return backend == DEVRT_BACKEND_EMU ||
           (backend == DEVRT_BACKEND_HSA && double_library && *double_library) ||
           (backend == DEVRT_BACKEND_HIP && fake_images && *fake_images);
}

/*
 * Load IMAGE, whose path may name the GPU's processor as {target}: the hardware tests build
 * one code object per gfx target and load the GPU's own (devrt_device_image_path).
 */
static inline int harness_load(devrt_device *device, const char *image, devrt_module **module)
{
    char path[4096];
    int status = devrt_device_image_path(device, image, path, sizeof path);
    return status == DEVRT_SUCCESS ? devrt_module_load(device, path, module) : status;
}

/*
 * Open device 0 of the backend and load the image (harness_load). Returns 0, or the status the
 * program must exit with: HARNESS_SKIP when the backend has no device, 1 on any other failure.
 */
static inline int harness_open(enum devrt_backend backend,
                               const struct devrt_device_options *options, const char *image,
                               devrt_device **device, devrt_module **module)
{
    int status = devrt_device_open(backend, 0, options, device);
    if (status == DEVRT_ERROR_NO_DEVICE) {
        printf("skipped: %s\n", devrt_last_error());
        return HARNESS_SKIP;
    }
    if (status != DEVRT_SUCCESS) {
        fprintf(stderr, "cannot open the %s device: %s\n", devrt_backend_name(backend),
                devrt_last_error());
        return 1;
    }
    if (module && harness_load(*device, image, module) != DEVRT_SUCCESS) {
        fprintf(stderr, "cannot load %s: %s\n", image, devrt_last_error());
        devrt_device_close(*device);
        return 1;
    }
    return 0;
}

/*
 * An output callback for benchmarks: adds each unit's size to the size_t that the
 * callback's context points to (only the server thread calls it).
 */
static inline void harness_count_output(void *context, uint32_t stream, const char *data,
                                        size_t size)
{
    (void)stream;
    (void)data;
    *(size_t *)context += size;
}

/* What a module printed, NUL-terminated: harness_sink_append is its output callback. */
struct harness_sink {
    char *data;
    size_t length;
    bool failed; /* no memory for a unit */
};

static inline void harness_sink_append(void *context, uint32_t stream, const char *data,
                                       size_t size)
{
    (void)stream;
    struct harness_sink *sink = context;
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

/* A one-dimensional launch of GROUPS workgroups of BLOCK workitems, no timeout. */
static inline struct devrt_launch_config harness_grid1(uint32_t groups, uint32_t block)
{
    return (struct devrt_launch_config){.grid = {groups, 1, 1}, .block = {block, 1, 1}};
}

/*
 * The argument type of a parameter of SIZE bytes, for launchers that know only sizes (a HIP
 * parameter list, fuzzed metadata): unsigned where an integer has the size, else bytes.
 */
static inline enum devrt_arg_type harness_sized_arg_type(size_t size)
{
    switch (size) {
    case 1: return DEVRT_ARG_U8;
    case 2: return DEVRT_ARG_U16;
    case 4: return DEVRT_ARG_U32;
    case 8: return DEVRT_ARG_U64;
    default: return DEVRT_ARG_BYTES;
    }
}

/* Seconds on a monotonic clock, for benchmarks. */
static inline double harness_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
 * A list of device indexes, "0,1" or "0,0" (one GPU opened twice), into INDEXES (at most
 * MAX). Returns how many, or -1 if TEXT is not such a list.
 */
static inline int harness_device_list(const char *text, int *indexes, int max)
{
    int count = 0;
    for (const char *p = text; *p; ++count) {
        char *end;
        long v = strtol(p, &end, 10);
        if (count == max || end == p || v < 0 || v > 63 || (*end && *end != ','))
            return -1;
        indexes[count] = (int)v;
        p = *end ? end + 1 : end;
    }
    return count ? count : -1;
}

#endif
