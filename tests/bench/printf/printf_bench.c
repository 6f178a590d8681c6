/*
 * printf benchmark on a backend (emu by default): lines per second with many lanes
 * printing at once, output discarded by a callback (so the figure is devrt's, not the
 * terminal's), and with output written to a file.
 *
 *   printf_bench IMAGE [emu|hsa]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <devrt/host.h>

#include "harness.h"

static size_t bytes;

static void run(devrt_module *module, const char *kernel, const char *label, uint32_t lanes,
                uint32_t rounds)
{
    struct devrt_arg args[] = {DEVRT_ARG_UINT(rounds)};
    uint32_t block = lanes < 64 ? lanes : 64;
    struct devrt_launch_config config = {.grid = {lanes / block, 1, 1}, .block = {block, 1, 1}};
    bytes = 0;
    double start = harness_seconds();
    if (devrt_launch(module, kernel, &config, args, 1, NULL) != DEVRT_SUCCESS) {
        fprintf(stderr, "launch failed: %s\n", devrt_last_error());
        exit(1);
    }
    double elapsed = harness_seconds() - start;
    double lines = (double)lanes * rounds;
    printf("| %s, %u lanes x %u lines | %.0f lines/s | %.1f MB/s |\n", label, lanes, rounds,
           lines / elapsed, bytes ? (double)bytes / elapsed / 1e6 : 0.0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: printf_bench IMAGE [emu|hsa]\n");
        return 2;
    }
    enum devrt_backend backend = harness_backend(argc > 2 ? argv[2] : NULL);
    devrt_device *device;
    devrt_module *module;
    int exit_code = harness_open(backend, NULL, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    printf("| measure (%s backend) | lines per second | output |\n|---|---|---|\n",
           devrt_backend_name(backend));
    devrt_module_set_output_callback(module, harness_count_output, &bytes);
    run(module, "print_lines", "devrt_printf macro, 3 arguments, to a callback", 1, 20000);
    run(module, "print_lines", "devrt_printf macro, 3 arguments, to a callback", 4096, 16);
    run(module, "print_lines_variadic", "(devrt_printf) variadic, to a callback", 4096, 16);
    run(module, "put_lines", "devrt_puts, to a callback", 4096, 16);
    FILE *sink = fopen("/dev/null", "w");
    devrt_module_set_output_file(module, sink);
    run(module, "print_lines", "devrt_printf macro, to a FILE (/dev/null)", 4096, 16);
    fclose(sink);
    devrt_module_unload(module);
    devrt_device_close(device);
    return 0;
}
