/*
 * The backend's cache of freed memory (memory_cache.h). It lets the oldest blocks go to
 * make room for a new one rather than refusing the new one: a table full of small blocks
 * (chunks of launch records, freed by the dozen when a module that queued many launches is
 * unloaded) otherwise kept every module's megabytes out, and each warm load on the H200
 * paid 2 ms to pin its RPC buffers again (docs/performance.md, "Module load, step by step").
 */
#include "memory_cache.h"

#include <string.h>

void *devrt_memory_cache_take(struct devrt_memory_cache *cache, size_t size, int kind,
                              size_t *taken)
{
    /* The newest fitting block: the one a load just unloaded, still warm in the caches. */
    for (size_t i = cache->count; i-- > 0;) {
        struct devrt_memory_block *b = &cache->blocks[i];
        if (b->kind != kind || b->size < size || b->size - size > size / 4 + 4096)
            continue;
        void *ptr = b->ptr;
        *taken = b->size;
        cache->bytes -= b->size;
        memmove(b, b + 1, (cache->count - i - 1) * sizeof *b);
        cache->count--;
        return ptr;
    }
    return NULL;
}

size_t devrt_memory_cache_keep(struct devrt_memory_cache *cache, struct devrt_memory_block block,
                               struct devrt_memory_block *gone)
{
    if (block.size > cache->limit) {
        gone[0] = block;
        return 1;
    }
    /* The oldest blocks leave, as many as the new one needs the room of. */
    size_t out = 0, bytes = cache->bytes;
    while (cache->count - out == DEVRT_MEMORY_CACHE_ENTRIES || bytes + block.size > cache->limit)
        bytes -= cache->blocks[out++].size;
    memcpy(gone, cache->blocks, out * sizeof *gone);
    memmove(cache->blocks, cache->blocks + out, (cache->count - out) * sizeof *gone);
    cache->count -= out;
    cache->bytes = bytes + block.size;
    cache->blocks[cache->count++] = block;
    return out;
}

size_t devrt_memory_cache_drain(struct devrt_memory_cache *cache, struct devrt_memory_block *gone)
{
    size_t count = cache->count;
    memcpy(gone, cache->blocks, count * sizeof *gone);
    cache->count = cache->bytes = 0;
    return count;
}
