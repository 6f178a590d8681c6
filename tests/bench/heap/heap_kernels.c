/* Kernels of the heap benchmark. */
#include <devrt/devrt.h>

/* Each lane allocates and frees `rounds` blocks of mixed small sizes (16 to 256 bytes). */
DEVRT_KERNEL2(churn, uint32_t, rounds, uint32_t *, failures)
{
    uint64_t lane = devrt_global_id(DEVRT_X);
    for (uint32_t i = 0; i < rounds; ++i) {
        uint32_t size = 16 + (uint32_t)((lane * 7 + i * 13) % 16) * 16;
        uint64_t *p = devrt_malloc(size);
        if (!p) {
            __atomic_fetch_add(failures, 1u, __ATOMIC_RELAXED);
            continue;
        }
        *p = lane;
        devrt_free(p);
    }
}
