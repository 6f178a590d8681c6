/*
 * A fake libamdhip64 for the unit tests of devrt_hip_attach: the HIP calls the shim and
 * attach_test make, over fake_gpu.c, compiled against HIP's own declarations so that a
 * call of the wrong shape does not build. It holds devrt to what a real HIP needs:
 * host memory the device is to see must be allocated mapped, and a copy on a stream that
 * synchronizes with the others (the null stream, or one created without
 * hipStreamNonBlocking) fails, since there it could wait for a kernel that waits for the
 * copy. Like HIP, it knows its allocations, not the rest of a code object's memory; the
 * HSA runtime beneath it (hsa_amd_pointer_info, hsa_memory_copy, reached through HIP's
 * handle) knows both. fake_hip_calls(NAME) says how often NAME was called.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hip_runtime_api.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <devrt/emu.h>

#include "fake_gpu.h"
#include "harness.h"

struct ihipModule_t {
    struct fake_gpu_module *module;
};

struct ihipModuleSymbol_t {
    struct ihipModule_t *module;
    char name[256];
};

struct ihipStream_t {
    unsigned flags;
};

static struct {
    const char *name;
    unsigned count;
} calls[64];

static void record(const char *name)
{
    for (size_t i = 0; i < sizeof calls / sizeof *calls; ++i) {
        if (!calls[i].name)
            calls[i].name = name;
        if (!strcmp(calls[i].name, name)) {
            __atomic_fetch_add(&calls[i].count, 1u, __ATOMIC_RELAXED);
            return;
        }
    }
}

unsigned fake_hip_calls(const char *name);
unsigned fake_hip_calls(const char *name)
{
    for (size_t i = 0; i < sizeof calls / sizeof *calls && calls[i].name; ++i)
        if (!strcmp(calls[i].name, name))
            return calls[i].count;
    return 0;
}

size_t fake_hip_live_allocations(void);
size_t fake_hip_live_allocations(void)
{
    return fake_gpu_live_allocations();
}

const char *hipGetErrorString(hipError_t error)
{
    return error == hipSuccess ? "no error" : "fake HIP error";
}

hipError_t hipGetDeviceCount(int *count)
{
    record(__func__);
    *count = 1;
    return hipSuccess;
}

hipError_t hipGetDevice(int *device)
{
    record(__func__);
    *device = 0;
    return hipSuccess;
}

hipError_t hipSetDevice(int device)
{
    record(__func__);
    return device == 0 ? hipSuccess : hipErrorInvalidDevice;
}

hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attribute, int device)
{
    record(__func__);
    if (device != 0 || attribute != hipDeviceAttributeWarpSize)
        return hipErrorInvalidValue;
    *value = 1; /* fake_gpu's waves */
    return hipSuccess;
}

hipError_t hipDeviceSynchronize(void)
{
    record(__func__);
    fake_gpu_synchronize();
    return hipSuccess;
}

hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
    record(__func__);
    *stream = calloc(1, sizeof **stream);
    (*stream)->flags = flags;
    return hipSuccess;
}

hipError_t hipStreamCreate(hipStream_t *stream)
{
    return hipStreamCreateWithFlags(stream, 0);
}

hipError_t hipStreamDestroy(hipStream_t stream)
{
    record(__func__);
    free(stream);
    return hipSuccess;
}

/* fake_gpu has one queue: every launch is on it. */
hipError_t hipStreamSynchronize(hipStream_t stream)
{
    record(__func__);
    if (!stream || !(stream->flags & hipStreamNonBlocking))
        fake_gpu_synchronize();
    return hipSuccess;
}

hipError_t hipModuleLoad(hipModule_t *module, const char *path)
{
    record(__func__);
    const char *error;
    struct fake_gpu_module *m;
    if (fake_gpu_load(path, &m, &error) != 0)
        return hipErrorFileNotFound;
    *module = calloc(1, sizeof **module);
    (*module)->module = m;
    return hipSuccess;
}

hipError_t hipModuleUnload(hipModule_t module)
{
    record(__func__);
    fake_gpu_unload(module->module);
    free(module);
    return hipSuccess;
}

hipError_t hipModuleGetGlobal(hipDeviceptr_t *address, size_t *size, hipModule_t module,
                              const char *name)
{
    record(__func__);
    return fake_gpu_global(module->module, name, address, size) == 0 ? hipSuccess
                                                                     : hipErrorNotFound;
}

hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *name)
{
    record(__func__);
    *function = calloc(1, sizeof **function);
    (*function)->module = module;
    snprintf((*function)->name, sizeof(*function)->name, "%s", name);
    return hipSuccess;
}

/* The kernel's parameters' sizes come from the signature its emulation image records. */
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz,
                                 unsigned int shared, hipStream_t stream, void **params,
                                 void **extra)
{
    record(__func__);
    (void)shared;
    (void)stream;
    char symbol[300];
    snprintf(symbol, sizeof symbol, "%s%s", DEVRT_EMU_SIGNATURE_PREFIX, f->name);
    void *address;
    size_t size;
    if (extra || fake_gpu_global(f->module->module, symbol, &address, &size) != 0)
        return hipErrorInvalidValue;
    const struct devrt_emu_signature *signature = address;
    if (signature->count > DEVRT_EMU_MAX_PARAMETERS)
        return hipErrorInvalidValue;
    struct devrt_arg args[DEVRT_EMU_MAX_PARAMETERS] = {{0}};
    for (uint32_t i = 0; i < signature->count; ++i) {
        /* Scalars and pointers only: the fake GPU calls kernels through libffi. */
        args[i].type = harness_sized_arg_type(signature->size[i]);
        if (args[i].type == DEVRT_ARG_BYTES)
            return hipErrorInvalidValue;
        memcpy(&args[i].value, params[i], signature->size[i]);
    }
    const uint32_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    int launched = fake_gpu_launch(f->module->module, f->name, grid, block, args, signature->count);
    free(f); /* attach_test looks a function up for each launch */
    return launched == 0 ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipMalloc(void **ptr, size_t size)
{
    record(__func__);
    *ptr = fake_gpu_alloc(size);
    return *ptr ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipFree(void *ptr)
{
    record(__func__);
    fake_gpu_free(ptr);
    return hipSuccess;
}

hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
    record(__func__);
    if (!(flags & hipHostMallocMapped))
        return hipErrorInvalidValue; /* the fake device sees only mapped host memory */
    *ptr = fake_gpu_alloc(size);
    return *ptr ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipHostFree(void *ptr)
{
    record(__func__);
    fake_gpu_free(ptr);
    return hipSuccess;
}

hipError_t hipHostGetDevicePointer(void **device, void *host, unsigned int flags)
{
    record(__func__);
    void *start;
    size_t size;
    if (flags || fake_gpu_range(host, &start, &size) != 0)
        return hipErrorInvalidValue;
    *device = host;
    return hipSuccess;
}

hipError_t hipPointerGetAttribute(void *data, hipPointer_attribute attribute, hipDeviceptr_t ptr)
{
    record(__func__);
    void *start;
    size_t size;
    if (fake_gpu_range(ptr, &start, &size) != 0)
        return hipErrorInvalidValue;
    if (attribute == HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR)
        *(void **)data = start;
    else if (attribute == HIP_POINTER_ATTRIBUTE_RANGE_SIZE)
        *(size_t *)data = size;
    else
        return hipErrorInvalidValue;
    return hipSuccess;
}

hipError_t hipMemcpyWithStream(void *dst, const void *src, size_t size, hipMemcpyKind kind,
                               hipStream_t stream)
{
    record(__func__);
    if (kind != hipMemcpyDefault)
        return hipErrorInvalidValue;
    if (!stream || !(stream->flags & hipStreamNonBlocking)) {
        record("blocking copy");
        return hipErrorNotReady;
    }
    return fake_gpu_copy(dst, src, size) == 0 ? hipSuccess : hipErrorInvalidValue;
}

/* What ROCr knows: HIP's allocations, and the code object's segments it loaded. */
hsa_status_t hsa_amd_pointer_info(const void *ptr, hsa_amd_pointer_info_t *info,
                                  void *(*alloc)(size_t), uint32_t *num_agents,
                                  hsa_agent_t **accessible)
{
    record(__func__);
    (void)alloc;
    if (num_agents || accessible)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    void *start;
    size_t size;
    uint32_t known = info->size;
    memset(info, 0, known);
    info->size = known;
    if (fake_gpu_range(ptr, &start, &size) != 0 && fake_gpu_image_range(ptr, &start, &size) != 0) {
        info->type = HSA_EXT_POINTER_TYPE_UNKNOWN;
        return HSA_STATUS_SUCCESS;
    }
    info->type = HSA_EXT_POINTER_TYPE_HSA;
    info->agentBaseAddress = start;
    info->hostBaseAddress = start;
    info->sizeInBytes = size;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_copy(void *dst, const void *src, size_t size)
{
    record(__func__);
    void *start;
    size_t length;
    /* Both ends must be the runtime's: the staging buffer, and what pointer_info placed. */
    if (fake_gpu_range(dst, &start, &length) != 0 ||
        (fake_gpu_range(src, &start, &length) != 0 &&
         fake_gpu_image_range(src, &start, &length) != 0))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    /* As a copy engine copies: the bytes, whatever a sanitizer thinks of the host's globals. */
    return fake_gpu_copy(dst, src, size) == 0 ? HSA_STATUS_SUCCESS
                                              : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}
