/*
 * RPC benchmark on a backend (emu by default): round-trip latency (median, 99th
 * percentile) with one lane and with many, beside two floors: one read of host memory by
 * the device, and a round trip through host memory with a host thread that does nothing
 * but answer (no server, no ports), the ladder from that floor up to everything the client
 * does, requests per second with every port busy, and the server thread's CPU time while
 * a kernel runs without requests.
 *
 *   rpc_bench IMAGE [emu|hsa|cuda [PORTS [noring]]]
 *
 * noring loads the image without a ready ring (the fault setting no_ready_ring, the ring's
 * control): the server finds requests by passes over every port alone, as protocol v3 did.
 *
 * On a GPU (hsa, cuda) the latency rows are one lane, one whole wave, and every wave of a
 * grid that fills the GPU; the emulation backend's waves are one lane wide.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <devrt/host.h>
#include <devrt/rpc.h>

#include "faults.h" /* the server's timeline (tests/faults, not installed) */
#include "harness.h"

static int compare(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* CPU seconds the server thread has used, by its own clock (CLOCK_THREAD_CPUTIME_ID). */
static double server_cpu_seconds(devrt_device *device)
{
    struct devrt_device_info info;
    devrt_device_get_info(device, &info);
    return (double)info.server_cpu_ns / 1e9;
}

/* Run KERNEL on groups x block lanes, or end the program: without it there is no figure. */
static void launch(devrt_module *module, const char *kernel, uint32_t groups, uint32_t block,
                   const struct devrt_arg *args, size_t count)
{
    struct devrt_launch_config config = {.grid = {groups, 1, 1}, .block = {block, 1, 1}};
    if (devrt_launch(module, kernel, &config, args, count, NULL) != DEVRT_SUCCESS) {
        fprintf(stderr, "launch failed: %s\n", devrt_last_error());
        exit(1);
    }
}

static void *allocate(devrt_device *device, size_t size)
{
    void *ptr = devrt_mem_alloc(device, size);
    if (!ptr) {
        fprintf(stderr, "no memory for %zu bytes: %s\n", size, devrt_last_error());
        exit(1);
    }
    return ptr;
}

/* A table row: LABEL, then the median and 99th percentile of N samples in nanoseconds. */
static void print_row(const char *label, uint64_t *samples, size_t n, int decimals)
{
    qsort(samples, n, sizeof *samples, compare);
    printf("| %s | %.*f | %.*f |\n", label, decimals, (double)samples[n / 2] / 1000.0, decimals,
           (double)samples[n * 99 / 100] / 1000.0);
}

/* groups workgroups of block lanes each make `rounds` round trips; what one lane waited. */
static void latency(devrt_module *module, devrt_device *device, const char *what, uint32_t groups,
                    uint32_t block, uint32_t rounds)
{
    uint32_t lanes = groups * block;
    size_t n = (size_t)lanes * rounds;
    uint64_t *samples = allocate(device, n * sizeof *samples);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(samples), DEVRT_ARG_UINT(rounds)};
    launch(module, "round_trips", groups, block, args, 2);
    char label[128];
    snprintf(label, sizeof label, "round trip, %s (%u lane%s x %u)", what, lanes,
             lanes == 1 ? "" : "s", rounds);
    print_row(label, samples, n, 1);
    devrt_mem_free(device, samples);
}

/*
 * One lane round trips through the last home port of PORTS (include/devrt/rpc.h), where a
 * pass over the ports in order finds it after all the homes before it.
 */
static void latency_last_port(devrt_module *module, devrt_device *device, uint32_t ports,
                              uint32_t rounds)
{
    uint32_t slot = devrt_rpc_home_ports(ports) - 1;
    uint64_t *samples = allocate(device, (size_t)rounds * sizeof *samples);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(samples), DEVRT_ARG_UINT(rounds),
                               DEVRT_ARG_UINT(slot)};
    launch(module, "round_trips_at", 1, 1, args, 3);
    char label[128];
    snprintf(label, sizeof label, "round trip, 1 lane calling through port %u of %u (1 lane x %u)",
             slot, ports, rounds);
    print_row(label, samples, rounds, 1);
    devrt_mem_free(device, samples);
}

/* One lane reads a word of host memory `rounds` times, one read at a time. */
static void host_reads(devrt_module *module, devrt_device *device, uint32_t rounds)
{
    uint32_t *word = allocate(device, sizeof *word);
    uint64_t *samples = allocate(device, rounds * sizeof *samples);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(word), DEVRT_ARG_PTR(samples), DEVRT_ARG_UINT(rounds)};
    launch(module, "host_reads", 1, 1, args, 3);
    char label[128];
    snprintf(label, sizeof label, "one read of host memory, the floor of each poll (1 lane x %u)",
             rounds);
    print_row(label, samples, rounds, 1);
    devrt_mem_free(device, word);
    devrt_mem_free(device, samples);
}

struct answerer {
    uint32_t *words;
    struct devrt_rpc_buffer *buffer;
    uint32_t rounds, rung;
};

/*
 * The host side of the ladder: answer each of the device's counts as soon as it appears,
 * in words[1], or from rung 4 on as the server answers a one-word request (the tagged
 * halves of the lane's reply slot).
 */
static void *answer(void *arg)
{
    struct answerer *a = arg;
    for (uint32_t i = 1; i <= a->rounds; ++i) {
        while (__atomic_load_n(&a->words[0], __ATOMIC_ACQUIRE) != i)
            ;
        if (a->rung < 4) {
            __atomic_store_n(&a->words[1], i, __ATOMIC_RELEASE);
            continue;
        }
        uint32_t tag = devrt_rpc_tag(i, DEVRT_RPC_OK);
        for (int half = 0; half < 2; ++half)
            __atomic_store_n(&a->buffer->reply[0].half[half], devrt_rpc_reply_half(tag, i),
                             __ATOMIC_RELEASE);
    }
    return NULL;
}

/*
 * The ladder (the kernel `ladder` says what each rung adds): one lane's round trip with a
 * host thread that only answers, from the floor up to everything the client does but the
 * server's part. Its rows come first in the table; the real round trip follows them.
 */
static void ladder(devrt_module *module, devrt_device *device, uint32_t rounds)
{
    static const char *const rungs[] = {
        "ladder 0: ping-pong with a host thread that only answers, no server (the floor)",
        "ladder 1: + taking and giving up a port",
        "ladder 2: + the request's packet and header",
        "ladder 3: + the doorbell",
        "ladder 4: + the tagged reply in the lane's slot, acquired",
    };
    uint32_t *words = allocate(device, 2 * sizeof *words);
    struct devrt_rpc_buffer *buffer = allocate(device, sizeof *buffer);
    struct devrt_rpc_doorbell *doorbell = allocate(device, sizeof *doorbell);
    uint64_t *samples = allocate(device, rounds * sizeof *samples);
    for (uint32_t rung = 0; rung < sizeof rungs / sizeof *rungs; ++rung) {
        memset(words, 0, 2 * sizeof *words);
        struct answerer a = {words, buffer, rounds, rung};
        pthread_t thread;
        if (pthread_create(&thread, NULL, answer, &a) != 0) {
            fprintf(stderr, "no thread for the ladder\n");
            exit(1);
        }
        struct devrt_arg args[] = {DEVRT_ARG_PTR(words),    DEVRT_ARG_PTR(buffer),
                                   DEVRT_ARG_PTR(doorbell), DEVRT_ARG_PTR(samples),
                                   DEVRT_ARG_UINT(rounds),  DEVRT_ARG_UINT(rung)};
        launch(module, "ladder", 1, 1, args, 6);
        pthread_join(thread, NULL);
        char label[160];
        snprintf(label, sizeof label, "%s (1 lane x %u)", rungs[rung], rounds);
        print_row(label, samples, rounds, 1);
    }
    devrt_mem_free(device, words);
    devrt_mem_free(device, buffer);
    devrt_mem_free(device, doorbell);
    devrt_mem_free(device, samples);
}

/* One wave's round trips step by step (the kernel round_trip_steps): the median of each. */
static void round_trip_steps(devrt_module *module, devrt_device *device, uint32_t wave,
                             uint32_t rounds)
{
    static const char *const names[] = {"take a port", "send the request",
                                        "wait for the reply (the hand-back)", "give the port up"};
    enum { STEPS = sizeof names / sizeof *names };
    uint64_t *steps = allocate(device, (size_t)rounds * STEPS * sizeof *steps);
    uint64_t *column = malloc(rounds * sizeof *column);
    if (!column) {
        fprintf(stderr, "no memory for %u samples\n", rounds);
        exit(1);
    }
    struct devrt_arg args[] = {DEVRT_ARG_PTR(steps), DEVRT_ARG_UINT(rounds)};
    launch(module, "round_trip_steps", 1, wave, args, 2);
    printf("\n| step of a round trip, 1 wave (%u lanes x %u) | median us | p99 us |\n"
           "|---|---|---|\n",
           wave, rounds);
    for (uint32_t k = 0; k < STEPS; ++k) {
        for (uint32_t i = 0; i < rounds; ++i)
            column[i] = steps[i * STEPS + k];
        print_row(names[k], column, rounds, 2);
    }
    free(column);
    devrt_mem_free(device, steps);
}

/*
 * The server's side of one wave's round trips: its hook records, for each hand-back, when
 * its doorbell wait returned, its look at the rings (or its pass) began, it saw the port's
 * flip, it had read the packets, its handler had run and it had written the replies; the
 * medians of the steps between them. The first step counts only the looks that followed a
 * wait (a server that was idle when the request came, as a lone wave's mostly is).
 */
static void server_timeline(devrt_module *module, devrt_device *device, uint32_t wave,
                            uint32_t rounds)
{
    static const char *const names[] = {
        "detect: the look's start to the port's flip seen",
        "read: the flip seen to the packets read and checked",
        "handle: the handler (the echo's checksum)",
        "write: the replies and the hand-back written",
    };
    enum { STEPS = 1 + sizeof names / sizeof *names };
    struct devrt_server_timeline_entry *entries = calloc(rounds, sizeof *entries);
    uint64_t *samples = allocate(device, (size_t)wave * rounds * sizeof *samples);
    uint64_t *step[STEPS];
    for (int k = 0; k < STEPS; ++k)
        step[k] = malloc(rounds * sizeof *step[k]);
    for (int k = 0; k < STEPS; ++k)
        if (!entries || !step[k]) {
            fprintf(stderr, "no memory for %u timeline entries\n", rounds);
            exit(1);
        }
    devrt_faults_set(
        device, &(struct devrt_fault_settings){.timeline = entries, .timeline_capacity = rounds});
    struct devrt_arg args[] = {DEVRT_ARG_PTR(samples), DEVRT_ARG_UINT(rounds)};
    launch(module, "round_trips", 1, wave, args, 2);
    struct devrt_fault_stats stats;
    devrt_faults_get(device, &stats);
    devrt_faults_set(device, NULL);
    size_t woken = 0, n = 0;
    for (size_t i = 0; i < stats.timeline_entries; ++i) {
        const struct devrt_server_timeline_entry *e = &entries[i];
        uint64_t at[] = {e->pass, e->seen, e->read, e->handled, e->handed};
        bool ordered = e->handled != 0;
        for (int k = 1; k < STEPS; ++k)
            ordered &= at[k - 1] <= at[k];
        if (!ordered)
            continue;
        if (e->woke && e->woke <= e->pass)
            step[0][woken++] = e->pass - e->woke;
        for (int k = 1; k < STEPS; ++k)
            step[k][n] = at[k] - at[k - 1];
        ++n;
    }
    printf("\n| server's step, 1 wave (%u lanes x %u, %zu hand-backs) | median us | p99 us |\n"
           "|---|---|---|\n",
           wave, rounds, n);
    char label[128];
    snprintf(label, sizeof label,
             "wake: the doorbell seen to the look's start, lock taken (%zu after a wait)", woken);
    if (woken)
        print_row(label, step[0], woken, 2);
    for (int k = 1; n && k < STEPS; ++k)
        print_row(names[k - 1], step[k], n, 2);
    for (int k = 0; k < STEPS; ++k)
        free(step[k]);
    free(entries);
    devrt_mem_free(device, samples);
}

int main(int argc, char **argv)
{
    bool noring = argc > 4 && !strcmp(argv[4], "noring");
    if (argc < 2 || argc > 5 || (argc == 5 && !noring)) {
        fprintf(stderr, "usage: rpc_bench IMAGE [emu|hsa|cuda [PORTS [noring]]]\n");
        return 2;
    }
    enum devrt_backend backend = harness_backend(argc > 2 ? argv[2] : NULL);
    devrt_device *device;
    devrt_module *module = NULL;
    /* PORTS: the number of RPC ports (a power of two; default: the backend's). */
    struct devrt_device_options options = {.rpc_ports = argc > 3 ? strtoul(argv[3], NULL, 0) : 0};
    int exit_code = harness_open(backend, &options, argv[1], &device, NULL);
    if (exit_code)
        return exit_code;
    if (noring)
        devrt_faults_set(device, &(struct devrt_fault_settings){.no_ready_ring = true});
    if (harness_load(device, argv[1], &module) != DEVRT_SUCCESS) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], devrt_last_error());
        return 1;
    }
    printf("| measure (%s backend%s%s%s%s) | median us | p99 us |\n|---|---|---|\n",
           devrt_backend_name(backend), argc > 3 ? ", " : "", argc > 3 ? argv[3] : "",
           argc > 3 ? " ports" : "", noring ? ", no ready ring" : "");
    uint32_t lanes = 4096, rounds = 16, block = 64;
    host_reads(module, device, 2000);
    ladder(module, device, 2000);
    if (backend == DEVRT_BACKEND_EMU) {
        latency(module, device, "1 lane calling", 1, 1, 2000);
        latency(module, device, "256 lanes calling", 256, 1, 40);
        server_timeline(module, device, 1, 2000);
    } else {
        /*
         * A GPU: one lane; one wave (every lane of it in each request); and a grid of
         * 256-lane workgroups, 8 per SM of a 132-SM GPU (the H200), so that every wave the
         * GPU holds calls at once.
         */
        struct devrt_device_info info;
        devrt_device_get_info(device, &info);
        uint32_t wave = info.wave_size; /* 32 on NVIDIA and RDNA, 64 on CDNA */
        latency(module, device, "1 lane calling", 1, 1, 2000);
        latency_last_port(module, device, options.rpc_ports ? options.rpc_ports : 1024, 2000);
        latency(module, device, "1 wave calling", 1, wave, 2000);
        latency(module, device, "all waves calling", 132 * 8, 256, 8);
        round_trip_steps(module, device, wave, 2000);
        server_timeline(module, device, wave, 2000);
        lanes = 132 * 8 * 256;
        rounds = 4;
        block = 256;
    }

    uint64_t *samples = allocate(device, (size_t)lanes * rounds * sizeof *samples);
    struct devrt_arg args[] = {DEVRT_ARG_PTR(samples), DEVRT_ARG_UINT(rounds)};
    double start = harness_seconds();
    launch(module, "round_trips", lanes / block, block, args, 2);
    double elapsed = harness_seconds() - start;
    printf("\n| throughput, %u lanes x %u requests, all ports busy | %.0f lane requests/s |\n"
           "|---|---|\n",
           lanes, rounds, lanes * rounds / elapsed);
    devrt_mem_free(device, samples);

    double cpu_before = server_cpu_seconds(device);
    struct devrt_arg idle_args[] = {DEVRT_ARG_U64(1000000000ull)};
    start = harness_seconds();
    launch(module, "idle", 1, 1, idle_args, 1);
    elapsed = harness_seconds() - start;
    double cpu = server_cpu_seconds(device) - cpu_before;
    printf("| server CPU while a kernel runs %.2f s without requests | %.1f ms (%.2f%%) |\n",
           elapsed, cpu * 1000, 100 * cpu / elapsed);
    devrt_module_unload(module);
    devrt_device_close(device);
    return 0;
}
