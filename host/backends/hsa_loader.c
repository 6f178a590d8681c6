/*
 * Code objects on the HSA backend: each module an executable of the runtime's, frozen for
 * the GPU, with the code object's metadata read once for every launch's checks and
 * packing (amdgpu_metadata.c, amdgpu_dispatch.c).
 */
#include <stdlib.h>

#include "amdgpu_dispatch.h"
#include "hsa_backend.h"

/* Everything of M, as far as devrt_hsa_load made it. */
static void hsa_unload_backend(struct hsa_module *m)
{
    if (m->executable.handle)
        devrt_hsa.hsa_executable_destroy(m->executable);
    if (m->reader.handle)
        devrt_hsa.hsa_code_object_reader_destroy(m->reader);
    devrt_amdgpu_metadata_free(m->metadata);
    free(m);
}

int devrt_hsa_load(devrt_module *module, struct devrt_state ***state_variable)
{
    struct hsa_backend *b = devrt_hsa_backend_of(module);
    const char *path = devrt_module_path(module);
    const void *image = devrt_module_image(module);
    size_t image_size = devrt_module_image_size(module);
    struct hsa_module *m = calloc(1, sizeof *m);
    if (!m)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a module");
    /* What each kernel takes is then checked at every launch, and a file that is no code
       object is refused here with the reason, whatever the loader would make of it. */
    int checked = devrt_amdgpu_metadata_read(image, image_size, path, &m->metadata);
    /* Refused here with both names, not by the loader with a bare error code. */
    if (checked == DEVRT_SUCCESS && b->isa[0])
        checked = devrt_amdgpu_check_target(m->metadata, path, b->isa);
    if (checked != DEVRT_SUCCESS) {
        hsa_unload_backend(m);
        return checked;
    }
    const char *step = "reading the code object";
    hsa_status_t status =
        devrt_hsa.hsa_code_object_reader_create_from_memory(image, image_size, &m->reader);
    if (status == HSA_STATUS_SUCCESS) {
        step = "creating the executable";
        status = devrt_hsa.hsa_executable_create_alt(
            HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &m->executable);
    }
    if (status == HSA_STATUS_SUCCESS) {
        step = "loading the code object for the GPU";
        status = devrt_hsa.hsa_executable_load_agent_code_object(m->executable, b->gpu, m->reader,
                                                                 NULL, NULL);
    }
    if (status == HSA_STATUS_SUCCESS) {
        step = "freezing the executable";
        status = devrt_hsa.hsa_executable_freeze(m->executable, NULL);
    }
    hsa_executable_symbol_t symbol;
    uint64_t address = 0;
    if (status == HSA_STATUS_SUCCESS) {
        step = "finding " DEVRT_STATE_SYMBOL " (does it link devrt-amdgcn.bc?)";
        status = devrt_hsa.hsa_executable_get_symbol_by_name(m->executable, DEVRT_STATE_SYMBOL,
                                                             &b->gpu, &symbol);
    }
    if (status == HSA_STATUS_SUCCESS)
        status = devrt_hsa.hsa_executable_symbol_get_info(
            symbol, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &address);
    if (status != HSA_STATUS_SUCCESS) {
        const char *text = NULL;
        devrt_hsa.hsa_status_string(status, &text);
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: the HSA runtime refused it, %s: %s", path, step,
                   text ? text : "unknown status");
        hsa_unload_backend(m);
        return DEVRT_ERROR_IMAGE;
    }
    /* The loaded code object's memory (its code, data and __devrt_state) is devrt's: a
       fault there is claimed (hsa_faults.c). */
    hsa_amd_pointer_info_t info = {.size = sizeof info};
    if (devrt_hsa.hsa_amd_pointer_info((void *)(uintptr_t)address, &info, NULL, NULL, NULL) ==
            HSA_STATUS_SUCCESS &&
        info.type != HSA_EXT_POINTER_TYPE_UNKNOWN &&
        devrt_hsa_own(b, info.agentBaseAddress, info.sizeInBytes))
        m->code_base = info.agentBaseAddress;
    *state_variable = (struct devrt_state **)(uintptr_t)address;
    devrt_module_set_backend_state(module, m);
    return DEVRT_SUCCESS;
}

void devrt_hsa_unload(devrt_module *module)
{
    struct hsa_module *m = devrt_module_backend_state(module);
    if (m->code_base)
        devrt_hsa_disown(devrt_hsa_backend_of(module), m->code_base);
    hsa_unload_backend(m);
}

uint32_t devrt_hsa_rpc_lanes(devrt_module *module)
{
    const struct hsa_module *m = devrt_module_backend_state(module);
    return devrt_amdgpu_rpc_lanes(m->metadata, devrt_device_wave_size(devrt_module_device(module)));
}

/* The GPU as the code object's checks see it; the queue's address is submit's. */
struct devrt_amdgpu_agent devrt_hsa_agent_of(const struct hsa_backend *b)
{
    return (struct devrt_amdgpu_agent){
        .isa = b->isa[0] ? b->isa : NULL,
        .group_segment_limit = b->group_segment_limit,
    };
}

/* Every refusal of devrt_amdgpu_launch_check, before anything is queued. */
int devrt_hsa_check_launch(devrt_module *module, const char *kernel,
                           const struct devrt_launch_config *config, const struct devrt_arg *args,
                           size_t arg_count)
{
    const struct hsa_module *m = devrt_module_backend_state(module);
    struct devrt_amdgpu_agent agent = devrt_hsa_agent_of(devrt_hsa_backend_of(module));
    struct devrt_amdgpu_launch checked;
    return devrt_amdgpu_launch_check(m->metadata, devrt_module_path(module), &agent, kernel, config,
                                     args, arg_count, &checked);
}
