/*
 * Several devices at once against one alone (issue 18): RPC round trips, heap allocations
 * and printed lines per second on each device, first with only device 0 busy, then with
 * every device busy at once, each driven by a host thread of its own. Devices that share
 * no server thread or lock keep their figures: the ratio is near 1.
 *
 *   devices_bench BACKEND INDEXES IMAGE [IMAGE...]
 *
 * INDEXES as in devices_test: "0,1" two devices, "0,0" one GPU opened twice (which then
 * shares its SMs and link between the two, so its ratio is not the two-GPU figure).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/host.h>

#include "harness.h"

#define MAX_DEVICES 16

struct bench_device {
    devrt_device *device;
    devrt_module *module;
    size_t output_bytes;
    const char *kernel;
    uint32_t rounds;
    struct devrt_launch_config config;
    double seconds;
    int status;
};

static void *run_kernel(void *arg)
{
    struct bench_device *d = arg;
    struct devrt_arg args[] = {DEVRT_ARG_UINT(d->rounds)};
    double start = harness_seconds();
    d->status = devrt_launch(d->module, d->kernel, &d->config, args, 1, NULL);
    d->seconds = harness_seconds() - start;
    return NULL;
}

/* Runs KERNEL on the first COUNT devices at once; returns whether every launch succeeded. */
static bool run_on(struct bench_device *devices, int count, const char *kernel, uint32_t rounds)
{
    pthread_t threads[MAX_DEVICES];
    for (int i = 0; i < count; ++i) {
        devices[i].kernel = kernel;
        devices[i].rounds = rounds;
        if (pthread_create(&threads[i], NULL, run_kernel, &devices[i]) != 0) {
            fprintf(stderr, "no thread for device %d\n", i);
            exit(1);
        }
    }
    bool ok = true;
    for (int i = 0; i < count; ++i) {
        pthread_join(threads[i], NULL);
        if (devices[i].status != DEVRT_SUCCESS) {
            fprintf(stderr, "%s on device %d: %s\n", kernel, i,
                    devrt_status_string(devices[i].status));
            ok = false;
        }
    }
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: devices_bench BACKEND INDEXES IMAGE [IMAGE...]\n");
        return 2;
    }
    enum devrt_backend backend = harness_backend(argv[1]);
    struct bench_device devices[MAX_DEVICES];
    memset(devices, 0, sizeof devices);
    int indexes[MAX_DEVICES];
    int count = harness_device_list(argv[2], indexes, MAX_DEVICES);
    if (count < 1) {
        fprintf(stderr, "devices_bench: bad device list %s\n", argv[2]);
        return 2;
    }
    for (int i = 0; i < count; ++i) {
        int index = indexes[i];
        const char *image = argv[3 + (i < argc - 4 ? i : argc - 4)];
        struct bench_device *d = &devices[i];
        if (devrt_device_open(backend, index, NULL, &d->device) != DEVRT_SUCCESS ||
            harness_load(d->device, image, &d->module) != DEVRT_SUCCESS) {
            fprintf(stderr, "device %d, %s: %s\n", index, image, devrt_last_error());
            return 1;
        }
        devrt_module_set_output_callback(d->module, harness_count_output, &d->output_bytes);
        struct devrt_device_info info;
        devrt_device_get_info(d->device, &info);
        printf("device %d: index %d, %s, server on %s\n", i, index, info.name,
               info.server_cpus[0] ? info.server_cpus : "any CPU");
        /* A GPU: a workgroup of 256 lanes per SM of a 132-SM H200; the emulation: 64 lanes. */
        d->config = backend == DEVRT_BACKEND_EMU
                        ? (struct devrt_launch_config){.grid = {2, 1, 1}, .block = {32, 1, 1}}
                        : (struct devrt_launch_config){.grid = {132, 1, 1}, .block = {256, 1, 1}};
    }
    static const struct {
        const char *kernel, *unit;
        uint32_t rounds_emu, rounds_gpu;
    } loads[] = {
        {"calls", "lane requests/s", 200, 64},
        {"allocs", "allocations/s", 2000, 256},
        {"prints", "lines/s", 200, 16},
    };
    printf("\n| per device, %d busy at once | alone | each, all busy (min) | ratio |\n"
           "|---|---|---|---|\n",
           count);
    for (size_t l = 0; l < sizeof loads / sizeof loads[0]; ++l) {
        uint32_t rounds = backend == DEVRT_BACKEND_EMU ? loads[l].rounds_emu : loads[l].rounds_gpu;
        double lanes = (double)devices[0].config.grid[0] * devices[0].config.block[0];
        /* A warm-up, then the best of three: alone, and all at once. */
        run_on(devices, count, loads[l].kernel, rounds);
        double alone = 0, together = 0;
        for (int r = 0; r < 3; ++r) {
            if (!run_on(devices, 1, loads[l].kernel, rounds))
                return 1;
            double rate = lanes * rounds / devices[0].seconds;
            alone = rate > alone ? rate : alone;
            if (!run_on(devices, count, loads[l].kernel, rounds))
                return 1;
            double slowest = 0;
            for (int i = 0; i < count; ++i) {
                double each = lanes * rounds / devices[i].seconds;
                slowest = i == 0 || each < slowest ? each : slowest;
            }
            together = slowest > together ? slowest : together;
        }
        printf("| %s, %s | %.3g | %.3g | %.2f |\n", loads[l].kernel, loads[l].unit, alone, together,
               together / alone);
    }
    for (int i = 0; i < count; ++i) {
        devrt_module_unload(devices[i].module);
        devrt_device_close(devices[i].device);
    }
    return 0;
}
