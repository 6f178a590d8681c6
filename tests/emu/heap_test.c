/*
 * Runs tests/kernels/heap.c through the host runtime: heap_test IMAGE TEST [emu|hsa|cuda].
 * Exits 0 when the test holds, 1 when it does not, 77 when the backend has no device.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/host.h>

#include "harness.h"

struct block {
    uint8_t *ptr;
    uint64_t size;
};

static devrt_device *device;
static devrt_module *module;

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct block *)a)->ptr;
    uintptr_t y = (uintptr_t)((const struct block *)b)->ptr;
    return x < y ? -1 : x > y;
}

static struct devrt_heap_stats stats(void)
{
    struct devrt_heap_stats s;
    CHECK(devrt_heap_stats(module, &s) == DEVRT_SUCCESS, "%s", devrt_last_error());
    return s;
}

/* Thousands of lanes, mixed sizes from 1 byte to 1 MiB, over several launches. */
static void test_stress(uint32_t groups, uint32_t block, uint32_t per_lane, uint32_t repeats)
{
    uint32_t lanes = groups * block, n = lanes * per_lane;
    struct block *blocks = devrt_mem_alloc(device, n * sizeof *blocks);
    struct block *sorted = malloc(n * sizeof *sorted);
    uint32_t *bad = devrt_mem_alloc(device, sizeof *bad);
    struct devrt_launch_config config = harness_grid1(groups, block);
    for (uint32_t round = 0; round < repeats; ++round) {
        *bad = 0;
        struct devrt_arg fill[] = {DEVRT_ARG_PTR(blocks), DEVRT_ARG_UINT(per_lane),
                                   DEVRT_ARG_UINT(round * 7919), DEVRT_ARG_PTR(bad)};
        CHECK(devrt_launch(module, "fill", &config, fill, 4, NULL) == DEVRT_SUCCESS, "%s",
              devrt_last_error());
        CHECK(*bad == 0, "round %u: %u allocations failed or were misaligned", round, *bad);

        uint64_t live = 0;
        memcpy(sorted, blocks, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, by_address);
        uint32_t overlaps = 0;
        for (uint32_t i = 0; i < n; ++i) {
            live += sorted[i].size;
            if (i && sorted[i - 1].ptr && sorted[i - 1].ptr + sorted[i - 1].size > sorted[i].ptr)
                overlaps++;
        }
        CHECK(overlaps == 0, "round %u: %u live blocks overlap", round, overlaps);
        struct devrt_heap_stats s = stats();
        CHECK(s.bytes_in_use >= live, "round %u: %" PRIu64 " bytes in use, %" PRIu64 " asked for",
              round, s.bytes_in_use, live);

        struct devrt_arg check[] = {DEVRT_ARG_PTR(blocks), DEVRT_ARG_UINT(per_lane),
                                    DEVRT_ARG_PTR(bad)};
        CHECK(devrt_launch(module, "check_and_free", &config, check, 3, NULL) == DEVRT_SUCCESS,
              "%s", devrt_last_error());
        CHECK(*bad == 0, "round %u: %u blocks lost their pattern", round, *bad);
        s = stats();
        CHECK(s.bytes_in_use == 0, "round %u: %" PRIu64 " bytes still in use after every free",
              round, s.bytes_in_use);
        printf("round %u: %u blocks, %" PRIu64 " bytes live at once; %u slabs, %" PRIu64
               " bytes reserved\n",
               round, n, live, s.slabs, s.bytes_reserved);
    }
    CHECK(stats().failed_allocations == 0, "%" PRIu64 " failed", stats().failed_allocations);
    devrt_mem_free(device, blocks);
    devrt_mem_free(device, bad);
    free(sorted);
}

static void test_divergent(uint32_t groups)
{
    uint32_t *counts = devrt_mem_alloc(device, 2 * sizeof *counts);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&counts[0]), DEVRT_ARG_PTR(&counts[1])};
    struct devrt_launch_config config = harness_grid1(groups, 64);
    CHECK(devrt_launch(module, "divergent", &config, args, 2, NULL) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    uint32_t expected = 0;
    for (uint32_t lane = 0; lane < groups * 64; ++lane)
        expected += lane % 3 == 1;
    CHECK(counts[0] == 0 && counts[1] == expected, "%u failures, %u of %u served", counts[0],
          counts[1], expected);
    CHECK(stats().bytes_in_use == 0, "bytes left in use");
    devrt_mem_free(device, counts);
}

static void test_exhaustion(void)
{
    const uint32_t max = 4096;
    void **blocks = devrt_mem_alloc(device, max * sizeof *blocks);
    uint32_t *count = devrt_mem_alloc(device, sizeof *count);
    struct devrt_launch_config one = harness_grid1(1, 1);
    uint32_t first = 0;
    for (int round = 0; round < 2; ++round) {
        struct devrt_arg args[] = {DEVRT_ARG_PTR(blocks), DEVRT_ARG_UINT(max), DEVRT_ARG_U64(8192),
                                   DEVRT_ARG_PTR(count)};
        CHECK(devrt_launch(module, "exhaust", &one, args, 4, NULL) == DEVRT_SUCCESS, "%s",
              devrt_last_error());
        struct devrt_heap_stats s = stats();
        printf("exhaustion: %u blocks of 8 KiB before NULL; %" PRIu64 " failed, %" PRIu64
               " of %" PRIu64 " bytes reserved\n",
               *count, s.failed_allocations, s.bytes_reserved, s.max_bytes);
        CHECK(*count > 0 && *count < max, "%u blocks", *count);
        CHECK(s.failed_allocations == (uint64_t)round + 1, "%" PRIu64 " failures counted",
              s.failed_allocations);
        CHECK(s.bytes_reserved <= s.max_bytes, "reserved past the maximum");
        if (round == 0)
            first = *count;
        else
            CHECK(*count == first, "after freeing everything, %u blocks fit, not %u", *count,
                  first);
        struct devrt_arg free_args[] = {DEVRT_ARG_PTR(blocks), DEVRT_ARG_UINT(*count)};
        CHECK(devrt_launch(module, "free_all", &one, free_args, 2, NULL) == DEVRT_SUCCESS, "%s",
              devrt_last_error());
        CHECK(stats().bytes_in_use == 0, "bytes left in use");
    }
    devrt_mem_free(device, blocks);
    devrt_mem_free(device, count);
}

/*
 * How many workgroups of BLOCK workitems of KERNEL in the PTX file IMAGE fill an NVIDIA
 * GPU: its multiprocessors times the blocks resident on each, from the driver
 * (cuOccupancyMaxActiveBlocksPerMultiprocessor, on the module loaded as devrt loads it).
 * 0 when the driver cannot say.
 */
static uint32_t cuda_full_grid(const char *image, const char *kernel, uint32_t block, int *sms,
                               int *per_sm)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda)
        return 0;
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(cuda, "cuInit");
    int (*get)(int *, int) = (int (*)(int *, int))dlsym(cuda, "cuDeviceGet");
    int (*attribute)(int *, int, int) =
        (int (*)(int *, int, int))dlsym(cuda, "cuDeviceGetAttribute");
    int (*retain)(void **, int) = (int (*)(void **, int))dlsym(cuda, "cuDevicePrimaryCtxRetain");
    int (*release)(int) = (int (*)(int))dlsym(cuda, "cuDevicePrimaryCtxRelease_v2");
    int (*push)(void *) = (int (*)(void *))dlsym(cuda, "cuCtxPushCurrent_v2");
    int (*pop)(void **) = (int (*)(void **))dlsym(cuda, "cuCtxPopCurrent_v2");
    int (*load)(void **, const void *) =
        (int (*)(void **, const void *))dlsym(cuda, "cuModuleLoadData");
    int (*function)(void **, void *, const char *) =
        (int (*)(void **, void *, const char *))dlsym(cuda, "cuModuleGetFunction");
    int (*unload)(void *) = (int (*)(void *))dlsym(cuda, "cuModuleUnload");
    int (*occupancy)(int *, void *, int, size_t) = (int (*)(int *, void *, int, size_t))dlsym(
        cuda, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    uint32_t groups = 0;
    FILE *file = fopen(image, "rb");
    char *ptx = calloc(1, 64u << 20);
    size_t length = file && ptx ? fread(ptx, 1, (64u << 20) - 1, file) : 0;
    int device = 0;
    void *context = NULL, *module = NULL, *fn = NULL;
    enum { MULTIPROCESSOR_COUNT = 16 };
    if (length && init && get && attribute && retain && release && push && pop && load &&
        function && unload && occupancy && init(0) == 0 && get(&device, 0) == 0 &&
        attribute(sms, MULTIPROCESSOR_COUNT, device) == 0 && retain(&context, device) == 0) {
        if (push(context) == 0) {
            if (load(&module, ptx) == 0) {
                if (function(&fn, module, kernel) == 0 &&
                    occupancy(per_sm, fn, (int)block, 0) == 0 && *sms > 0 && *per_sm > 0)
                    groups = (uint32_t)(*sms * *per_sm);
                unload(module);
            }
            pop(&context);
        }
        release(device);
    }
    if (file)
        fclose(file);
    free(ptx);
    dlclose(cuda);
    return groups;
}

/*
 * Heap growth on a full GPU (issue 15, defect 1): every slot of every multiprocessor holds
 * a workgroup whose lanes allocate, so the waves that wait for a new slab are all there
 * are. On CUDA the grid is the multiprocessors times the blocks resident on each; an AMD
 * GPU gets 1024 workgroups of 256, more than any fits at once; the emulation a few.
 */
static void test_full_occupancy(const char *image, enum devrt_backend backend)
{
    const uint32_t block = 256, count = 4, size = 256;
    int sms = 0, per_sm = 0;
    uint32_t groups = harness_host_lanes(backend) ? 4 : 1024;
    if (backend == DEVRT_BACKEND_CUDA) {
        groups = cuda_full_grid(image, "hold_all", block, &sms, &per_sm);
        CHECK(groups != 0, "the driver did not give the GPU's occupancy for hold_all");
        if (!groups)
            return;
    }
    uint32_t *counts = devrt_mem_alloc(device, 2 * sizeof *counts);
    struct devrt_arg args[] = {DEVRT_ARG_UINT(count), DEVRT_ARG_UINT(size),
                               DEVRT_ARG_PTR(&counts[0]), DEVRT_ARG_PTR(&counts[1])};
    struct devrt_launch_config config = harness_grid1(groups, block);
    double start = harness_seconds();
    CHECK(devrt_launch(module, "hold_all", &config, args, 4, NULL) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    double seconds = harness_seconds() - start;
    struct devrt_heap_stats s = stats();
    CHECK(counts[0] == 0, "%u of %u allocations failed", counts[0], groups * block * count);
    CHECK(counts[1] == groups * block, "%u of %u lanes finished", counts[1], groups * block);
    CHECK(s.bytes_in_use == 0, "%" PRIu64 " bytes left in use", s.bytes_in_use);
    CHECK(s.slabs > 1, "the heap did not grow: %u slabs", s.slabs);
    printf("full occupancy: %u workgroups of %u (%d multiprocessors x %d resident), %u blocks "
           "of %u bytes per lane; %u slabs, %" PRIu64 " bytes reserved; %.3f s\n",
           groups, block, sms, per_sm, count, size, s.slabs, s.bytes_reserved, seconds);
    devrt_mem_free(device, counts);
}

static void test_misuse(uint32_t how, uint32_t code, const char *message)
{
    uint64_t *pointer = devrt_mem_alloc(device, sizeof *pointer);
    struct devrt_arg args[] = {DEVRT_ARG_UINT(how), DEVRT_ARG_PTR(pointer)};
    struct devrt_launch_config one = harness_grid1(1, 1);
    struct devrt_launch_report report;
    devrt_module_set_report_file(module, NULL);
    int status = devrt_launch(module, "misuse", &one, args, 2, &report);
    if (how == 0) {
        CHECK(status == DEVRT_SUCCESS, "proper use reported: %s", report.text);
    } else {
        CHECK(status == DEVRT_ERROR_EXCEPTION && report.code == code, "status %d code %u: %s",
              status, report.code, report.text);
        CHECK(report.value == *pointer, "reported pointer 0x%" PRIx64 ", freed 0x%" PRIx64,
              report.value, *pointer);
        CHECK(strstr(report.text, message) != NULL, "'%s' lacks '%s'", report.text, message);
        printf("%s\n", report.text);
    }
    /* The heap is intact: a proper launch works and leaves nothing behind but the lost block. */
    uint32_t *bad = devrt_mem_alloc(device, sizeof *bad);
    struct devrt_arg edges[] = {DEVRT_ARG_U64(1ull << 40), DEVRT_ARG_PTR(bad)};
    CHECK(devrt_launch(module, "edges", &one, edges, 2, NULL) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    CHECK(*bad == 0, "%u edge cases wrong after misuse %u", *bad, how);
    devrt_mem_free(device, bad);
    devrt_mem_free(device, pointer);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: heap_test IMAGE TEST [emu|hsa|cuda]\n");
        return 2;
    }
    enum devrt_backend backend = harness_backend(argc > 3 ? argv[3] : NULL);
    const char *test = argv[2];
    struct devrt_device_options options = {0};
    if (!strcmp(test, "exhaustion"))
        options.heap_initial_bytes = options.heap_max_bytes = 4u << 20;
    if (!strcmp(test, "full_occupancy")) {
        /* Start small, so that the heap grows many times while the GPU is full. */
        options.heap_initial_bytes = 64u << 10;
        options.heap_max_bytes = 1u << 30;
    }
    int exit_code = harness_open(backend, &options, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    /*
     * The emulation runs each test twice (32- and 64-lane waves) and under the sanitizers,
     * its lanes threads on a few cores: it runs the larger tests smaller, to stay within
     * CI's time.
     */
    bool on_emu = harness_host_lanes(backend);
    if (!strcmp(test, "stress"))
        test_stress(on_emu ? 4 : 32, 64, 4, 4); /* 2048 lanes (256 on the emulation), 4 blocks
                                                    each, four launches each way */
    else if (!strcmp(test, "divergent"))
        test_divergent(on_emu ? 4 : 16);
    else if (!strcmp(test, "exhaustion"))
        test_exhaustion();
    else if (!strcmp(test, "full_occupancy"))
        test_full_occupancy(argv[1], backend);
    else if (!strcmp(test, "edges"))
        test_misuse(0, 0, NULL);
    else if (!strcmp(test, "double_free"))
        test_misuse(1, 10, "double free");
    else if (!strcmp(test, "foreign_pointer"))
        test_misuse(2, 11, "did not give out");
    else if (!strcmp(test, "interior_pointer"))
        test_misuse(3, 11, "middle of a block");
    else {
        fprintf(stderr, "unknown test %s\n", test);
        return 2;
    }
    devrt_module_unload(module);
    devrt_device_close(device);
    return failures ? 1 : 0;
}
