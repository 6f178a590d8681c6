/*
 * A prototype, outside devrt, of a doorbell the GPU rings by interrupt instead of a word the
 * server polls: the server thread queues, on a stream of its own, a wait for the doorbell
 * word (cuStreamWaitValue32, done by the GPU's front end) and an event that blocks the
 * waiting thread (CU_EVENT_BLOCKING_SYNC), then sleeps in cuEventSynchronize until the
 * driver's interrupt wakes it. The same figures as idle_bench: the thread's CPU time while
 * a kernel runs a second without a request, and the round trip of the first request after
 * quiet spells (docs/performance.md, "Idle server").
 *
 *   nvcc -O2 -o interrupt_wake tests/bench/idle/interrupt_wake.cu -lcuda && ./interrupt_wake
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if ((x) != 0) {                                                                            \
            fprintf(stderr, "%s failed\n", #x);                                                    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

__device__ static unsigned long long now(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void idle(unsigned long long ns)
{
    unsigned long long start = now();
    while (now() - start < ns)
        ;
}

__global__ void quiet_then_call(volatile unsigned *doorbell, volatile unsigned *answer,
                                unsigned long long *samples, unsigned rounds, unsigned base,
                                unsigned long long quiet)
{
    for (unsigned i = 0; i < rounds; ++i) {
        unsigned long long start = now();
        while (now() - start < quiet)
            ;
        start = now();
        __threadfence_system();
        *doorbell = 1;
        __threadfence_system();
        while (*answer != base + i + 1)
            ;
        samples[i] = now() - start;
    }
}

static unsigned *doorbell, *answer;
static volatile int stop;
static CUcontext context;
static clockid_t server_clock;

static void *server(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(context));
    pthread_getcpuclockid(pthread_self(), &server_clock);
    CUstream stream;
    CUevent event;
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&event, CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING));
    unsigned served = 0;
    while (!stop) {
        CHECK(cuStreamWaitValue32(stream, (CUdeviceptr)(uintptr_t)doorbell, 1,
                                  CU_STREAM_WAIT_VALUE_GEQ));
        CHECK(cuEventRecord(event, stream));
        CHECK(cuEventSynchronize(event));
        if (stop)
            break;
        __atomic_store_n(doorbell, 0u, __ATOMIC_SEQ_CST);
        __atomic_store_n(answer, ++served, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static unsigned long long thread_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static int compare(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    alarm(45); /* a hang ends the run, what was printed stays */
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    CHECK(cuCtxGetCurrent(&context));
    CHECK(cudaHostAlloc((void **)&doorbell, 4096, cudaHostAllocMapped));
    answer = doorbell + 32;
    *doorbell = *answer = 0;
    unsigned long long *samples;
    CHECK(cudaHostAlloc((void **)&samples, 200 * sizeof *samples, cudaHostAllocMapped));
    /*
     * Both kernels loaded before the server's wait is queued: the driver's lazy loading of
     * a kernel at its first launch would wait for that stream's wait, which waits for the
     * kernel (a deadlock; devrt loads every kernel at the module's load, cuFuncLoad).
     */
    struct cudaFuncAttributes attributes;
    CHECK(cudaFuncGetAttributes(&attributes, idle));
    CHECK(cudaFuncGetAttributes(&attributes, quiet_then_call));
    cudaStream_t kernels;
    CHECK(cudaStreamCreateWithFlags(&kernels, cudaStreamNonBlocking));
    pthread_t thread;
    pthread_create(&thread, NULL, server, NULL);
    struct timespec settle = {0, 100000000};
    nanosleep(&settle, NULL);

    printf("| kernel without requests | server CPU ms | share of a core |\n|---|---|---|\n");
    for (int run = 0; run < 3; ++run) {
        unsigned long long cpu = thread_ns(server_clock), wall = thread_ns(CLOCK_MONOTONIC);
        idle<<<1, 1, 0, kernels>>>(1000000000ull);
        CHECK(cudaStreamSynchronize(kernels));
        cpu = thread_ns(server_clock) - cpu;
        wall = thread_ns(CLOCK_MONOTONIC) - wall;
        printf("| run %d, 1 s | %.3f | %.4f%% |\n", run + 1, cpu * 1e-6, 100.0 * cpu / wall);
    }
    static const struct {
        const char *label;
        unsigned long long quiet;
        unsigned rounds;
    } spells[] = {{"none (back to back)", 0, 200}, {"50 us", 50000, 100}, {"1 ms", 1000000, 50},
                  {"10 ms", 10000000, 30},         {"100 ms", 100000000, 10},
                  {"1 s", 1000000000, 3}};
    printf("\n| quiet spell before the request | requests | median us | max us |\n"
           "|---|---|---|---|\n");
    unsigned base = 0;
    for (size_t i = 0; i < sizeof spells / sizeof spells[0]; ++i) {
        quiet_then_call<<<1, 1, 0, kernels>>>(doorbell, answer, samples, spells[i].rounds, base,
                                              spells[i].quiet);
        CHECK(cudaStreamSynchronize(kernels));
        base += spells[i].rounds;
        qsort(samples, spells[i].rounds, sizeof *samples, compare);
        printf("| %s | %u | %.1f | %.1f |\n", spells[i].label, spells[i].rounds,
               samples[spells[i].rounds / 2] * 1e-3, samples[spells[i].rounds - 1] * 1e-3);
    }
    stop = 1;
    __atomic_store_n(doorbell, 1u, __ATOMIC_SEQ_CST);
    pthread_join(thread, NULL);
    return 0;
}
