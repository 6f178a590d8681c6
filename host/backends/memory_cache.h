/*
 * Blocks of memory freed by a backend, kept for the next allocation of about their size
 * (memory_cache.c): a module load's pinned host memory and device memory are the driver's
 * slowest calls, and every load of a module asks for the same sizes again.
 */
#ifndef DEVRT_MEMORY_CACHE_H
#define DEVRT_MEMORY_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* The most blocks one cache keeps; the bytes are bounded by the cache's limit. */
#define DEVRT_MEMORY_CACHE_ENTRIES 64u

/* A block: what the backend gave, its size, and which memory (blocks of a kind are alike). */
struct devrt_memory_block {
    void *ptr;
    size_t size;
    int kind;
};

struct devrt_memory_cache {
    size_t limit;        /* the most bytes kept, all kinds together */
    size_t count, bytes; /* what is kept now */
    struct devrt_memory_block blocks[DEVRT_MEMORY_CACHE_ENTRIES]; /* oldest first */
};

/*
 * A kept block of KIND as large as SIZE or a little larger (at most a quarter and a page),
 * taken out of the cache; its size in *TAKEN. NULL: none fits, the caller allocates.
 */
void *devrt_memory_cache_take(struct devrt_memory_cache *cache, size_t size, int kind,
                              size_t *taken);

/*
 * Keep BLOCK, making room by letting the oldest blocks go. Returns how many blocks the
 * caller must now free, written to GONE (room for DEVRT_MEMORY_CACHE_ENTRIES + 1): the ones
 * let go, or BLOCK itself when it is larger than the whole limit. The cache never holds
 * more than its limit's bytes nor DEVRT_MEMORY_CACHE_ENTRIES blocks.
 */
size_t devrt_memory_cache_keep(struct devrt_memory_cache *cache, struct devrt_memory_block block,
                               struct devrt_memory_block *gone);

/* Every block, emptied out of the cache into GONE; returns the count. */
size_t devrt_memory_cache_drain(struct devrt_memory_cache *cache, struct devrt_memory_block *gone);

#endif
