/*
 * devrt's heap and printf against CUDA's on an NVIDIA GPU, through the CUDA backend:
 *
 *   nvptx_bench IMAGE [devrt-heap] [cuda-heap] [printf]
 *
 * runs the parts named (all three by default); tables go to stderr, the kernels' printed
 * lines to stdout.
 *
 * Heap: the time one lane waits for an allocation and its free (median, p99), with one
 * warp calling and with a grid that fills the GPU. printf: the wall time of a launch whose
 * lanes each print lines, output delivered (devrt's while the kernel runs, CUDA's at the
 * end), and the lines per second that makes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <devrt/host.h>

#include "harness.h"

static devrt_device *device;
static devrt_module *module;

static int compare(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void heap(const char *what, uint32_t groups, uint32_t block, uint32_t rounds, uint32_t size,
                 uint32_t cuda)
{
    size_t n = (size_t)groups * block * rounds;
    uint64_t *samples = devrt_mem_alloc(device, n * sizeof *samples);
    uint32_t *failures = devrt_mem_alloc(device, sizeof *failures);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(samples), DEVRT_ARG_PTR(failures),
                               DEVRT_ARG_UINT(rounds), DEVRT_ARG_UINT(size), DEVRT_ARG_UINT(cuda)};
    struct devrt_launch_config config = {{groups, 1, 1}, {block, 1, 1}};
    double start = harness_seconds();
    if (devrt_launch(module, "malloc_free", &config, args, 5, NULL) != DEVRT_SUCCESS) {
        fprintf(stderr, "launch failed: %s\n", devrt_last_error());
        exit(1);
    }
    double elapsed = harness_seconds() - start;
    qsort(samples, n, sizeof *samples, compare);
    fprintf(stderr, "| %s malloc(%u)+free, %s (%u lanes x %u) | %.2f | %.2f | %.1f | %u |\n",
            cuda ? "CUDA" : "devrt", size, what, groups * block, rounds,
            (double)samples[n / 2] / 1000.0, (double)samples[n * 99 / 100] / 1000.0, elapsed * 1000,
            *failures);
    devrt_mem_free(device, samples);
    devrt_mem_free(device, failures);
}

static void print(uint32_t groups, uint32_t block, uint32_t lines, uint32_t cuda)
{
    struct devrt_arg args[] = {DEVRT_ARG_UINT(lines), DEVRT_ARG_UINT(cuda)};
    struct devrt_launch_config config = {{groups, 1, 1}, {block, 1, 1}};
    fflush(stdout);
    double start = harness_seconds();
    if (devrt_launch(module, "print_lines", &config, args, 2, NULL) != DEVRT_SUCCESS) {
        fprintf(stderr, "launch failed: %s\n", devrt_last_error());
        exit(1);
    }
    fflush(stdout);
    double elapsed = harness_seconds() - start;
    double total = (double)groups * block * lines;
    fprintf(stderr, "| %s printf, %u lanes x %u lines | %.1f ms | %.0f lines/s |\n",
            cuda ? "CUDA" : "devrt", groups * block, lines, elapsed * 1000, total / elapsed);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: nvptx_bench IMAGE\n");
        return 2;
    }
    int exit_code = harness_open(DEVRT_BACKEND_CUDA, NULL, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    bool parts[3] = {argc < 3, argc < 3, argc < 3};
    for (int i = 2; i < argc; ++i)
        for (int part = 0; part < 3; ++part)
            parts[part] |=
                !strcmp(argv[i], (const char *[]){"devrt-heap", "cuda-heap", "printf"}[part]);
    fprintf(stderr, "\n| heap | median us | p99 us | kernel ms | NULLs |\n|---|---|---|---|---|\n");
    for (uint32_t cuda = 0; cuda < 2; ++cuda) {
        if (!parts[cuda])
            continue;
        /* Warm the heap up (devrt's first slabs, CUDA's heap set-up) outside the figures. */
        heap("warm-up", 132, 256, 1, 16, cuda);
        heap("1 warp", 1, 32, 200, 16, cuda);
        heap("1 warp", 1, 32, 200, 256, cuda);
        heap("full GPU", 132 * 8, 256, 4, 16, cuda);
        heap("full GPU", 132 * 8, 256, 4, 256, cuda);
    }
    /* CUDA's printf buffer holds 1 MiB by default: 16384 lines of ~35 bytes fit. */
    fprintf(stderr, "\n| printf | launch wall time | lines/s |\n|---|---|---|\n");
    for (uint32_t cuda = 0; cuda < 2 && parts[2]; ++cuda) {
        print(1, 32, 1, cuda);
        print(64, 256, 1, cuda);
    }
    devrt_module_unload(module);
    devrt_device_close(device);
    return 0;
}
