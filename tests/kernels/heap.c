/*
 * Heap kernels; built for every backend. The stress runs in two launches so the host can
 * look at every live block at once: `fill` allocates and writes a pattern into every
 * byte, the host checks that no two blocks overlap, `check_and_free` verifies the
 * patterns and frees.
 */
#include <devrt/devrt.h>

struct block {
    uint8_t *ptr;
    uint64_t size;
};

static uint64_t lane_id(void)
{
    return devrt_global_id(DEVRT_X);
}

/* Mostly small sizes, some up to the largest class, a few large blocks up to 1 MiB. */
static uint64_t size_for(uint64_t lane, uint32_t i, uint32_t seed)
{
    uint64_t h =
        (lane * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(i + 1) * 0xbf58476d1ce4e5b9ull) ^ seed;
    h ^= h >> 31;
    uint32_t kind = (uint32_t)(h % 100);
    if (kind < 85)
        return 1 + (h >> 8) % 256;
    if (kind < 99)
        return 257 + (h >> 8) % (16384 - 256);
    return 16385 + (h >> 8) % ((1u << 20) - 16384);
}

static uint8_t pattern(uint64_t lane, uint32_t i, uint64_t byte)
{
    return (uint8_t)(lane * 131 + i * 17 + byte * 7 + 1);
}

DEVRT_KERNEL4(fill, struct block *, blocks, uint32_t, per_lane, uint32_t, seed, uint32_t *,
              failures)
{
    uint64_t lane = lane_id();
    for (uint32_t i = 0; i < per_lane; ++i) {
        uint64_t size = size_for(lane, i, seed);
        uint8_t *p = devrt_malloc(size);
        blocks[lane * per_lane + i] = (struct block){p, size};
        if (!p || ((uintptr_t)p & 15)) {
            __atomic_fetch_add(failures, 1u, __ATOMIC_RELAXED);
            continue;
        }
        for (uint64_t b = 0; b < size; ++b)
            p[b] = pattern(lane, i, b);
    }
}

DEVRT_KERNEL3(check_and_free, struct block *, blocks, uint32_t, per_lane, uint32_t *, failures)
{
    uint64_t lane = lane_id();
    for (uint32_t i = 0; i < per_lane; ++i) {
        struct block block = blocks[lane * per_lane + i];
        if (!block.ptr)
            continue;
        for (uint64_t b = 0; b < block.size; ++b)
            if (block.ptr[b] != pattern(lane, i, b)) {
                __atomic_fetch_add(failures, 1u, __ATOMIC_RELAXED);
                break;
            }
        devrt_free(block.ptr);
    }
}

/* Only some lanes allocate, in a pattern that splits every wave. */
DEVRT_KERNEL2(divergent, uint32_t *, failures, uint32_t *, served)
{
    uint64_t lane = lane_id();
    if (lane % 3 == 1) {
        uint64_t *p = devrt_malloc(48 + lane % 5 * 16);
        if (!p) {
            __atomic_fetch_add(failures, 1u, __ATOMIC_RELAXED);
            return;
        }
        *p = lane;
        if (*(volatile uint64_t *)p != lane)
            __atomic_fetch_add(failures, 1u, __ATOMIC_RELAXED);
        devrt_free(p);
        __atomic_fetch_add(served, 1u, __ATOMIC_RELAXED);
    }
}

/* Allocate `size` blocks until the heap says no; keep them in `blocks` (up to `max`). */
DEVRT_KERNEL4(exhaust, void **, blocks, uint32_t, max, uint64_t, size, uint32_t *, count)
{
    uint32_t n = 0;
    while (n < max && (blocks[n] = devrt_malloc(size)))
        ++n;
    *count = n;
}

DEVRT_KERNEL2(free_all, void **, blocks, uint32_t, count)
{
    for (uint32_t i = 0; i < count; ++i)
        devrt_free(blocks[i]);
}

/* Misuse, selected by `how`: 1 double free, 2 foreign pointer, 3 middle of a block. */
DEVRT_KERNEL2(misuse, uint32_t, how, uint64_t *, pointer)
{
    uint64_t local = 0;
    uint8_t *p = devrt_malloc(64);
    *pointer = (uint64_t)(uintptr_t)p;
    if (how == 1) {
        devrt_free(p);
        devrt_free(p);
    } else if (how == 2) {
        *pointer = (uint64_t)(uintptr_t)&local;
        devrt_free(&local);
    } else if (how == 3) {
        *pointer = (uint64_t)(uintptr_t)(p + 16);
        devrt_free(p + 16);
    }
    devrt_free(p);
}

/* malloc(0), a size past the maximum, free(NULL), calloc, realloc and aligned_alloc. */
DEVRT_KERNEL2(edges, uint64_t, too_big, uint32_t *, failures)
{
    uint32_t bad = 0;
    bad += devrt_malloc(0) != NULL;
    bad += devrt_malloc(too_big) != NULL;
    devrt_free(NULL);
    uint8_t *z = devrt_calloc(100, 3);
    for (uint32_t i = 0; z && i < 300; ++i)
        bad += z[i] != 0;
    bad += z == NULL;
    for (uint32_t i = 0; z && i < 300; ++i)
        z[i] = (uint8_t)i;
    uint8_t *r = devrt_realloc(z, 5000);
    for (uint32_t i = 0; r && i < 300; ++i)
        bad += r[i] != (uint8_t)i;
    bad += r == NULL;
    devrt_free(r);
    for (uint32_t shift = 5; shift <= 12; ++shift) {
        void *a = devrt_aligned_alloc(1u << shift, 100 + shift * 1000);
        bad += a == NULL || ((uintptr_t)a & ((1u << shift) - 1)) != 0;
        devrt_free(a);
    }
    bad += devrt_aligned_alloc(3, 64) != NULL;
    *failures = bad;
}

/*
 * Every lane holds `count` blocks of `size` bytes until its workgroup has all of theirs,
 * then frees them. Launched on a full GPU (every slot of every compute unit taken), the
 * heap grows while all the waves there are wait for it: the server must answer without
 * work on the GPU.
 */
DEVRT_KERNEL4(hold_all, uint32_t, count, uint32_t, size, uint32_t *, failures, uint32_t *, done)
{
    uint8_t *held[8];
    count = count < 8 ? count : 8;
    for (uint32_t i = 0; i < count; ++i) {
        held[i] = devrt_malloc(size);
        if (held[i])
            held[i][size - 1] = (uint8_t)i;
        else
            __atomic_fetch_add(failures, 1u, __ATOMIC_RELAXED);
    }
    /* The whole workgroup holds its blocks at once, however its lanes are scheduled. */
    devrt_barrier();
    for (uint32_t i = 0; i < count; ++i)
        devrt_free(held[i]);
    __atomic_fetch_add(done, 1u, __ATOMIC_RELAXED);
}
