/*
 * A CUDA driver-API program that uses devrt's device runtime in its own kernels: it loads
 * the PTX itself, attaches devrt to the module, launches the kernel twice on its own
 * stream, and after its own synchronization asks devrt what the kernels raised.
 *
 *   attach_cuda KERNEL.ptx     exit 0: the second launch's exception was reported;
 *                              77: no NVIDIA GPU; 1: anything else
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#include <devrt/cuda.h>

static char *read_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    rewind(file);
    char *text = calloc(1, (size_t)size + 1);
    if (text && fread(text, 1, (size_t)size, file) != (size_t)size) {
        free(text);
        text = NULL;
    }
    fclose(file);
    return text;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: attach_cuda KERNEL.ptx\n");
        return 1;
    }
    CUdevice device;
    CUcontext context;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&device, 0) != CUDA_SUCCESS) {
        printf("attach_cuda: no NVIDIA GPU\n");
        return 77;
    }
    char *ptx = read_file(argv[1]);
    CUmodule module;
    CUfunction greet;
    CUstream stream;
    if (!ptx || cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS ||
        cuCtxSetCurrent(context) != CUDA_SUCCESS ||
        cuModuleLoadData(&module, ptx) != CUDA_SUCCESS ||
        cuModuleGetFunction(&greet, module, "greet") != CUDA_SUCCESS ||
        cuStreamCreate(&stream, CU_STREAM_DEFAULT) != CUDA_SUCCESS) {
        fprintf(stderr, "attach_cuda: cannot load %s\n", argv[1]);
        return 1;
    }

    /* devrt serves the module's devrt_printf and devrt_malloc from here on. */
    devrt_module *attached;
    if (devrt_cuda_attach(module, NULL, &attached) != DEVRT_SUCCESS) {
        fprintf(stderr, "attach_cuda: %s\n", devrt_last_error());
        return 1;
    }

    /* Two launches of the program's own, on its own stream: the second one raises. */
    for (unsigned round = 0; round < 2; ++round) {
        unsigned raise_at = round == 1 ? 5 : 1000;
        void *params[] = {&round, &raise_at};
        cuLaunchKernel(greet, 2, 1, 1, 4, 1, 1, 0, stream, params, NULL);
        cuStreamSynchronize(stream);
        struct devrt_launch_config config = {.grid = {2, 1, 1}, .block = {4, 1, 1}};
        struct devrt_launch_report report;
        int status = devrt_attached_check(attached, "greet", &config, &report);
        printf("attach_cuda: round %u: %s\n", round,
               status == DEVRT_SUCCESS ? "no exception" : report.text);
        if ((round == 1) != (status == DEVRT_ERROR_EXCEPTION))
            return 1;
    }

    devrt_detach(attached); /* waits for the kernels, flushes their output, frees devrt's memory */
    cuModuleUnload(module);
    free(ptx);
    return 0;
}
