/*
 * devrt's heap and printf against CUDA's on an NVIDIA GPU, side by side in one run,
 * through the CUDA backend:
 *
 *   nvptx_bench IMAGE [heap] [printf] [bulk] [heap-mib=N] [bulk-mib=N] [verbose] > /dev/null
 *
 * runs the parts named (both by default, printf first); tables go to stderr as markdown, the
 * kernels' printed lines to stdout; verbose adds each launch's time as it ends (to see where a
 * launch hangs). Every figure is devrt's and CUDA's from the same run, and the
 * ratio devrt / CUDA of the two.
 *
 * Heap: each thread allocates and frees a block ROUNDS times, 16 to 256 bytes picked by a
 * hash of the thread and the round (the same sizes on both sides), writing one byte of it
 * between; operations (one malloc + one free) per second, for 1 thread to about a million.
 * Both heaps get N MiB (default 256, devrt's default maximum): devrt's through its device
 * options, CUDA's through cuCtxSetLimit (its default is 8 MiB).
 *
 * printf: every thread prints lines of three arguments ("lane %u line %u value %f\n"),
 * devrt_printf against CUDA's vprintf; lines per second until the output is written
 * (devrt's streams while the kernel runs, CUDA's is written when it ends). CUDA keeps its
 * lines in a FIFO of fixed size until the kernel ends (1 MiB by CUDA's documentation, about
 * 30000 lines; the table's note gives what the driver reports), so no launch prints more
 * than 16384.
 *
 * Every figure is the launch's wall time on the host around devrt_launch, best of three
 * launches after a warm-up launch of the same kernel and shape (the first launch of a
 * kernel pays for the driver's lazy module loading).
 *
 * The runtime has no call for the SM count or CUDA's limits, so the program takes those
 * few from the driver that devrt opened (libcuda.so.1; devrt's primary context is current
 * on this thread once the device is open).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/host.h>

#include "cuda_driver.h"
#include "harness.h"

static devrt_device *device;
static devrt_module *module;
static uint32_t *nulls; /* take_nulls' answer, host-visible */
static bool verbose;    /* each launch's time on stderr as it ends, between the rows */

static struct cuda_driver cu;

/* The first failure of each side, told under the table it broke. */
static char failure[2][512];

/*
 * Wall seconds of one launch of KERNEL over GROUPS x BLOCK threads with ARGS, its output
 * written; negative if it failed.
 */
static double launch(const char *kernel, uint32_t groups, uint32_t block,
                     const struct devrt_arg *args, size_t count, int cuda)
{
    struct devrt_launch_config config = {.grid = {groups, 1, 1}, .block = {block, 1, 1}};
    if (verbose) /* the one argument of the heap and printf kernels: rounds or lines */
        fprintf(stderr, "  %s %u x %u (%u): ", kernel, groups, block,
                count == 1 ? args[0].value.u32 : 0u);
    fflush(stdout);
    double start = harness_seconds();
    int status = devrt_launch(module, kernel, &config, args, count, NULL);
    fflush(stdout);
    double elapsed = harness_seconds() - start;
    if (verbose)
        fprintf(stderr, "%.3f ms%s\n", elapsed * 1000, status == DEVRT_SUCCESS ? "" : ", failed");
    if (status == DEVRT_SUCCESS)
        return elapsed;
    if (!failure[cuda][0])
        snprintf(failure[cuda], sizeof failure[cuda], "%s, %u x %u threads: %s", kernel, groups,
                 block, devrt_last_error());
    return -1;
}

/* The NULLs that heap launches counted since the last call. */
static uint32_t take_nulls(void)
{
    *nulls = 0;
    struct devrt_launch_config one = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    struct devrt_arg arg = DEVRT_ARG_PTR(nulls);
    if (devrt_launch(module, "take_nulls", &one, &arg, 1, NULL) != DEVRT_SUCCESS) {
        fprintf(stderr, "take_nulls failed: %s\n", devrt_last_error());
        exit(1);
    }
    return *nulls;
}

struct figure {
    double seconds; /* the best launch's; negative if a launch failed */
    uint32_t nulls; /* in the best launch */
};

/* A warm-up launch, then the best of three. */
static struct figure measure(const char *kernel, uint32_t groups, uint32_t block,
                             struct devrt_arg arg, int cuda, bool heap)
{
    struct figure best = {-1, 0};
    for (int i = 0; i < 4; ++i) {
        double seconds = launch(kernel, groups, block, &arg, 1, cuda);
        if (seconds < 0)
            return (struct figure){-1, 0};
        uint32_t count = heap ? take_nulls() : 0;
        if (verbose && heap)
            fprintf(stderr, "  NULLs: %u\n", count);
        if (i > 0 && (best.seconds < 0 || seconds < best.seconds))
            best = (struct figure){seconds, count};
    }
    return best;
}

/* "| rate | rate | ratio |" cells, "failed" where a side's launch failed. */
static void rates(double work, struct figure devrt, struct figure cuda)
{
    if (devrt.seconds < 0)
        fprintf(stderr, "| failed ");
    else
        fprintf(stderr, "| %.0f ", work / devrt.seconds);
    if (cuda.seconds < 0)
        fprintf(stderr, "| failed ");
    else
        fprintf(stderr, "| %.0f ", work / cuda.seconds);
    if (devrt.seconds < 0 || cuda.seconds < 0)
        fprintf(stderr, "| - ");
    else
        fprintf(stderr, "| %.2f ", cuda.seconds / devrt.seconds);
}

static void tell_failures(void)
{
    for (int cuda = 0; cuda < 2; ++cuda) {
        if (failure[cuda][0])
            fprintf(stderr, "\n%s launch failed: %s\n", cuda ? "CUDA" : "devrt", failure[cuda]);
        failure[cuda][0] = '\0';
    }
}

static void heap(uint32_t full, uint32_t heap_mib, size_t cuda_heap)
{
    /* Threads per row, full occupancy in its place; blocks of 256 from 256 threads up. */
    uint32_t counts[7] = {1, 32, 1024, 32768, 4096 * 256}, rows = 5, at = 0;
    while (at < rows && counts[at] < full)
        ++at;
    if (at == rows || counts[at] != full) {
        memmove(&counts[at + 1], &counts[at], (rows - at) * sizeof *counts);
        counts[at] = full;
        ++rows;
    }
    fprintf(stderr,
            "\n| threads | rounds | devrt ops/s | CUDA ops/s | devrt / CUDA | devrt NULLs | "
            "CUDA NULLs |\n|---:|---:|---:|---:|---:|---:|---:|\n");
    for (uint32_t row = 0; row < rows; ++row) {
        uint32_t block = counts[row] < 256 ? counts[row] : 256;
        uint32_t groups = (counts[row] + block - 1) / block, threads = groups * block;
        /* 65536 operations a launch, with 4 to 4096 rounds a thread. */
        uint32_t rounds = 65536 / threads;
        rounds = rounds < 4 ? 4 : rounds > 4096 ? 4096 : rounds;
        /* CUDA's first: with verbose, its figure shows even if devrt's launch hangs. */
        struct figure cuda = measure("heap_cuda", groups, block, DEVRT_ARG_UINT(rounds), 1, true);
        struct figure devrt = measure("heap_devrt", groups, block, DEVRT_ARG_UINT(rounds), 0, true);
        fprintf(stderr, "| %u%s | %u ", threads, counts[row] == full ? " (full)" : "", rounds);
        rates((double)threads * rounds, devrt, cuda);
        fprintf(stderr, "| %u | %u |\n", devrt.nulls, cuda.nulls);
    }
    fprintf(stderr,
            "\nOne op: a malloc of 16 to 256 bytes (16-byte steps, the same sizes on both sides), "
            "a byte written, its free; ops/s = threads x rounds / the launch's wall time, best of "
            "3 after a warm-up; NULLs: allocations that failed in that launch.\n");
    if (cuda_heap)
        fprintf(stderr, "Heaps: devrt's up to %u MiB, CUDA's %.0f MiB (cuCtxSetLimit).\n", heap_mib,
                (double)cuda_heap / (1 << 20));
    else
        fprintf(stderr,
                "Heaps: devrt's up to %u MiB, CUDA's at the driver's default (8 MiB): the driver "
                "would not set it.\n",
                heap_mib);
    struct devrt_heap_stats stats;
    if (devrt_heap_stats(module, &stats) == DEVRT_SUCCESS)
        fprintf(stderr,
                "devrt's heap afterwards: %llu bytes in use, %llu reserved in %u slabs, %llu "
                "failed allocations in all.\n",
                (unsigned long long)stats.bytes_in_use, (unsigned long long)stats.bytes_reserved,
                stats.slabs, (unsigned long long)stats.failed_allocations);
    tell_failures();
}

static void print(size_t fifo)
{
    static const uint32_t shapes[][3] = {{1, 32, 1}, {1, 32, 2}, {64, 256, 1}, {32, 256, 2}};
    fprintf(stderr, "\n| threads x lines | devrt lines/s | CUDA lines/s | devrt / CUDA | devrt ms "
                    "| CUDA ms |\n|---|---:|---:|---:|---:|---:|\n");
    for (size_t row = 0; row < sizeof shapes / sizeof *shapes; ++row) {
        uint32_t groups = shapes[row][0], block = shapes[row][1], lines = shapes[row][2];
        struct devrt_arg arg = DEVRT_ARG_UINT(lines);
        struct figure devrt = measure("printf_devrt", groups, block, arg, 0, false);
        struct figure cuda = measure("printf_cuda", groups, block, arg, 1, false);
        fprintf(stderr, "| %u x %u ", groups * block, lines);
        rates((double)groups * block * lines, devrt, cuda);
        for (int side = 0; side < 2; ++side) {
            double seconds = side ? cuda.seconds : devrt.seconds;
            if (seconds < 0)
                fprintf(stderr, "| - ");
            else
                fprintf(stderr, "| %.2f ", seconds * 1000);
        }
        fprintf(stderr, "|\n");
    }
    fprintf(stderr,
            "\nEach line: \"lane %%u line %%u value %%f\\n\" (devrt_printf against vprintf); "
            "lines/s = lines / the launch's wall time until the output is written, best of 3 "
            "after a warm-up.");
    if (fifo)
        fprintf(stderr, " CUDA's printf FIFO: %.0f KiB.", (double)fifo / 1024);
    fprintf(stderr, "\n");
    tell_failures();
}

/* Bulk output's sink: bytes and lines taken, and lines that did not end where they should. */
struct bulk_sink {
    uint64_t bytes, lines, bad;
    uint32_t line_bytes;
};

static void take_bulk(void *context, uint32_t stream, const char *data, size_t size)
{
    struct bulk_sink *sink = context;
    sink->bytes += size;
    sink->lines++;
    sink->bad += stream != DEVRT_OUTPUT_RAW || size != sink->line_bytes || data[size - 1] != '\n';
}

/* The best of three after a warm-up. */
static double bulk_best(const char *kernel, uint32_t groups, uint32_t block, const char *slices,
                        uint32_t bytes, uint32_t stride, uint32_t lines, int cuda)
{
    double best = -1;
    for (int i = 0; i < 4; ++i) {
        struct devrt_arg args[] = {DEVRT_ARG_PTR((void *)slices), DEVRT_ARG_UINT(bytes),
                                   DEVRT_ARG_UINT(stride), DEVRT_ARG_UINT(lines)};
        double seconds = launch(kernel, groups, block, args, 4, cuda);
        if (seconds < 0)
            return -1;
        if (i > 0 && (best < 0 || seconds < best))
            best = seconds;
    }
    return best;
}

/*
 * Bulk output: lines of 4 KiB and 64 KiB from every thread of a full GPU (256 MiB a launch)
 * into a callback and into a file, under the default output budget; beside them CUDA's
 * printf of the same lines (as many as its FIFO holds) and cuMemcpyDtoH of the same bytes
 * into pageable memory (the bus).
 */
static void bulk(uint32_t full, size_t fifo, uint32_t bulk_mib)
{
    if (!cu.mem_alloc) {
        fprintf(stderr, "bulk: the CUDA driver's functions are missing\n");
        return;
    }
    /* Each line length twice: one line a thread, and 16 a thread from a sixteenth of them. */
    static const uint32_t sizes[] = {4096, 4096, 65536, 65536};
    const uint64_t launch_bytes = (uint64_t)bulk_mib << 20;
    fprintf(stderr, "\n| line | threads x lines | into | MiB/s | lines/s | ms | "
                    "CUDA printf lines/s (threads x lines) | cuMemcpyDtoH MiB/s |\n"
                    "|---:|---|---|---:|---:|---:|---:|---:|\n");
    for (size_t row = 0; row < sizeof sizes / sizeof *sizes; ++row) {
        uint32_t bytes = sizes[row], stride = bytes + 64;
        uint32_t threads =
            (uint32_t)(launch_bytes / bytes) < full ? (uint32_t)(launch_bytes / bytes) : full;
        threads = row % 2 ? threads / 16 / 256 * 256 : threads / 256 * 256;
        if (threads < 256) /* a small launch_bytes: one block, and fewer lines */
            threads = 256;
        uint32_t lines = (uint32_t)(launch_bytes / ((uint64_t)threads * bytes));
        lines = lines ? lines : 1;
        size_t slice_bytes = (size_t)threads * stride;
        /* The lines in the GPU's own memory, where a kernel's output is made. */
        char *host = malloc(slice_bytes);
        unsigned long long device_lines = 0;
        if (!host || cu.mem_alloc(&device_lines, slice_bytes) != 0) {
            fprintf(stderr, "no memory for %zu bytes of lines\n", slice_bytes);
            free(host);
            return;
        }
        const char *slices = (const char *)(uintptr_t)device_lines;
        for (uint32_t t = 0; t < threads; ++t) {
            char *line = host + (size_t)t * stride;
            for (uint32_t i = 0; i + 1 < bytes; ++i)
                line[i] = (char)('a' + (t + i) % 26);
            line[bytes - 1] = '\n';
            memset(line + bytes, 0, stride - bytes);
        }
        cu.memcpy_htod(device_lines, host, slice_bytes);
        /* The bus: the same bytes a launch writes, copied by the driver. */
        double copy = -1;
        {
            for (int i = 0; i < 4; ++i) {
                double start = harness_seconds();
                uint64_t done = 0;
                while (done < launch_bytes) {
                    size_t n =
                        launch_bytes - done < slice_bytes ? launch_bytes - done : slice_bytes;
                    if (cu.memcpy_dtoh(host, device_lines, n) != 0)
                        break;
                    done += n;
                }
                double seconds = harness_seconds() - start;
                if (i > 0 && (copy < 0 || seconds < copy))
                    copy = seconds;
            }
        }
        /* CUDA's printf: as many lines as half its FIFO holds, one each from that many threads. */
        uint32_t cuda_threads = fifo ? (uint32_t)(fifo / 2 / bytes) / 32 * 32 : 0;
        cuda_threads = cuda_threads < threads ? cuda_threads : threads;
        double cuda = -1;
        if (cuda_threads) {
            devrt_module_set_output_file(module, NULL);
            cuda = bulk_best("bulk_cuda", cuda_threads / 32, 32, slices, bytes, stride, 1, 1);
        }
        for (int into_file = 0; into_file < 2; ++into_file) {
            struct bulk_sink sink = {.line_bytes = bytes};
            FILE *file = NULL;
            if (into_file) {
                file = tmpfile();
                devrt_module_set_output_file(module, file);
            } else {
                devrt_module_set_output_callback(module, take_bulk, &sink);
            }
            double seconds =
                bulk_best("bulk_devrt", threads / 256, 256, slices, bytes, stride, lines, 0);
            if (into_file) {
                devrt_module_set_output_file(module, stdout);
                if (file)
                    fclose(file);
            } else {
                devrt_module_set_output_callback(module, NULL, NULL);
            }
            double mib = launch_bytes / 1048576.0;
            fprintf(stderr, "| %u KiB | %u x %u | %s ", bytes / 1024, threads, lines,
                    into_file ? "a file" : "a callback");
            if (seconds < 0)
                fprintf(stderr, "| failed | - | - ");
            else
                fprintf(stderr, "| %.0f | %.0f | %.1f ", mib / seconds,
                        (double)threads * lines / seconds, seconds * 1000);
            if (cuda < 0)
                fprintf(stderr, "| - ");
            else
                fprintf(stderr, "| %.0f (%u x 32 x 1) ", cuda_threads / cuda, cuda_threads / 32);
            if (copy < 0)
                fprintf(stderr, "| - |\n");
            else
                fprintf(stderr, "| %.0f |\n", mib / copy);
            if (!into_file && seconds >= 0 &&
                (sink.bad || sink.bytes != 4ull * threads * lines * bytes))
                fprintf(stderr,
                        "(the callback took %llu lines, %llu bytes, %llu malformed, of "
                        "%llu lines)\n",
                        (unsigned long long)sink.lines, (unsigned long long)sink.bytes,
                        (unsigned long long)sink.bad, (unsigned long long)(4ull * threads * lines));
        }
        free(host);
        cu.mem_free(device_lines);
    }
    fprintf(stderr, "\nMiB/s: the launch's bytes / its wall time until the output is taken, best "
                    "of 3 after a warm-up; the default output budget. CUDA's printf: \"%%s\" "
                    "of the same line, one per thread, as many as half its FIFO holds.\n");
    tell_failures();
}

static void usage(void)
{
    fprintf(stderr, "usage: nvptx_bench IMAGE [heap] [printf] [bulk] [heap-mib=N] [bulk-mib=N] "
                    "[verbose] > /dev/null\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage();
        return 2;
    }
    bool run_heap = false, run_print = false, run_bulk = false;
    uint32_t heap_mib = 256, bulk_mib = 256;
    for (int i = 2; i < argc; ++i) {
        char *end = argv[i];
        if (!strncmp(argv[i], "heap-mib=", 9))
            heap_mib = (uint32_t)strtoul(argv[i] + 9, &end, 10);
        if (!strncmp(argv[i], "bulk-mib=", 9))
            bulk_mib = (uint32_t)strtoul(argv[i] + 9, &end, 10);
        if (!strcmp(argv[i], "verbose")) {
            verbose = true;
        } else if (!strcmp(argv[i], "heap")) {
            run_heap = true;
        } else if (!strcmp(argv[i], "printf")) {
            run_print = true;
        } else if (!strcmp(argv[i], "bulk")) {
            run_bulk = true;
        } else if (end == argv[i] || *end || heap_mib == 0 || heap_mib > 65536 || bulk_mib == 0 ||
                   bulk_mib > 4096) {
            usage();
            return 2;
        }
    }
    if (!run_heap && !run_print && !run_bulk)
        run_heap = run_print = run_bulk = true;

    struct devrt_device_options options = {.heap_max_bytes = (size_t)heap_mib << 20};
    int exit_code = harness_open(DEVRT_BACKEND_CUDA, &options, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    nulls = devrt_mem_alloc(device, sizeof *nulls);
    if (!nulls) {
        fprintf(stderr, "no host-visible memory: %s\n", devrt_last_error());
        return 1;
    }

    /* What the runtime does not tell: the device's size and CUDA's limits. */
    char name[256] = "NVIDIA GPU";
    int sms = 132, per_sm = 2048, cu_device;
    size_t cuda_heap = 0, fifo = 0;
    if (cuda_driver_open(&cu) && cu.device_get(&cu_device, 0) == 0) {
        cu.device_get_name(name, sizeof name, cu_device);
        cu.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu_device);
        cu.device_get_attribute(&per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                                cu_device);
        /* Before any kernel calls CUDA's malloc, or the driver refuses. */
        if (cu.set_limit(CU_LIMIT_MALLOC_HEAP_SIZE, (size_t)heap_mib << 20) == 0)
            cu.get_limit(&cuda_heap, CU_LIMIT_MALLOC_HEAP_SIZE);
        cu.get_limit(&fifo, CU_LIMIT_PRINTF_FIFO_SIZE);
    }
    uint32_t full = (uint32_t)sms * (uint32_t)per_sm;

    for (int i = 0; i < argc; ++i)
        fprintf(stderr, "%s ", argv[i]);
    fprintf(stderr, "# %s, %d SMs x %d threads = %u threads at full occupancy\n", name, sms, per_sm,
            full);
    /* printf first: it takes a second, and its table stands even if a heap launch hangs. */
    if (run_print)
        print(fifo);
    if (run_heap)
        heap(full, heap_mib, cuda_heap);
    if (run_bulk)
        bulk(full, fifo, bulk_mib);

    devrt_mem_free(device, nulls);
    devrt_module_unload(module);
    devrt_device_close(device);
    return 0;
}
