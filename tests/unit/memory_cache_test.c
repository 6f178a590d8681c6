/*
 * The backends' cache of freed memory (host/backends/memory_cache.c), with made-up blocks:
 * nothing is allocated, a block is a number.
 *
 *   memory_cache_test bound [control]  random keeps and takes: the cache never holds more
 *                                      than its limit's bytes or its table's blocks, and
 *                                      every block kept comes back once (taken or let go).
 *                                      control: a keep that does not let old blocks go,
 *                                      which must fail
 *   memory_cache_test clog [control]   a module's 4 MiB freed after 40 small blocks is
 *                                      there for the next load. control: the rule before
 *                                      issue 29 (a full table refused the new block),
 *                                      which must fail
 *
 * Exit status: 0 held, 1 did not.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory_cache.h"

#define LIMIT (64u << 20)
#define BLOCKS 20000u

/* Where each made-up block is: 0 the caller's, 1 the cache's. */
static unsigned char where[BLOCKS + 1];

static void *as_ptr(size_t id)
{
    return (void *)(uintptr_t)(id * 4096u);
}

static size_t id_of(void *ptr)
{
    return (size_t)(uintptr_t)ptr / 4096u;
}

/* A keep that never lets a block go: the table fills and the bytes grow past the limit. */
static size_t careless_keep(struct devrt_memory_cache *cache, struct devrt_memory_block block,
                            struct devrt_memory_block *gone)
{
    if (cache->count == DEVRT_MEMORY_CACHE_ENTRIES) {
        gone[0] = block;
        return 1;
    }
    cache->blocks[cache->count++] = block;
    cache->bytes += block.size;
    return 0;
}

/* The rule before issue 29: a block that does not fit beside the kept ones is freed. */
static size_t refusing_keep(struct devrt_memory_cache *cache, struct devrt_memory_block block,
                            struct devrt_memory_block *gone)
{
    if (cache->count == 32 || cache->bytes + block.size > cache->limit) {
        gone[0] = block;
        return 1;
    }
    cache->blocks[cache->count++] = block;
    cache->bytes += block.size;
    return 0;
}

typedef size_t keep_fn(struct devrt_memory_cache *, struct devrt_memory_block,
                       struct devrt_memory_block *);

static size_t random_size(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t r = (uint32_t)(*state >> 33);
    switch (r % 8) {
    case 0: return 4218880;                /* a module's RPC buffers */
    case 1: return 4259840;                /* its heap's reserve */
    case 2: return 80128;                  /* its initial state */
    case 3: return (r >> 8) % (LIMIT / 2); /* anything */
    case 4: return LIMIT + 1;              /* more than the whole cache */
    default: return 2560;                  /* launch slots */
    }
}

static int bound(keep_fn *keep)
{
    struct devrt_memory_cache cache = {.limit = LIMIT};
    struct devrt_memory_block gone[DEVRT_MEMORY_CACHE_ENTRIES + 1];
    uint64_t state = 29;
    size_t failures = 0, operations = 0;
    for (size_t id = 1; id <= BLOCKS; ++id, ++operations) {
        size_t size = random_size(&state);
        size_t count =
            keep(&cache, (struct devrt_memory_block){as_ptr(id), size, (int)(id % 2)}, gone);
        where[id] = 1;
        for (size_t i = 0; i < count; ++i) {
            size_t out = id_of(gone[i].ptr);
            if (out < 1 || out > id || where[out] != 1) {
                printf("block %zu let go but not in the cache\n", out);
                failures++;
            }
            where[out] = 0;
        }
        if (id % 3 == 0) {
            size_t want = random_size(&state), taken = 0;
            void *ptr = devrt_memory_cache_take(&cache, want, (int)(id % 2), &taken);
            if (ptr) {
                size_t out = id_of(ptr);
                if (where[out] != 1 || taken < want) {
                    printf("block %zu taken but not in the cache, or too small\n", out);
                    failures++;
                }
                where[out] = 0;
            }
        }
        size_t bytes = 0, held = 0;
        for (size_t i = 0; i < cache.count; ++i)
            bytes += cache.blocks[i].size;
        for (size_t b = 1; b <= id; ++b)
            held += where[b];
        if (cache.bytes > LIMIT || cache.count > DEVRT_MEMORY_CACHE_ENTRIES ||
            bytes != cache.bytes || held != cache.count) {
            if (failures < 5)
                printf("after block %zu: %zu bytes in %zu blocks (counted %zu in %zu), limit %u\n",
                       id, cache.bytes, cache.count, bytes, held, LIMIT);
            failures++;
        }
    }
    printf("%s: %zu operations, %zu failures\n",
           keep == devrt_memory_cache_keep ? "bound" : "control", operations, failures);
    return failures ? 1 : 0;
}

static int unclogged(keep_fn *keep)
{
    struct devrt_memory_cache cache = {.limit = LIMIT};
    struct devrt_memory_block gone[DEVRT_MEMORY_CACHE_ENTRIES + 1];
    for (size_t id = 1; id <= 40; ++id)
        keep(&cache, (struct devrt_memory_block){as_ptr(id), 2560, 1}, gone);
    keep(&cache, (struct devrt_memory_block){as_ptr(100), 4218880, 1}, gone);
    size_t taken = 0;
    void *ptr = devrt_memory_cache_take(&cache, 4218880, 1, &taken);
    bool back = ptr == as_ptr(100);
    printf("%s: the 4 MiB block freed after 40 small ones %s\n",
           keep == devrt_memory_cache_keep ? "clog" : "control",
           back ? "came back" : "was not kept");
    return back ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    bool control = argc > 2 && !strcmp(argv[2], "control");
    if (!strcmp(mode, "bound"))
        return bound(control ? careless_keep : devrt_memory_cache_keep);
    if (!strcmp(mode, "clog"))
        return unclogged(control ? refusing_keep : devrt_memory_cache_keep);
    fprintf(stderr, "usage: memory_cache_test bound|clog [control]\n");
    return 2;
}
