/*
 * The device heap: devrt_malloc and devrt_free served on the device from slabs, with the
 * host asked only for new memory. The layout is in include/devrt/heap.h, the design in
 * docs/heap.md.
 *
 * A wave allocates together: its lanes are grouped by size class, the group's first lane
 * reserves blocks for all of them with one atomic subtraction from the slab's free count
 * and claims them from the bitmap with one fetch-or per 32 blocks, and each lane takes its
 * own bit from the claimed set. Only the first lane touches shared state, so the uniform
 * values it computes stay in scalar registers on AMDGPU. Workgroups are spread over the
 * heap's shards, each with its own slab per class, so a full GPU does not queue on one.
 *
 * Orderings. Every atomic names what it pairs with, as rpc_client.h does. Memory changes
 * hands through three release/acquire pairs: a slab's layout reaches its users through its
 * entry in the list (new_slab's release store, find_slab's acquire load), in the lookup set
 * (remember_slab's release, is_slab's acquire) or the shard's current slab (next_slab's
 * release store, the acquire loads of it); a freed block reaches its next owner through
 * its bit (free's release fetch-and, claim's acquire fetch-or), and the free count says so
 * too (free's release add, reserve's acquire subtraction). Everything else is a hint, a
 * bound or a statistic, relaxed, and says why at its place.
 */
#include <devrt/heap.h>

#include "rpc_client.h"

#define SLAB_MASK ((uint64_t)DEVRT_HEAP_SLAB_BYTES - 1)
/*
 * Lanes that cooperate name each other by a mask taken once: on a GPU whose lanes are
 * scheduled independently (NVPTX), the active mask read later may be another set.
 */
static uint64_t broadcast_u64(uint64_t lanes, uint64_t value)
{
    return (uint64_t)devrt_arch_read_first_sync(lanes, (uint32_t)(value >> 32)) << 32 |
           devrt_arch_read_first_sync(lanes, (uint32_t)value);
}

/* The shard of the calling wave: uniform, so its arithmetic stays scalar. */
static struct devrt_heap_shard *shard_of(struct devrt_heap *heap)
{
    return &heap->shard[devrt_arch_workgroup_id(0) & (DEVRT_HEAP_SHARDS - 1)];
}

static uint32_t lookup_slot(const struct devrt_heap *heap, uint32_t number)
{
    return (number * 0x9e3779b1u) & DEVRT_ARCH_READ_ONLY(heap)->lookup_mask;
}

/* The lookup set is twice the slab capacity, so a probe always meets an empty entry. */
static bool is_slab(const struct devrt_heap *heap, uint64_t base)
{
    uint32_t number = (uint32_t)(base >> DEVRT_HEAP_SLAB_SHIFT);
    for (uint32_t i = lookup_slot(heap, number);;
         i = (i + 1) & DEVRT_ARCH_READ_ONLY(heap)->lookup_mask) {
        /* Acquire: pairs with remember_slab's release, so free reads the slab's header. */
        uint32_t entry = devrt_atomic_load(&DEVRT_ARCH_READ_ONLY(heap)->lookup[i], __ATOMIC_ACQUIRE,
                                           DEVRT_SCOPE_DEVICE);
        if (entry == number)
            return true;
        if (entry == 0)
            return false;
    }
}

static void remember_slab(struct devrt_heap *heap, uint64_t base)
{
    uint32_t number = (uint32_t)(base >> DEVRT_HEAP_SLAB_SHIFT);
    for (uint32_t i = lookup_slot(heap, number);;
         i = (i + 1) & DEVRT_ARCH_READ_ONLY(heap)->lookup_mask) {
        uint32_t empty = 0;
        /* Release: the header laid out before it; pairs with is_slab's acquire load. */
        if (devrt_atomic_cas(&DEVRT_ARCH_READ_ONLY(heap)->lookup[i], &empty, number,
                             __ATOMIC_RELEASE, DEVRT_SCOPE_DEVICE))
            return;
    }
}

/*
 * Write an empty slab's header and bitmap as the host's reply lays them out. The host does
 * not: its copy would be work on the GPU, queued behind the kernel waiting for the slab.
 * The memory is fresh from the host's reserve and no other wave knows the slab until
 * new_slab publishes it with a release, so plain stores do.
 */
static void lay_out_slab(struct devrt_slab *slab, const struct devrt_heap_grow_reply *reply)
{
    /* A word at a time: a whole copy would hold the header in registers the allocator's
       callers pay for. */
#if defined(__clang__)
#pragma clang loop unroll(disable)
#endif
    for (uint32_t i = 0; i < sizeof reply->header / 4; ++i)
        ((uint32_t *)slab)[i] = reply->header[i];
    uint32_t count = slab->block_count;
    /* Blocks past the end are marked taken, so claiming never looks at them. */
    for (uint32_t i = 0, first = 0; i < reply->bitmap_words; ++i, first += 32)
        slab->bitmap[i] = first >= count ? ~0u : count - first >= 32 ? 0u : ~0u << (count - first);
}

/*
 * Ask the host for a slab of blocks of `block_size` and lay it out, empty. Only the calling
 * lane takes part, and the request is one word, so it is written in place: the general
 * streaming send would cost the allocator's callers registers.
 */
static struct devrt_slab *request_slab(uint32_t block_size)
{
    struct devrt_rpc_port port = devrt_rpc_acquire();
    struct devrt_rpc_packet *packet = &port.buffer->packet[devrt_arch_lane_id()];
    *(struct devrt_rpc_first_packet *)packet = (struct devrt_rpc_first_packet){0, block_size};
    port.outbox = devrt_rpc_post_in(port.channel, port.buffer, port.index, port.outbox, port.lanes,
                                    DEVRT_RPC_HEAP_GROW, DEVRT_RPC_WANT_REPLY);
    uint32_t status = devrt_rpc_wait(port.channel, port.index, port.outbox);
    /* Laid out while the port is ours: the next holder may overwrite the reply. */
    const struct devrt_heap_grow_reply *reply = (const struct devrt_heap_grow_reply *)packet;
    struct devrt_slab *slab =
        (struct devrt_slab *)(uintptr_t)(status == DEVRT_RPC_OK ? reply->slab : 0);
    if (slab)
        lay_out_slab(slab, reply);
    devrt_rpc_release_in(port.channel, port.index, port.lanes, port.outbox, true);
    return slab;
}

/*
 * A new slab from the host, laid out, then made known: its entry in the lookup set (for
 * free) and in the list (for the search) are stored with a release, so a wave that finds
 * it by either, with an acquire, reads the header written before. The caller is its only
 * user until then.
 */
static struct devrt_slab *new_slab(struct devrt_heap *heap, uint32_t block_size)
{
    /* Relaxed: only a bound, checked again by the increment below. */
    if (devrt_atomic_load(&heap->slab_count, __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE) >=
        DEVRT_ARCH_READ_ONLY(heap)->slab_capacity)
        return NULL;
    struct devrt_slab *slab = request_slab(block_size);
    if (!slab)
        return NULL;
    /*
     * Relaxed: it only hands out an index. The slab is published by the release store of
     * its entry below, not by the count: find_slab reads entries up to the count, and an
     * entry not yet stored reads 0, which matches no class's tag.
     */
    uint32_t index =
        devrt_atomic_fetch_add(&heap->slab_count, 1u, __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
    if (index >= DEVRT_ARCH_READ_ONLY(heap)->slab_capacity)
        return NULL; /* lost a race for the last entry; the host keeps the memory */
    remember_slab(heap, (uint64_t)(uintptr_t)slab);
    /* Release: the layout before it; pairs with find_slab's acquire load of the entry. */
    devrt_atomic_store(&DEVRT_ARCH_READ_ONLY(heap)->slabs[index],
                       (uint64_t)(uintptr_t)slab | devrt_heap_slab_tag(slab->size_class),
                       __ATOMIC_RELEASE, DEVRT_SCOPE_DEVICE);
    return slab;
}

/*
 * A slab of the class with unreserved blocks, or NULL. A picky search wants a quarter of
 * the slab's blocks free: taking slabs with a few would send waves straight back here, so
 * the heap rather grows, and takes those only when it cannot. A search goes on from where
 * the shard's last one for the class ended, so it does not read the same full slabs again.
 * A large slab serves any block that needs as many pages, so freed large blocks are reused.
 */
static struct devrt_slab *find_slab(struct devrt_heap *heap, struct devrt_heap_shard *shard,
                                    uint32_t size_class, uint32_t pages,
                                    const struct devrt_slab *skip, bool picky)
{
    /* Only a hint, and large blocks search without a lock: relaxed atomics are enough. */
    uint32_t *cursor =
        &shard->cursor[size_class < DEVRT_HEAP_CLASS_COUNT ? size_class : DEVRT_HEAP_CLASS_COUNT];
    /*
     * Relaxed: the count pairs with nothing (new_slab's increment is relaxed) and needs not:
     * it only bounds the search. Each entry's own acquire load below publishes its slab.
     */
    uint32_t count = devrt_atomic_load(&heap->slab_count, __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
    if (count > DEVRT_ARCH_READ_ONLY(heap)->slab_capacity)
        count = DEVRT_ARCH_READ_ONLY(heap)->slab_capacity;
    uint64_t tag = devrt_heap_slab_tag(size_class);
    uint32_t i = devrt_atomic_load(cursor, __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
    for (uint32_t n = 0; n < count; ++n, ++i) {
        if (i >= count)
            i = 0;
        /* Acquire: pairs with new_slab's release store, so the header below is the slab's. */
        uint64_t entry = devrt_atomic_load(&DEVRT_ARCH_READ_ONLY(heap)->slabs[i], __ATOMIC_ACQUIRE,
                                           DEVRT_SCOPE_DEVICE);
        struct devrt_slab *slab = (struct devrt_slab *)(uintptr_t)(entry & ~SLAB_MASK);
        if ((entry & SLAB_MASK) != tag || slab == skip || slab->pages != pages)
            continue;
        /* Relaxed: a hint; reserve's subtraction does the counting that matters. */
        int32_t free =
            (int32_t)devrt_atomic_load(&slab->free_count, __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
        if (free > (picky ? (int32_t)(slab->block_count / 4) : 0)) {
            devrt_atomic_store(cursor, i + 1, __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE); /* a hint */
            return slab;
        }
    }
    return NULL;
}

/*
 * The slab to allocate from once `full` (or none yet) has no room: a used one with room,
 * else a new one. For a class, one wave of the shard at a time looks and the others take
 * its result; a large block needs no such care, since it gets a slab to itself.
 */
static struct devrt_slab *next_slab(struct devrt_heap *heap, struct devrt_heap_shard *shard,
                                    uint32_t size_class, uint32_t block_size,
                                    struct devrt_slab *full)
{
    bool large = size_class == DEVRT_HEAP_LARGE_CLASS;
    uint32_t pages = large ? devrt_heap_large_pages(block_size) : 1;
    uint64_t seen = (uint64_t)(uintptr_t)full;
    uint64_t now = seen;
    if (!large) {
        uint32_t unlocked = 0;
        /* Acquire: pairs with the release that unlocks it below, taking the last holder's
           stores (the current slab) with the lock. */
        while (!devrt_atomic_cas(&shard->grow_lock[size_class], &unlocked, 1u, __ATOMIC_ACQUIRE,
                                 DEVRT_SCOPE_DEVICE)) {
            unlocked = 0;
            /* Acquire: pairs with the release store of a new current slab below. */
            now = devrt_atomic_load(&shard->current[size_class], __ATOMIC_ACQUIRE,
                                    DEVRT_SCOPE_DEVICE);
            if (now != seen)
                return (struct devrt_slab *)(uintptr_t)now;
            devrt_arch_sleep();
        }
        /* Acquire: as above, the release store of the current slab. */
        now = devrt_atomic_load(&shard->current[size_class], __ATOMIC_ACQUIRE, DEVRT_SCOPE_DEVICE);
    }
    struct devrt_slab *slab = (struct devrt_slab *)(uintptr_t)now;
    if (now == seen) {
        slab = find_slab(heap, shard, size_class, pages, full, true);
        if (!slab)
            slab = new_slab(heap, block_size);
        if (!slab)
            slab = find_slab(heap, shard, size_class, pages, full, false);
    }
    if (!large) {
        /* Release: the slab's layout (found or new) before it; pairs with the acquire loads
           of current here and in allocate_group. */
        if (slab && now == seen)
            devrt_atomic_store(&shard->current[size_class], (uint64_t)(uintptr_t)slab,
                               __ATOMIC_RELEASE, DEVRT_SCOPE_DEVICE);
        /* Release: unlocks; pairs with the acquire compare-and-swap that takes the lock. */
        devrt_atomic_store(&shard->grow_lock[size_class], 0u, __ATOMIC_RELEASE, DEVRT_SCOPE_DEVICE);
    }
    return slab;
}

/*
 * Reserve up to `want` blocks of the slab; returns how many, and sets *word to the bitmap
 * word where they would be if blocks were taken in order, the place to start claiming.
 * One atomic subtraction, whatever the contention (a compare-and-swap loop retries as
 * often as waves collide); what it took past the free blocks goes back with one add. Until
 * then the count reads below zero and others find the slab full, as it then is, or nearly.
 */
static uint32_t reserve(struct devrt_slab *slab, uint32_t want, uint32_t *word)
{
    /*
     * Acquire: pairs with free's release add. A count that includes a freed block then
     * comes with that block's cleared bit, so claim finds every block reserved in the words
     * it reads rather than spinning until a stale word is refreshed. The block's contents
     * change hands through the bit itself (claim, free).
     */
    int32_t free = (int32_t)devrt_atomic_fetch_add(&slab->free_count, -want, __ATOMIC_ACQUIRE,
                                                   DEVRT_SCOPE_DEVICE);
    uint32_t take = free < 0 ? 0 : (uint32_t)free < want ? (uint32_t)free : want;
    /* Relaxed: gives back what was never there; it publishes nothing. A read-modify-write,
       so it does not break the release sequence of an earlier free's add. */
    if (take < want)
        devrt_atomic_fetch_add(&slab->free_count, want - take, __ATOMIC_RELAXED,
                               DEVRT_SCOPE_DEVICE);
    *word = (slab->block_count - (uint32_t)free) / 32;
    return take;
}

/*
 * Claim up to `want` reserved blocks from one bitmap word, looking from *word on; returns
 * the bits won and sets *word. Reserved blocks are free somewhere in the bitmap, so the
 * search ends. Waves start where their reservation says (blocks tend to be taken from the
 * front of a slab), so those sharing a slab seldom race for one word.
 */
static uint32_t claim(struct devrt_slab *slab, uint32_t want, uint32_t *word)
{
    uint32_t words = (slab->block_count + 31) / 32;
    for (uint32_t i = *word < words ? *word : 0;; i = i + 1 == words ? 0 : i + 1) {
        /* Relaxed: which bits look free is a guess; the fetch-or below decides. */
        uint32_t free = ~devrt_atomic_load(&slab->bitmap[i], __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
        uint32_t take = 0;
        for (uint32_t n = 0; n < want && free; ++n) {
            take |= free & -free;
            free &= free - 1;
        }
        if (!take)
            continue;
        /* Acquire: pairs with free's release fetch-and: the block's last owner is done. */
        uint32_t won = take & ~devrt_atomic_fetch_or(&slab->bitmap[i], take, __ATOMIC_ACQUIRE,
                                                     DEVRT_SCOPE_DEVICE);
        if (won) {
            *word = i;
            return won;
        }
    }
}

static uint32_t nth_bit(uint32_t bits, uint32_t n)
{
    for (; n; --n)
        bits &= bits - 1;
    return (uint32_t)__builtin_ctz(bits);
}

/*
 * Serve every active lane from slabs of one class (or, for a large block, one lane from
 * a slab of its own); lanes the heap cannot serve get NULL.
 */
static void *allocate_group(uint64_t group, struct devrt_heap *heap, uint32_t size_class,
                            uint32_t block_size)
{
    uint32_t count = (uint32_t)__builtin_popcountll(group);
    uint32_t rank = devrt_arch_rank_in(group);
    bool leader = rank == 0;
    bool large = size_class == DEVRT_HEAP_LARGE_CLASS;
    void *mine = NULL;
    uint32_t served = 0, word = 0;
    struct devrt_heap_shard *shard = shard_of(heap);
    struct devrt_slab *slab = NULL;
    /* Acquire: pairs with next_slab's release store of the current slab. */
    if (leader && !large)
        slab = (struct devrt_slab *)(uintptr_t)devrt_atomic_load(
            &shard->current[size_class], __ATOMIC_ACQUIRE, DEVRT_SCOPE_DEVICE);
    while (served < count) {
        uint32_t reserved = 0;
        if (leader) {
            if (slab)
                reserved = reserve(slab, count - served, &word);
            if (!reserved) {
                slab = next_slab(heap, shard, size_class, block_size, slab);
                if (slab)
                    reserved = reserve(slab, count - served, &word);
            }
        }
        slab = (struct devrt_slab *)(uintptr_t)broadcast_u64(group, (uint64_t)(uintptr_t)slab);
        reserved = devrt_arch_read_first_sync(group, reserved);
        if (!slab)
            break; /* exhausted */
        for (uint32_t end = served + reserved; served < end;) {
            uint32_t won = 0;
            if (leader) {
                won = claim(slab, end - served, &word);
                /*
                 * A reused large slab takes the size of its new block. Stored only after the
                 * claim: its acquire fetch-or reads the bit the last block's free cleared with
                 * a release, so that free's reads of the old size happen before this store.
                 * Whoever frees the new block got the pointer from this lane, after it.
                 */
                if (large && won)
                    devrt_atomic_store(&slab->block_size, block_size, __ATOMIC_RELAXED,
                                       DEVRT_SCOPE_DEVICE);
            }
            won = devrt_arch_read_first_sync(group, won);
            uint32_t at = devrt_arch_read_first_sync(group, word);
            uint32_t n = (uint32_t)__builtin_popcount(won);
            uint32_t nth = rank - served; /* wraps for the lanes already served */
            if (nth < n)
                mine = (char *)slab + slab->data_offset +
                       (uint64_t)(at * 32 + nth_bit(won, nth)) * block_size;
            served += n;
        }
    }
    /* Relaxed: statistics, which the host reads once the kernel has ended. */
    if (leader) {
        devrt_atomic_fetch_add(&shard->bytes_in_use, (uint64_t)served * block_size,
                               __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
        if (served < count)
            devrt_atomic_fetch_add(&heap->failed_allocations, (uint64_t)(count - served),
                                   __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
    }
    return mine;
}

/* Sizes past the heap's largest block, like exhaustion, give NULL and are counted. */
DEVRT_ARCH_INLINE void *devrt_malloc(size_t size)
{
    struct devrt_heap *heap = DEVRT_ARCH_READ_ONLY(__devrt_state)->heap;
    if (size == 0)
        return NULL;
    if (size > DEVRT_ARCH_READ_ONLY(heap)->max_block) {
        /* Relaxed: a statistic. */
        devrt_atomic_fetch_add(&heap->failed_allocations, 1ull, __ATOMIC_RELAXED,
                               DEVRT_SCOPE_DEVICE);
        return NULL;
    }
    /* Lanes are served a class at a time; large blocks, which are rare, a lane at a time. */
    uint32_t size_class = DEVRT_HEAP_LARGE_CLASS, block_size = (uint32_t)(size + 15) / 16 * 16;
    if (size <= DEVRT_HEAP_SMALL_MAX) {
        size_class = devrt_heap_size_class(size);
        block_size = devrt_heap_class_size(size_class);
    }
    void *result = NULL;
    bool pending = true;
    uint64_t lanes = devrt_arch_active_mask();
    for (uint64_t waiting; (waiting = devrt_arch_ballot_sync(lanes, pending));) {
        if (pending) {
            uint32_t first = devrt_arch_read_first_sync(waiting, size_class);
            bool large = first == DEVRT_HEAP_LARGE_CLASS;
            bool in = size_class == first && (!large || devrt_arch_rank_in(waiting) == 0);
            uint64_t group = devrt_arch_ballot_sync(waiting, in);
            if (in) {
                result = allocate_group(group, heap, first,
                                        devrt_arch_read_first_sync(group, block_size));
                pending = false;
            }
        }
    }
    return result;
}

DEVRT_ARCH_INLINE void devrt_free(void *ptr)
{
    if (!ptr)
        return;
    struct devrt_heap *heap = DEVRT_ARCH_READ_ONLY(__devrt_state)->heap;
    uint64_t address = (uint64_t)(uintptr_t)ptr;
    uint64_t base = address & ~SLAB_MASK;
    /* One raise site for every misuse: each inlined raise would cost registers of its own. */
    uint32_t code = DEVRT_EXCEPTION_INVALID_POINTER;
    const char *why = "free of a pointer the heap did not give out";
    if (is_slab(heap, base)) {
        struct devrt_slab *slab = (struct devrt_slab *)(uintptr_t)base;
        /* Under 64 KiB from an aligned slab start: offsets fit 32 bits. */
        uint32_t within = (uint32_t)(address - base);
        uint32_t offset = within - slab->data_offset;
        /* offset / block_size by a multiply: offsets and sizes are small multiples of 16. */
        uint32_t index = (uint32_t)(((uint64_t)(offset >> 4) * slab->reciprocal) >> 24);
        uint32_t bit = 1u << (index % 32);
        /*
         * Read once, before the bit is cleared: after it, the slab (a large one) may be
         * reused and its size rewritten (allocate_group).
         */
        uint32_t block_size =
            devrt_atomic_load(&slab->block_size, __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
        why = "free of a pointer into the middle of a block";
        if (within >= slab->data_offset && index * block_size == offset &&
            index < slab->block_count) {
            code = DEVRT_EXCEPTION_DOUBLE_FREE;
            why = "double free";
            /* Release: this owner is done with the block; pairs with claim's acquire. */
            if (devrt_atomic_fetch_and(&slab->bitmap[index / 32], ~bit, __ATOMIC_RELEASE,
                                       DEVRT_SCOPE_DEVICE) &
                bit) {
                /* Release: after the bit; pairs with reserve's acquire subtraction. */
                devrt_atomic_fetch_add(&slab->free_count, 1u, __ATOMIC_RELEASE, DEVRT_SCOPE_DEVICE);
                /* Relaxed: a statistic. */
                devrt_atomic_fetch_add(&shard_of(heap)->bytes_in_use, -(uint64_t)block_size,
                                       __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
                return;
            }
        }
    }
    devrt_signal_exception_at(code, why, NULL, 0, address);
}

void *devrt_calloc(size_t count, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes))
        return NULL;
    char *ptr = devrt_malloc(bytes);
    if (ptr)
        for (size_t i = 0; i < bytes; ++i)
            ptr[i] = 0;
    return ptr;
}

/* The size a block can hold, for realloc; the pointer is one the heap gave out. */
static uint64_t block_capacity(const void *ptr)
{
    const struct devrt_slab *slab =
        (const struct devrt_slab *)(uintptr_t)((uint64_t)(uintptr_t)ptr & ~SLAB_MASK);
    /* Only the block's owner reallocates it, so no other store can race this load. */
    return devrt_atomic_load(&slab->block_size, __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
}

void *devrt_realloc(void *ptr, size_t size)
{
    if (!ptr)
        return devrt_malloc(size);
    if (size == 0) {
        devrt_free(ptr);
        return NULL;
    }
    if (!is_slab(DEVRT_ARCH_READ_ONLY(__devrt_state)->heap, (uint64_t)(uintptr_t)ptr & ~SLAB_MASK))
        devrt_signal_exception_at(DEVRT_EXCEPTION_INVALID_POINTER,
                                  "realloc of a pointer the "
                                  "heap did not give out",
                                  NULL, 0, (uint64_t)(uintptr_t)ptr);
    uint64_t capacity = block_capacity(ptr);
    if (size <= capacity)
        return ptr;
    char *grown = devrt_malloc(size);
    if (grown) {
        for (uint64_t i = 0; i < capacity; ++i)
            grown[i] = ((const char *)ptr)[i];
        devrt_free(ptr);
    }
    return grown;
}

/*
 * Every block is aligned to the largest power of two dividing its class size (large blocks
 * to 4096 bytes), so rounding the size up to a multiple of the alignment is enough.
 */
void *devrt_aligned_alloc(size_t alignment, size_t size)
{
    if (alignment == 0 || (alignment & (alignment - 1)) || alignment > DEVRT_HEAP_LARGE_OFFSET)
        return NULL;
    if (alignment <= 16)
        return devrt_malloc(size);
    return devrt_malloc((size + alignment - 1) / alignment * alignment);
}
