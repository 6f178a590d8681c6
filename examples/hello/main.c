/*
 * Runs the hello kernel twice on the backend the image is for: once cleanly, once with a
 * workitem that raises. Exits 0 when both launches did what they should.
 *
 *   hello IMAGE     (an emulation .so, an amdgcn .hsaco, or .ptx)
 */
#include <stdio.h>

#include <devrt/host.h>

static int launch(devrt_module *module, uint32_t raise_at, struct devrt_launch_report *report)
{
    struct devrt_launch_config config = {.grid = {2, 1, 1}, .block = {4, 1, 1}};
    struct devrt_arg args[] = {DEVRT_ARG_U32(raise_at)};
    return devrt_launch(module, "hello", &config, args, 1, report);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hello IMAGE\n");
        return 2;
    }
    enum devrt_backend backend = devrt_image_backend(argv[1]);
    if (backend == DEVRT_BACKEND_AUTO) {
        fprintf(stderr, "hello: %s: not an amdgcn code object, emulation image or PTX\n", argv[1]);
        return 2;
    }
    devrt_device *device;
    int status = devrt_device_open(backend, 0, NULL, &device);
    if (status != DEVRT_SUCCESS) {
        fprintf(stderr, "hello: %s\n", devrt_last_error());
        return 2;
    }
    devrt_module *module;
    if (devrt_module_load(device, argv[1], &module) != DEVRT_SUCCESS) {
        fprintf(stderr, "hello: %s\n", devrt_last_error());
        devrt_device_close(device);
        return 2;
    }

    struct devrt_launch_report report;
    int failures = 0;
    /* No workitem has index 1000: every workitem prints and none raises. */
    status = launch(module, 1000, &report);
    if (status != DEVRT_SUCCESS) {
        fprintf(stderr, "hello: the clean launch failed: %s\n", devrt_status_string(status));
        ++failures;
    }
    /* Workitem 5 raises; devrt has printed the report after the kernel's output. */
    status = launch(module, 5, &report);
    if (status == DEVRT_ERROR_EXCEPTION)
        printf("hello: the host saw the exception of workitem (%u,%u,%u)\n", report.workitem[0],
               report.workitem[1], report.workitem[2]);
    else {
        fprintf(stderr, "hello: expected an exception, got %s\n", devrt_status_string(status));
        ++failures;
    }

    devrt_module_unload(module);
    devrt_device_close(device);
    return failures ? 1 : 0;
}
