/*
 * The device heap's layout, shared by device code (device/heap.c) and the host runtime
 * (host/runtime/heap.c). docs/heap.md explains the design.
 *
 * Memory comes in slabs: SLAB_BYTES-aligned regions, each holding blocks of one size class
 * after a header and an allocation bitmap. An allocation larger than the biggest class gets
 * a slab of its own, several SLAB_BYTES long, holding one block. Aligned slabs give the way
 * back from a pointer to its header; a hash set of slab addresses tells a heap pointer from
 * a foreign one before anything is read through it.
 */
#ifndef DEVRT_HEAP_H
#define DEVRT_HEAP_H

#include <stdint.h>

#include "layout.h"

#define DEVRT_HEAP_SLAB_SHIFT 16u
#define DEVRT_HEAP_SLAB_BYTES (1u << DEVRT_HEAP_SLAB_SHIFT)
/* Classes: 16-byte steps up to 128 bytes, then four per power of two up to 16 KiB. */
#define DEVRT_HEAP_SMALL_MAX (16u << 10)
#define DEVRT_HEAP_CLASS_COUNT 36u
#define DEVRT_HEAP_LARGE_CLASS 0xffffffffu
/* Where a large block starts in its slab, and so the alignment every large block has. */
#define DEVRT_HEAP_LARGE_OFFSET 4096u

struct devrt_slab {
    uint32_t size_class; /* a class, or DEVRT_HEAP_LARGE_CLASS */
    uint32_t block_size; /* bytes per block (large: the whole block) */
    uint32_t block_count;
    uint32_t free_count;  /* blocks not reserved; allocators reserve before they claim. Read
                             as signed: an over-reservation dips below zero until given back */
    uint32_t data_offset; /* from the slab's start to its first block */
    uint32_t pages;       /* SLAB_BYTES units this slab spans */
    uint32_t reciprocal;  /* ceil(2^24 / (block_size / 16)), so free needs no division; 0 large */
    uint32_t bitmap[];    /* bit set: block allocated (or past block_count) */
};

/* How a slab of one class is laid out; the host computes it once and lays out slabs. */
struct devrt_heap_class {
    uint32_t block_size;
    uint32_t block_count;
    uint32_t data_offset; /* aligned to the largest power of two dividing block_size */
    uint32_t reciprocal;  /* as in devrt_slab */
    uint32_t bitmap_words;
};

/*
 * Waves allocate through one of DEVRT_HEAP_SHARDS shards, picked by workgroup, so that
 * workgroups on different compute units reserve from different slabs and find new ones
 * under different locks. Each shard is aligned to its own cache lines.
 */
#define DEVRT_HEAP_SHARDS 16u

struct devrt_heap_shard {
    DEVRT_ALIGNAS(128)
    uint64_t current[DEVRT_HEAP_CLASS_COUNT];    /* the slab each class allocates from */
    uint32_t grow_lock[DEVRT_HEAP_CLASS_COUNT];  /* one wave at a time finds a class a slab */
    uint32_t cursor[DEVRT_HEAP_CLASS_COUNT + 1]; /* where the next search of slabs starts, per
                                                    class and (last) for large blocks */
    uint64_t bytes_in_use; /* block bytes handed out less those freed through this shard; only
                              the sum over shards means anything */
};

struct devrt_heap {
    struct devrt_heap_shard shard[DEVRT_HEAP_SHARDS];
    uint32_t slab_count;
    uint32_t slab_capacity;
    uint64_t *slabs;      /* slab_capacity slab addresses in order of creation, each with its
                             slab_tag in the low bits */
    uint32_t *lookup;     /* open addressing set of slab numbers (address >> SLAB_SHIFT);
                             0 is empty. 32 bits cover 48-bit addresses. */
    uint32_t lookup_mask; /* lookup holds lookup_mask + 1 entries */
    uint32_t reserved;
    uint64_t max_block; /* the largest allocation the heap serves */
    uint64_t failed_allocations;
};

DEVRT_LAYOUT(struct devrt_slab, size_class, 0);
DEVRT_LAYOUT(struct devrt_slab, block_size, 4);
DEVRT_LAYOUT(struct devrt_slab, block_count, 8);
DEVRT_LAYOUT(struct devrt_slab, free_count, 12);
DEVRT_LAYOUT(struct devrt_slab, data_offset, 16);
DEVRT_LAYOUT(struct devrt_slab, pages, 20);
DEVRT_LAYOUT(struct devrt_slab, reciprocal, 24);
DEVRT_LAYOUT(struct devrt_slab, bitmap, 28);
DEVRT_LAYOUT_SIZE(struct devrt_slab, 28);
DEVRT_LAYOUT(struct devrt_heap_class, block_size, 0);
DEVRT_LAYOUT(struct devrt_heap_class, block_count, 4);
DEVRT_LAYOUT(struct devrt_heap_class, data_offset, 8);
DEVRT_LAYOUT(struct devrt_heap_class, reciprocal, 12);
DEVRT_LAYOUT(struct devrt_heap_class, bitmap_words, 16);
DEVRT_LAYOUT_SIZE(struct devrt_heap_class, 20);
DEVRT_LAYOUT(struct devrt_heap_shard, current, 0);
DEVRT_LAYOUT(struct devrt_heap_shard, grow_lock, 288);
DEVRT_LAYOUT(struct devrt_heap_shard, cursor, 432);
DEVRT_LAYOUT(struct devrt_heap_shard, bytes_in_use, 584);
DEVRT_LAYOUT_SIZE(struct devrt_heap_shard, 640);
DEVRT_LAYOUT(struct devrt_heap, shard, 0);
DEVRT_LAYOUT(struct devrt_heap, slab_count, 10240);
DEVRT_LAYOUT(struct devrt_heap, slab_capacity, 10244);
DEVRT_LAYOUT(struct devrt_heap, slabs, 10248);
DEVRT_LAYOUT(struct devrt_heap, lookup, 10256);
DEVRT_LAYOUT(struct devrt_heap, lookup_mask, 10264);
DEVRT_LAYOUT(struct devrt_heap, reserved, 10268);
DEVRT_LAYOUT(struct devrt_heap, max_block, 10272);
DEVRT_LAYOUT(struct devrt_heap, failed_allocations, 10280);
DEVRT_LAYOUT_SIZE(struct devrt_heap, 10368);

/* A slab's class in the low bits of its entry in slabs, so a search reads no other headers. */
static inline uint64_t devrt_heap_slab_tag(uint32_t size_class)
{
    return (size_class & 0xfffu) + 1; /* never 0: an entry not yet written matches nothing */
}

/*
 * DEVRT_RPC_HEAP_GROW asks for a new slab with an empty message whose argument is the
 * block size: a class's size, or above DEVRT_HEAP_SMALL_MAX a large block's. The host only
 * reserves the memory and replies with a devrt_heap_grow_reply in the lane's packet: the
 * slab's address (0 when the heap is full) and its layout. The requesting lane writes the
 * header and bitmap itself (it is the slab's only user until it publishes the slab in the
 * heap's list with a release), because a copy by the host is work on the GPU (a blit on
 * HSA), which can wait behind the very kernel whose waves wait for the slab.
 */
struct devrt_heap_grow_reply {
    uint64_t slab;
    /* The empty slab's header: a struct devrt_slab up to its bitmap, copied as it is. */
    uint32_t header[sizeof(struct devrt_slab) / 4];
    uint32_t bitmap_words; /* the bitmap's length; bits past the block count are set */
};
DEVRT_LAYOUT(struct devrt_heap_grow_reply, slab, 0);
DEVRT_LAYOUT(struct devrt_heap_grow_reply, header, 8);
DEVRT_LAYOUT(struct devrt_heap_grow_reply, bitmap_words, 36);
DEVRT_LAYOUT_SIZE(struct devrt_heap_grow_reply, 40);
static inline uint32_t devrt_heap_large_pages(uint64_t block_size)
{
    return (uint32_t)((block_size + DEVRT_HEAP_LARGE_OFFSET + DEVRT_HEAP_SLAB_BYTES - 1) >>
                      DEVRT_HEAP_SLAB_SHIFT);
}

/* The size class of a small request: 16-byte steps to 128, then four per power of two. */
static inline uint32_t devrt_heap_size_class(uint64_t size)
{
    if (size <= 128)
        return (uint32_t)((size + 15) / 16) - 1;
    uint32_t p = 63 - (uint32_t)__builtin_clzll(size - 1); /* size is in (2^p, 2^(p+1)] */
    return 8 + (p - 7) * 4 + (uint32_t)((size - 1 - (1ull << p)) >> (p - 2));
}

static inline uint32_t devrt_heap_class_size(uint32_t size_class)
{
    if (size_class < 8)
        return (size_class + 1) * 16;
    uint32_t p = 7 + (size_class - 8) / 4;
    return (1u << p) + ((size_class - 8) % 4 + 1) * (1u << (p - 2));
}

#endif
