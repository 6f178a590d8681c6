/*
 * The vendor's figures beside devrt's on an AMD GPU: HIP's device malloc/free (ROCm's ockl)
 * and HIP's printf, in the shapes of devrt's heap and printf benchmarks
 * (tests/bench/heap/heap_kernels.c, tests/bench/printf/bench_kernels.c), so that the two
 * tables compare row by row. Built by tests/hardware/run-on-gpu.sh with hipcc, on the AMD
 * machine only: nothing here has ROCm's compiler.
 *
 *   hip_bench [heap] [printf] > /dev/null
 *
 * Tables go to stderr as markdown, the printed lines to stdout. Each figure is the launch's
 * wall time around hipModuleLaunchKernel's equivalent and hipDeviceSynchronize, best of three
 * after a warm-up launch, as devrt's benchmarks time devrt_launch.
 */
#include <hip/hip_runtime.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#define CHECK_HIP(call)                                                                            \
    do {                                                                                           \
        hipError_t status_ = (call);                                                               \
        if (status_ != hipSuccess) {                                                               \
            fprintf(stderr, "hip_bench: %s: %s\n", #call, hipGetErrorString(status_));            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The sizes of devrt's churn kernel: 16 to 256 bytes, by lane and round. */
__global__ void churn(unsigned rounds, unsigned *failures)
{
    unsigned long long lane = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (unsigned i = 0; i < rounds; ++i) {
        unsigned size = 16 + (unsigned)((lane * 7 + i * 13) % 16) * 16;
        unsigned long long *p = (unsigned long long *)malloc(size);
        if (!p) {
            atomicAdd(failures, 1u);
            continue;
        }
        *p = lane;
        free(p);
    }
}

__global__ void print_lines(unsigned rounds)
{
    unsigned lane = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned i = 0; i < rounds; ++i)
        printf("lane %u line %u value %f\n", lane, i, (double)i * 0.5);
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The best of three launches after a warm-up; each waits for the kernel. */
template <typename Launch> static double best_of_three(Launch launch)
{
    launch();
    CHECK_HIP(hipDeviceSynchronize());
    double best = 0;
    for (int run = 0; run < 3; ++run) {
        double start = seconds();
        launch();
        CHECK_HIP(hipDeviceSynchronize());
        double elapsed = seconds() - start;
        if (run == 0 || elapsed < best)
            best = elapsed;
    }
    return best;
}

static void heap(void)
{
    unsigned *failures;
    CHECK_HIP(hipMallocManaged(&failures, sizeof *failures));
    *failures = 0;
    const unsigned rounds = 2000;
    fprintf(stderr, "| lanes | HIP malloc + free per second |\n|---:|---:|\n");
    for (unsigned lanes = 1; lanes <= 4096; lanes *= 4) {
        unsigned block = lanes < 64 ? lanes : 64;
        double t = best_of_three([&] { churn<<<lanes / block, block>>>(rounds, failures); });
        fprintf(stderr, "| %u | %.0f |\n", lanes, (double)lanes * rounds / t);
    }
    fprintf(stderr, "\n%u allocations failed\n\n", *failures);
    CHECK_HIP(hipFree(failures));
}

static void print(void)
{
    fprintf(stderr, "| measure (HIP) | lines per second |\n|---|---|\n");
    struct {
        unsigned lanes, rounds;
    } shapes[] = {{1, 20000}, {4096, 16}};
    for (const auto &s : shapes) {
        unsigned block = s.lanes < 64 ? s.lanes : 64;
        double t = best_of_three([&] { print_lines<<<s.lanes / block, block>>>(s.rounds); });
        fprintf(stderr, "| HIP printf, 3 arguments, %u lanes x %u lines | %.0f |\n", s.lanes,
                s.rounds, (double)s.lanes * s.rounds / t);
    }
    fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
    bool want_heap = argc == 1, want_printf = argc == 1;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "heap"))
            want_heap = true;
        else if (!strcmp(argv[i], "printf"))
            want_printf = true;
        else {
            fprintf(stderr, "usage: hip_bench [heap] [printf] > /dev/null\n");
            return 2;
        }
    }
    hipDeviceProp_t props;
    CHECK_HIP(hipGetDeviceProperties(&props, 0));
    fprintf(stderr, "HIP on %s (%s), %d CUs, wave %d\n\n", props.name, props.gcnArchName,
            props.multiProcessorCount, props.warpSize);
    if (want_printf)
        print();
    if (want_heap)
        heap();
    return 0;
}
