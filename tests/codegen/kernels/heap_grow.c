/* The heap's host-visible accesses: an allocation that may ask the host for a slab. */
#include <devrt/devrt.h>

DEVRT_KERNEL2(heap_grow, uint64_t *, out, uint32_t, size)
{
    void *p = devrt_malloc(size);
    out[devrt_global_id(DEVRT_X)] = (uint64_t)(uintptr_t)p;
    devrt_free(p);
}
