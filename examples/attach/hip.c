/*
 * A HIP program that uses devrt's device runtime in its own kernels: it loads the code
 * object itself, attaches devrt to the module, launches the kernel twice on its own stream,
 * and after its own synchronization asks devrt what the kernels raised.
 *
 *   attach_hip KERNEL.hsaco    exit 0: the second launch's exception was reported;
 *                              77: no AMD GPU; 1: anything else
 */
#include <hip/hip_runtime_api.h>
#include <stdio.h>

#include <devrt/hip.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: attach_hip KERNEL.hsaco\n");
        return 1;
    }
    int count = 0;
    if (hipGetDeviceCount(&count) != hipSuccess || count == 0) {
        printf("attach_hip: no AMD GPU\n");
        return 77;
    }
    hipModule_t module;
    hipFunction_t greet;
    hipStream_t stream;
    if (hipModuleLoad(&module, argv[1]) != hipSuccess ||
        hipModuleGetFunction(&greet, module, "greet") != hipSuccess ||
        hipStreamCreate(&stream) != hipSuccess) {
        fprintf(stderr, "attach_hip: cannot load %s\n", argv[1]);
        return 1;
    }

    /* devrt serves the module's devrt_printf and devrt_malloc from here on. */
    devrt_module *attached;
    if (devrt_hip_attach(module, NULL, &attached) != DEVRT_SUCCESS) {
        fprintf(stderr, "attach_hip: %s\n", devrt_last_error());
        return 1;
    }

    /* Two launches of the program's own, on its own stream: the second one raises. */
    for (unsigned round = 0; round < 2; ++round) {
        unsigned raise_at = round == 1 ? 5 : 1000;
        void *params[] = {&round, &raise_at};
        hipModuleLaunchKernel(greet, 2, 1, 1, 4, 1, 1, 0, stream, params, NULL);
        hipStreamSynchronize(stream);
        struct devrt_launch_config config = {.grid = {2, 1, 1}, .block = {4, 1, 1}};
        struct devrt_launch_report report;
        int status = devrt_attached_check(attached, "greet", &config, &report);
        printf("attach_hip: round %u: %s\n", round,
               status == DEVRT_SUCCESS ? "no exception" : report.text);
        if ((round == 1) != (status == DEVRT_ERROR_EXCEPTION))
            return 1;
    }

    devrt_detach(attached); /* waits for the kernels, flushes their output, frees devrt's memory */
    hipModuleUnload(module);
    return 0;
}
