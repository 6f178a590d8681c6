/*
 * RPC benchmark on a backend (emu by default): round-trip latency (median, 99th
 * percentile) with one lane and with many, requests per second with every port busy, and
 * the server thread's CPU time while a kernel runs without requests.
 *
 *   rpc_bench IMAGE [emu|hsa]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <devrt/host.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* CPU seconds the server thread has used, from /proc. */
static double server_cpu_seconds(void)
{
    DIR *dir = opendir("/proc/self/task");
    double seconds = -1;
    struct dirent *entry;
    while (dir && (entry = readdir(dir))) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(comm, sizeof comm, f) || strncmp(comm, "devrt-server", 12)) {
            fclose(f);
            continue;
        }
        fclose(f);
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", entry->d_name);
        f = fopen(path, "r");
        unsigned long utime = 0, stime = 0;
        if (f && fscanf(f, "%*d (%*[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                        &utime, &stime) == 2)
            seconds = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
        if (f)
            fclose(f);
    }
    if (dir)
        closedir(dir);
    return seconds;
}

static void latency(devrt_module *module, devrt_device *device, uint32_t lanes, uint32_t rounds)
{
    uint64_t *samples = devrt_mem_alloc(device, (size_t)lanes * rounds * sizeof *samples);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(samples), DEVRT_ARG_UINT(rounds)};
    struct devrt_launch_config config = {{lanes, 1, 1}, {1, 1, 1}};
    if (devrt_launch(module, "round_trips", &config, args, 2, NULL) != DEVRT_SUCCESS) {
        fprintf(stderr, "launch failed: %s\n", devrt_last_error());
        exit(1);
    }
    size_t n = (size_t)lanes * rounds;
    qsort(samples, n, sizeof *samples, compare);
    printf("| round trip, %u lane%s calling | %.1f | %.1f |\n", lanes, lanes == 1 ? "" : "s",
           (double)samples[n / 2] / 1000.0, (double)samples[n * 99 / 100] / 1000.0);
    devrt_mem_free(device, samples);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rpc_bench IMAGE [emu|hsa]\n");
        return 2;
    }
    enum devrt_backend backend = argc > 2 && !strcmp(argv[2], "hsa") ? DEVRT_BACKEND_HSA
                                                                      : DEVRT_BACKEND_EMU;
    devrt_device *device;
    devrt_module *module;
    if (devrt_device_open(backend, 0, NULL, &device) != DEVRT_SUCCESS ||
        devrt_module_load(device, argv[1], &module) != DEVRT_SUCCESS) {
        fprintf(stderr, "rpc_bench: %s\n", devrt_last_error());
        return 1;
    }
    printf("| measure (emulation backend unless said) | median us | p99 us |\n|---|---|---|\n");
    latency(module, device, 1, 2000);
    latency(module, device, 256, 40);

    uint32_t lanes = 4096, rounds = 16;
    uint64_t *samples = devrt_mem_alloc(device, (size_t)lanes * rounds * sizeof *samples);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(samples), DEVRT_ARG_UINT(rounds)};
    struct devrt_launch_config config = {{lanes / 64, 1, 1}, {64, 1, 1}};
    double start = now();
    devrt_launch(module, "round_trips", &config, args, 2, NULL);
    double elapsed = now() - start;
    printf("\n| throughput, %u lanes x %u requests, all ports busy | %.0f requests/s |\n|---|---|\n",
           lanes, rounds, lanes * rounds / elapsed);
    devrt_mem_free(device, samples);

    double cpu_before = server_cpu_seconds();
    struct devrt_arg idle_args[] = {DEVRT_ARG_U64(1000000000ull)};
    struct devrt_launch_config one = {{1, 1, 1}, {1, 1, 1}};
    start = now();
    devrt_launch(module, "idle", &one, idle_args, 1, NULL);
    elapsed = now() - start;
    double cpu = server_cpu_seconds() - cpu_before;
    printf("| server CPU while a kernel runs %.2f s without requests | %.1f ms (%.2f%%) |\n",
           elapsed, cpu * 1000, 100 * cpu / elapsed);
    devrt_module_unload(module);
    devrt_device_close(device);
    return 0;
}
