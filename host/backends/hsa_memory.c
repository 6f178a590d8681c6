/* The HSA backend's decisions about memory (hsa_memory.h). */
#include <stdbool.h>
#include <stddef.h>

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
