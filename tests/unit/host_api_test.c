/*
 * The host API given what a program can get wrong (include/devrt/host.h): handles that are
 * NULL, and sizes of memory no block can have. One case per invocation:
 *
 *   host_api_test null_handles    the functions that return nothing take NULL and do nothing
 *   host_api_test bad_open        devrt_device_open refuses backends and indexes no device has
 *   host_api_test mem_alloc_limits  devrt_mem_alloc refuses 0 bytes, no device and sizes past
 *                                 PTRDIFF_MAX with NULL and a message (the emulation's
 *                                 rounding wrapped SIZE_MAX to a 256-byte block)
 *   host_api_test mem_alloc_control the same device gives a block it can: the refusals above
 *                                 are of the sizes, not of every allocation
 *   host_api_test callback_switches IMAGE  an output callback that sends the module's output
 *                                 to a file: the later lines go there (the server called the
 *                                 callback holding the lock the setter took: it hung)
 *   host_api_test wrong_backend IMAGE WHAT  IMAGE loaded on the emulation is refused with
 *                                 DEVRT_ERROR_IMAGE and a message that says it is WHAT (dlopen
 *                                 said it "cannot open shared object file")
 *   host_api_test trace FILE      devrt_device_trace refuses no device, no file and a device
 *                                 traced already; FILE, traced, is whole JSON once closed
 *
 * Exits 0 when the case holds, 1 when it does not (a crash is the failure before the fix).
 */
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

/* Run with DEVRT_TRACE unset: the one trace is the call's. */
static void trace(devrt_device *device, const char *path)
{
    CHECK(devrt_device_trace(NULL, path) == DEVRT_ERROR_INVALID_ARGUMENT, "no device");
    CHECK(devrt_device_trace(device, NULL) == DEVRT_ERROR_INVALID_ARGUMENT, "no file");
    CHECK(devrt_device_trace(device, path) == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(devrt_device_trace(device, path) == DEVRT_ERROR_INVALID_ARGUMENT &&
              strstr(devrt_last_error(), "traced already"),
          "traced twice: %s", devrt_last_error());
    devrt_device_close(device);
    FILE *file = fopen(path, "r");
    char text[4096] = "";
    size_t length = file ? fread(text, 1, sizeof text - 1, file) : 0;
    if (file)
        fclose(file);
    CHECK(!strncmp(text, "{\"traceEvents\":[", strlen("{\"traceEvents\":[")) &&
              strstr(text, "\"dropped\":0") && length > 2 && !strcmp(text + length - 2, "}\n"),
          "%s: not a whole trace: '%s'", path, text);
}

static void null_handles(void)
{
    devrt_module_set_output_file(NULL, stdout);
    devrt_module_set_output_callback(NULL, NULL, NULL);
    devrt_module_set_report_file(NULL, stderr);
    devrt_module_unload(NULL);
    devrt_stream_destroy(NULL);
    devrt_mem_free(NULL, NULL);
    devrt_device_close(NULL);
    CHECK(devrt_device_backend(NULL) == DEVRT_BACKEND_AUTO, "got backend %d",
          (int)devrt_device_backend(NULL));
}

/*
 * devrt_device_open refuses a backend no device is opened on (AUTO, a value of no
 * enumerator) and a negative index as the caller's mistake, not as "no device"; the
 * control, the emulation's device 0, opens.
 */
static void bad_open(void)
{
    struct {
        enum devrt_backend backend;
        int index;
    } cases[] = {{DEVRT_BACKEND_AUTO, 0}, {(enum devrt_backend)42, 0}, {DEVRT_BACKEND_EMU, -1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        devrt_device *device = (devrt_device *)&cases; /* must come back NULL */
        int status = devrt_device_open(cases[i].backend, cases[i].index, NULL, &device);
        CHECK(status == DEVRT_ERROR_INVALID_ARGUMENT && device == NULL &&
                  strstr(devrt_last_error(), "devrt_device_open: "),
              "backend %d, index %d: %s (%s)", (int)cases[i].backend, cases[i].index,
              devrt_status_string(status), devrt_last_error());
    }
    devrt_device *device = NULL;
    int status = devrt_device_open(DEVRT_BACKEND_EMU, 0, NULL, &device);
    CHECK(status == DEVRT_SUCCESS && device, "the control: %s", devrt_last_error());
    devrt_device_close(device);
}

/* SIZE bytes refused with NULL and a message that names WORD. */
static void refused(devrt_device *device, size_t size, const char *word)
{
    void *block = devrt_mem_alloc(device, size);
    CHECK(block == NULL, "%zu bytes gave %p", size, block);
    CHECK(strstr(devrt_last_error(), word) != NULL, "%zu bytes: message \"%s\" lacks \"%s\"", size,
          devrt_last_error(), word);
    devrt_mem_free(device, block);
}

static void mem_alloc_limits(devrt_device *device)
{
    refused(NULL, 64, "no device");
    refused(device, 0, "0 bytes");
    refused(device, SIZE_MAX, "more than any block");
    refused(device, SIZE_MAX - 255, "more than any block");
    refused(device, (size_t)PTRDIFF_MAX + 1, "more than any block");
}

static void mem_alloc_control(devrt_device *device)
{
    size_t sizes[] = {1, 300, 1u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
        unsigned char *block = devrt_mem_alloc(device, sizes[i]);
        CHECK(block != NULL, "%zu bytes: %s", sizes[i], devrt_last_error());
        if (!block)
            continue;
        CHECK(block[0] == 0 && block[sizes[i] - 1] == 0, "%zu bytes are not zeroed", sizes[i]);
        memset(block, 0xa5, sizes[i]);
        devrt_mem_free(device, block);
    }
}

static devrt_module *switching; /* the module whose callback switches its output */
static FILE *switched_to;
static unsigned called_back;

static void switch_to_file(void *context, uint32_t stream, const char *data, size_t size)
{
    (void)context;
    (void)stream;
    (void)data;
    (void)size;
    if (++called_back == 1)
        devrt_module_set_output_file(switching, switched_to);
}

/* tagged (tests/kernels/launch.c): lane 0 prints "launch 0 line N" for N = 0, 1, 2. */
static void callback_switches(devrt_device *device, const char *image)
{
    CHECK(devrt_module_load(device, image, &switching) == DEVRT_SUCCESS, "%s", devrt_last_error());
    uint32_t *ran = devrt_mem_alloc(device, sizeof *ran);
    switched_to = tmpfile();
    if (!switching || !ran || !switched_to)
        return;
    devrt_module_set_output_callback(switching, switch_to_file, NULL);
    struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_UINT(0), DEVRT_ARG_UINT(0), DEVRT_ARG_PTR(ran)};
    int status = devrt_launch(switching, "tagged", &config, args, 3, NULL);
    CHECK(status == DEVRT_SUCCESS, "%s: %s", devrt_status_string(status), devrt_last_error());
    CHECK(called_back == 1, "the callback ran %u times", called_back);
    char written[256] = "";
    rewind(switched_to);
    size_t n = fread(written, 1, sizeof written - 1, switched_to);
    written[n] = '\0';
    CHECK(!strcmp(written, "launch 0 line 1\nlaunch 0 line 2\n"), "the file has \"%s\"", written);
    devrt_module_unload(switching);
    devrt_mem_free(device, ran);
    fclose(switched_to);
}

/* An image of another backend's kind, loaded on the emulation. */
static void wrong_backend(devrt_device *device, const char *image, const char *what)
{
    devrt_module *module = NULL;
    int status = devrt_module_load(device, image, &module);
    CHECK(status == DEVRT_ERROR_IMAGE && strstr(devrt_last_error(), what) &&
              strstr(devrt_last_error(), "; the emu backend runs emulation images (.so)"),
          "status %d: %s", status, devrt_last_error());
    devrt_module_unload(module);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: host_api_test null_handles|bad_open|mem_alloc_limits|mem_alloc_control|"
                "callback_switches IMAGE|wrong_backend IMAGE WHAT|trace FILE\n");
        return 2;
    }
    if (!strcmp(argv[1], "null_handles")) {
        null_handles();
        return failures ? 1 : 0;
    }
    if (!strcmp(argv[1], "bad_open")) {
        bad_open();
        return failures ? 1 : 0;
    }
    devrt_device *device;
    if (devrt_device_open(DEVRT_BACKEND_EMU, 0, NULL, &device) != DEVRT_SUCCESS) {
        fprintf(stderr, "cannot open the emulation: %s\n", devrt_last_error());
        return 1;
    }
    if (!strcmp(argv[1], "mem_alloc_limits"))
        mem_alloc_limits(device);
    else if (!strcmp(argv[1], "mem_alloc_control"))
        mem_alloc_control(device);
    else if (!strcmp(argv[1], "callback_switches") && argc == 3)
        callback_switches(device, argv[2]);
    else if (!strcmp(argv[1], "wrong_backend") && argc == 4)
        wrong_backend(device, argv[2], argv[3]);
    else if (!strcmp(argv[1], "trace") && argc == 3) {
        trace(device, argv[2]);
        return failures ? 1 : 0; /* closed */
    } else {
        fprintf(stderr, "unknown case %s\n", argv[1]);
        failures++;
    }
    devrt_device_close(device);
    return failures ? 1 : 0;
}
