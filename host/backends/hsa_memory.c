/* The HSA backend's decisions about memory (hsa_memory.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "hsa_memory.h"

enum devrt_hsa_access devrt_hsa_access(const hsa_amd_pointer_info_t *info, uintptr_t address,
                                       size_t size, void **host)
{
    /*
     * Outside every allocation of the runtime, hsa_memory_copy would be a plain memcpy of
     * the address (a device string on the wave's stack, a pointer made up): refused.
     */
    if (info->type == HSA_EXT_POINTER_TYPE_UNKNOWN || !info->agentBaseAddress)
        return DEVRT_HSA_ACCESS_NONE;
    uintptr_t base = (uintptr_t)info->agentBaseAddress;
    if (address < base || size > info->sizeInBytes || address - base > info->sizeInBytes - size)
        return DEVRT_HSA_ACCESS_NONE;
    /* An older runtime's record may end before global_flags: the grain is then unknown. */
    size_t known = info->size;
    uint32_t flags = known >= offsetof(hsa_amd_pointer_info_t, global_flags) + sizeof(uint32_t)
                         ? info->global_flags
                         : 0;
    /* Host memory the GPU was given (locked), or fine-grained memory: uncached for the GPU. */
    bool host_memory = info->type == HSA_EXT_POINTER_TYPE_LOCKED ||
                       (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
    if (host_memory && info->hostBaseAddress) {
        *host = (char *)info->hostBaseAddress + (address - base);
        return DEVRT_HSA_ACCESS_HOST;
    }
    return DEVRT_HSA_ACCESS_DEVICE;
}

int devrt_hsa_fault_owner(const hsa_amd_event_t *event, const uint64_t *gpus, size_t count)
{
    if (!event || event->event_type != HSA_AMD_GPU_MEMORY_FAULT_EVENT)
        return -1;
    for (size_t i = 0; i < count; ++i)
        if (gpus[i] && gpus[i] == event->memory_fault.agent.handle)
            return (int)i;
    return -1;
}

void devrt_hsa_fault_reasons(uint32_t mask, char *out, size_t size)
{
    static const struct {
        uint32_t bit;
        const char *text;
    } reasons[] = {
        {HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT, "page not present"},
        {HSA_AMD_MEMORY_FAULT_READ_ONLY, "write to a read-only page"},
        {HSA_AMD_MEMORY_FAULT_NX, "execution of a no-execute page"},
        {HSA_AMD_MEMORY_FAULT_HOST_ONLY, "host-only memory"},
        {HSA_AMD_MEMORY_FAULT_DRAMECC, "DRAM ECC error"},
        {HSA_AMD_MEMORY_FAULT_IMPRECISE, "address may be inexact"},
        {HSA_AMD_MEMORY_FAULT_SRAMECC, "SRAM ECC error"},
        {HSA_AMD_MEMORY_FAULT_HANG, "hang recovery"},
    };
    if (!size)
        return;
    out[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < sizeof reasons / sizeof *reasons; ++i) {
        if (!(mask & reasons[i].bit))
            continue;
        mask &= ~reasons[i].bit;
        int n = snprintf(out + used, size - used, "%s%s", used ? ", " : "", reasons[i].text);
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
    if (mask || !used)
        snprintf(out + used, size - used, "%sreason 0x%x", used ? ", " : "", mask);
}

static bool global(const struct devrt_hsa_pool *pool, uint32_t with, uint32_t without)
{
    return pool->segment == HSA_AMD_SEGMENT_GLOBAL && pool->alloc_allowed &&
           (pool->flags & with) == with && !(pool->flags & without);
}

/* The first pool of LIST with all of WITH and none of WITHOUT, or NULL. */
static const struct devrt_hsa_pool *first(const struct devrt_hsa_pool *list, size_t count,
                                          uint32_t with, uint32_t without)
{
    for (size_t i = 0; i < count; ++i)
        if (global(&list[i], with, without))
            return &list[i];
    return NULL;
}

int devrt_hsa_choose_pools(const struct devrt_hsa_pool *gpu, size_t gpu_count,
                           const struct devrt_hsa_pool *cpu, size_t cpu_count,
                           struct devrt_hsa_pools *out, char *why, size_t why_size)
{
    const uint32_t fine = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED;
    const uint32_t coarse = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
    const uint32_t kernarg = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT;
    *out = (struct devrt_hsa_pools){0};
    for (size_t i = 0; i < gpu_count; ++i)
        if (gpu[i].segment == HSA_AMD_SEGMENT_GROUP)
            out->group_segment_limit =
                gpu[i].size > UINT32_MAX ? UINT32_MAX : (uint32_t)gpu[i].size;
    const struct devrt_hsa_pool *vram = first(gpu, gpu_count, coarse, 0);
    /* The kernel argument pool is fine-grained too; another one keeps it for arguments. */
    const struct devrt_hsa_pool *system = first(cpu, cpu_count, fine, kernarg);
    if (!system)
        system = first(cpu, cpu_count, fine, 0);
    const struct devrt_hsa_pool *arguments = first(cpu, cpu_count, kernarg, 0);
    if (!arguments)
        arguments = first(gpu, gpu_count, kernarg, 0);
    if (!vram)
        snprintf(why, why_size, "the GPU has no coarse-grained memory pool");
    else if (!system)
        snprintf(why, why_size,
                 "the CPU agent has no fine-grained memory pool; devrt's mailboxes must be in "
                 "fine-grained system memory, not in the GPU's");
    else if (!arguments)
        snprintf(why, why_size, "no kernel argument memory pool");
    if (!vram || !system || !arguments)
        return -1;
    out->coarse = vram->handle;
    out->memory_bytes = vram->size;
    out->fine = system->handle;
    out->kernarg = arguments->handle;
    return 0;
}
