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

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: heap_bench IMAGE [emu|hsa]\n");
        return 2;
    }
    enum devrt_backend backend =
        argc > 2 && !strcmp(argv[2], "hsa") ? DEVRT_BACKEND_HSA : DEVRT_BACKEND_EMU;
    devrt_device *device;
    devrt_module *module;
    if (devrt_device_open(backend, 0, NULL, &device) != DEVRT_SUCCESS ||
        devrt_module_load(device, argv[1], &module) != DEVRT_SUCCESS) {
        fprintf(stderr, "heap_bench: %s\n", devrt_last_error());
        return 1;
    }
    uint32_t *failures = devrt_mem_alloc(device, sizeof *failures);
    const uint32_t rounds = 2000;
    printf("| lanes | allocations + frees per second |\n|---:|---:|\n");
    for (uint32_t lanes = 1; lanes <= 4096; lanes *= 4) {
        uint32_t block = lanes < 64 ? lanes : 64;
        struct devrt_launch_config config = {{lanes / block, 1, 1}, {block, 1, 1}};
        struct devrt_arg args[] = {DEVRT_ARG_UINT(rounds), DEVRT_ARG_PTR(failures)};
        double best = 0;
        for (int run = 0; run < 3; ++run) {
            double start = now();
            if (devrt_launch(module, "churn", &config, args, 2, NULL) != DEVRT_SUCCESS) {
                fprintf(stderr, "heap_bench: %s\n", devrt_last_error());
                return 1;
            }
            double rate = 2.0 * lanes * rounds / (now() - start);
            best = rate > best ? rate : best;
        }
        printf("| %u | %.0f |\n", lanes, best);
    }
    struct devrt_heap_stats stats;
    devrt_heap_stats(module, &stats);
    printf("\nfailed allocations: %u; bytes in use at the end: %llu; slabs: %u\n", *failures,
           (unsigned long long)stats.bytes_in_use, stats.slabs);
    devrt_mem_free(device, failures);
    devrt_module_unload(module);
    devrt_device_close(device);
    return *failures != 0;
}
