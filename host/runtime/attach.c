/*
 * Attaching to a module the program loaded itself (<devrt/attach.h>). The attachment is a
 * device of its own whose backend is the program's API: its handful of calls allocate,
 * copy and find __devrt_state, and everything else is the runtime's usual path. The module
 * is set up as devrt_module_load sets one up (module.c), served by the device's server
 * thread, and checked as a launch is (launch.c). Only launching is the program's.
 *
 * The doorbell is polled (devrt_polled_wait_doorbell), as on CUDA: no API offers a way for the
 * device to wake a host thread that every API shares.
 */
#include <stdlib.h>
#include <string.h>

#include <devrt/attach.h>

#include "runtime.h"

struct attachment {
    struct devrt_attach_api api;
    void *context;
    struct devrt_state *initial_state; /* what __devrt_state held before: the library id */
};

static struct attachment *attachment_of(const devrt_device *device)
{
    return device->backend;
}

static void *attach_alloc(devrt_device *device, size_t size, enum devrt_memory memory)
{
    struct attachment *a = attachment_of(device);
    if (memory == DEVRT_MEMORY_HOST || memory == DEVRT_MEMORY_HOST_RAW) {
        void *ptr = a->api.alloc_host(a->context, size);
        if (ptr && memory == DEVRT_MEMORY_HOST)
            memset(ptr, 0, size);
        return ptr;
    }
    void *ptr = a->api.alloc_device(a->context, size);
    if (!ptr || memory == DEVRT_MEMORY_DEVICE_RAW)
        return ptr;
    void *zeros = calloc(1, size);
    if (!zeros || a->api.copy(a->context, ptr, zeros, size) != 0) {
        free(zeros);
        a->api.free_device(a->context, ptr);
        return NULL;
    }
    free(zeros);
    return ptr;
}

static void attach_free(devrt_device *device, void *ptr, enum devrt_memory memory)
{
    struct attachment *a = attachment_of(device);
    if (!ptr)
        return;
    if (memory == DEVRT_MEMORY_HOST || memory == DEVRT_MEMORY_HOST_RAW)
        a->api.free_host(a->context, ptr);
    else
        a->api.free_device(a->context, ptr);
}

static int attach_copy(devrt_device *device, void *dst, const void *src, size_t size)
{
    struct attachment *a = attachment_of(device);
    return size ? a->api.copy(a->context, dst, src, size) : 0;
}

static int attach_open(devrt_device *device, int index)
{
    (void)index;
    device->wave_size = attachment_of(device)->api.wave_size;
    device->doorbell = attach_alloc(device, sizeof *device->doorbell, DEVRT_MEMORY_HOST);
    if (!device->doorbell)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no mapped host memory for the doorbell");
    return DEVRT_SUCCESS;
}

static void attach_close(devrt_device *device)
{
    struct attachment *a = attachment_of(device);
    attach_free(device, device->doorbell, DEVRT_MEMORY_HOST);
    if (a->api.release)
        a->api.release(a->context);
    free(a);
}

/* The module is loaded already: find __devrt_state, and keep what it holds to restore it. */
static int attach_load(devrt_module *module, struct devrt_state ***state_variable)
{
    const char *path = module->path;
    struct attachment *a = attachment_of(module->device);
    void *address = NULL;
    size_t size = 0;
    if (a->api.find_global(a->context, DEVRT_STATE_SYMBOL, &address, &size) != 0 || !address ||
        size != sizeof(struct devrt_state *))
        return devrt_fail(DEVRT_ERROR_IMAGE,
                          "%s: no %s in it: the module does not link devrt's device library "
                          "(devrt-amdgcn.bc or devrt-nvptx.bc)",
                          path, DEVRT_STATE_SYMBOL);
    if (a->api.copy(a->context, &a->initial_state, address, sizeof a->initial_state) != 0)
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s: cannot read its %s", path, DEVRT_STATE_SYMBOL);
    *state_variable = address;
    return DEVRT_SUCCESS;
}

static void attach_unload(devrt_module *module)
{
    (void)module; /* the program's, which unloads it */
}

static void attach_describe(const devrt_device *device, struct devrt_device_info *info)
{
    snprintf(info->name, sizeof info->name, "attached through %s",
             devrt_backend_name(attachment_of(device)->api.backend));
}

/* No launch, check or queue: the program launches. */
static const struct devrt_backend_ops attach_ops = {
    .open = attach_open,
    .close = attach_close,
    .alloc = attach_alloc,
    .free = attach_free,
    .read = attach_copy,
    .write = attach_copy,
    .load = attach_load,
    .loaded_by_program = true,
    .unload = attach_unload,
    .arm_doorbell = devrt_polled_arm_doorbell,
    .wait_doorbell = devrt_polled_wait_doorbell,
    .ring_doorbell = devrt_polled_ring_doorbell,
    .describe = attach_describe,
};

int devrt_attach(const struct devrt_attach_api *api, void *context, const char *name,
                 const struct devrt_device_options *options, devrt_module **out)
{
    if (out)
        *out = NULL;
    if (!api || !out || !api->find_global || !api->alloc_device || !api->free_device ||
        !api->alloc_host || !api->free_host || !api->copy || !api->synchronize || !api->wave_size ||
        api->wave_size > DEVRT_RPC_MAX_LANES) {
        if (api && api->release)
            api->release(context);
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "devrt_attach: missing argument, call, or a wave size of 1 to %u",
                          DEVRT_RPC_MAX_LANES);
    }
    struct attachment *a = calloc(1, sizeof *a);
    if (!a) {
        if (api->release)
            api->release(context);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for an attachment");
    }
    a->api = *api;
    a->context = context;
    devrt_device *device = NULL;
    int status = devrt_device_create(DEVRT_BACKEND_AUTO, &attach_ops, a, 0, options, &device);
    if (status != DEVRT_SUCCESS) {
        if (api->release)
            api->release(context);
        free(a);
        return status;
    }
    devrt_module *module = NULL;
    status = devrt_module_load(device, name ? name : "(attached module)", &module);
    if (status != DEVRT_SUCCESS) {
        char why[512];
        snprintf(why, sizeof why, "%s", devrt_last_error());
        devrt_device_close(device);
        return devrt_fail(status, "%s", why);
    }
    module->attached = true;
    /* The program launches its kernels unseen: the server serves whenever they may call. */
    devrt_server_expect(device, 1);
    *out = module;
    return DEVRT_SUCCESS;
}

int devrt_attached_check(devrt_module *module, const char *kernel,
                         const struct devrt_launch_config *config,
                         struct devrt_launch_report *report)
{
    if (!module || !module->attached)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "devrt_attached_check: not an attached module");
    /* Without the geometry the ids stay flat: every workgroup and workitem in x. */
    static const struct devrt_launch_config flat = {.grid = {UINT32_MAX, 1, 1},
                                                    .block = {UINT32_MAX, 1, 1}};
    return devrt_launches_check(module, kernel ? kernel : "(attached)", config ? config : &flat,
                                report);
}

int devrt_detach(devrt_module *module)
{
    if (!module || !module->attached)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_detach: not an attached module");
    devrt_device *device = module->device;
    struct attachment *a = attachment_of(device);
    /* The server keeps serving meanwhile: a kernel waiting for it ends. */
    if (a->api.synchronize(a->context) != 0)
        return devrt_fail(DEVRT_ERROR_BACKEND,
                          "%s: cannot wait for the program's kernels (%s); still attached, "
                          "nothing freed",
                          module->path, devrt_last_error());
    /* What no check took is written now, after the output; a detach loses no report. */
    devrt_attached_check(module, NULL, NULL, NULL);
    int status = DEVRT_SUCCESS;
    if (device->ops->write(device, module->state_variable, &a->initial_state,
                           sizeof a->initial_state) != 0)
        status = devrt_fail(DEVRT_ERROR_BACKEND, "%s: cannot restore %s", module->path,
                            DEVRT_STATE_SYMBOL);
    module->detaching = true;
    devrt_device_close(device);
    return status;
}

#ifndef DEVRT_HAVE_CUDA
#include <devrt/cuda.h>

int devrt_cuda_attach(CUmodule module, const struct devrt_device_options *options,
                      devrt_module **attached)
{
    (void)module;
    (void)options;
    if (attached)
        *attached = NULL;
    return devrt_fail(DEVRT_ERROR_NO_DEVICE, "the cuda backend is not built into this runtime");
}
#endif

#ifndef DEVRT_HAVE_HIP
#include <devrt/hip.h>

int devrt_hip_attach(hipModule_t module, const struct devrt_device_options *options,
                     devrt_module **attached)
{
    (void)module;
    (void)options;
    if (attached)
        *attached = NULL;
    return devrt_fail(DEVRT_ERROR_NO_DEVICE,
                      "devrt_hip_attach: this runtime was built without HIP's headers");
}
#endif
