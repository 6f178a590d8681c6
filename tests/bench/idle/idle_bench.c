/*
 * What an idle server costs, and what that saving costs the next request.
 *
 *   idle_bench IMAGE [emu|hsa|cuda]
 *
 * The server thread's CPU time, by its own clock (devrt_device_info.server_cpu_ns, read
 * with CLOCK_THREAD_CPUTIME_ID), while one lane runs a second without a request; then the
 * round trip of the first request after quiet spells from none to a second, which is what
 * a server that sleeps longer when nothing comes makes it pay.
 */
#include <stdio.h>
#include <stdlib.h>

#include <devrt/host.h>

#include "harness.h"

static int compare(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void launch(devrt_module *module, const char *kernel, const struct devrt_arg *args,
                   size_t count)
{
    struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    if (devrt_launch(module, kernel, &config, args, count, NULL) != DEVRT_SUCCESS) {
        fprintf(stderr, "launch failed: %s\n", devrt_last_error());
        exit(1);
    }
}

static uint64_t server_cpu_ns(devrt_device *device)
{
    struct devrt_device_info info;
    devrt_device_get_info(device, &info);
    return info.server_cpu_ns;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: idle_bench IMAGE [emu|hsa|cuda]\n");
        return 2;
    }
    enum devrt_backend backend = harness_backend(argc > 2 ? argv[2] : NULL);
    devrt_device *device;
    devrt_module *module;
    struct devrt_device_options options = {0};
    int exit_code = harness_open(backend, &options, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    struct devrt_device_info info;
    devrt_device_get_info(device, &info);
    printf("idle_bench on %s (%s), server on %s%s\n\n", info.name, devrt_backend_name(backend),
           info.server_cpus[0] ? "CPUs " : "any CPU", info.server_cpus);

    /* Three seconds, one at a time: the spread says how steady the figure is. */
    printf("| kernel without requests | wall s | server CPU ms | share of a core |\n"
           "|---|---|---|---|\n");
    for (int run = 0; run < 3; ++run) {
        struct devrt_arg args[] = {DEVRT_ARG_U64(1000000000ull)};
        uint64_t cpu = server_cpu_ns(device);
        double start = harness_seconds();
        launch(module, "idle", args, 1);
        double wall = harness_seconds() - start;
        cpu = server_cpu_ns(device) - cpu;
        printf("| run %d, 1 s | %.3f | %.2f | %.3f%% |\n", run + 1, wall, (double)cpu * 1e-6,
               100.0 * (double)cpu * 1e-9 / wall);
    }

    static const struct {
        const char *label;
        uint64_t quiet_ns;
        uint32_t rounds;
    } spells[] = {
        {"none (back to back)", 0, 200}, {"50 us", 50000, 100},     {"1 ms", 1000000, 50},
        {"10 ms", 10000000, 30},         {"100 ms", 100000000, 10}, {"1 s", 1000000000, 3},
    };
    printf("\n| quiet spell before the request | requests | median us | max us |\n"
           "|---|---|---|---|\n");
    uint64_t *samples = devrt_mem_alloc(device, 200 * sizeof *samples);
    if (!samples) {
        fprintf(stderr, "no memory for the samples: %s\n", devrt_last_error());
        return 1;
    }
    for (size_t i = 0; i < sizeof spells / sizeof spells[0]; ++i) {
        struct devrt_arg args[] = {DEVRT_ARG_PTR(samples), DEVRT_ARG_UINT(spells[i].rounds),
                                   DEVRT_ARG_U64(spells[i].quiet_ns)};
        launch(module, "quiet_then_call", args, 3);
        qsort(samples, spells[i].rounds, sizeof *samples, compare);
        printf("| %s | %u | %.1f | %.1f |\n", spells[i].label, spells[i].rounds,
               (double)samples[spells[i].rounds / 2] * 1e-3,
               (double)samples[spells[i].rounds - 1] * 1e-3);
    }
    devrt_mem_free(device, samples);
    devrt_module_unload(module);
    devrt_device_close(device);
    return 0;
}
