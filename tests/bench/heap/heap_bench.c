/*
 * Heap benchmark on a backend (emu by default): allocations plus frees per second for
 * mixed small sizes as the number of lanes grows. Each figure is the best of three
 * launches, thread start-up included.
 *
 *   heap_bench IMAGE [emu|hsa]
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <devrt/host.h>

#include "harness.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: heap_bench IMAGE [emu|hsa]\n");
        return 2;
    }
    devrt_device *device;
    devrt_module *module;
    int exit_code =
        harness_open(harness_backend(argc > 2 ? argv[2] : NULL), NULL, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    uint32_t *failures = devrt_mem_alloc(device, sizeof *failures);
    const uint32_t rounds = 2000;
    printf("| lanes | allocations + frees per second |\n|---:|---:|\n");
    for (uint32_t lanes = 1; lanes <= 4096; lanes *= 4) {
        uint32_t block = lanes < 64 ? lanes : 64;
        struct devrt_launch_config config = {.grid = {lanes / block, 1, 1}, .block = {block, 1, 1}};
        struct devrt_arg args[] = {DEVRT_ARG_UINT(rounds), DEVRT_ARG_PTR(failures)};
        double best = 0;
        for (int run = 0; run < 3; ++run) {
            double start = harness_seconds();
            if (devrt_launch(module, "churn", &config, args, 2, NULL) != DEVRT_SUCCESS) {
                fprintf(stderr, "heap_bench: %s\n", devrt_last_error());
                return 1;
            }
            double rate = 2.0 * lanes * rounds / (harness_seconds() - start);
            best = rate > best ? rate : best;
        }
        printf("| %u | %.0f |\n", lanes, best);
    }
    struct devrt_heap_stats stats;
    devrt_heap_stats(module, &stats);
    printf("\nfailed allocations: %u; bytes in use at the end: %llu; slabs: %u\n", *failures,
           (unsigned long long)stats.bytes_in_use, stats.slabs);
    /* Read before the free: the memory is gone after it. */
    int status = *failures != 0;
    devrt_mem_free(device, failures);
    devrt_module_unload(module);
    devrt_device_close(device);
    return status;
}
