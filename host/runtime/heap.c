/*
 * The host side of the device heap: it sets up the heap's control block when a module is
 * loaded and serves DEVRT_RPC_HEAP_GROW, the device's request for slab memory, cut from a
 * reserve of device memory that doubles the heap each time it runs out, up to the maximum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/heap.h>

#include "runtime.h"
#include "trace.h"

#define DEFAULT_INITIAL_BYTES (4u << 20)
#define DEFAULT_MAX_BYTES (256u << 20)

static uint64_t align_up(uint64_t value, uint64_t alignment)
{
    return (value + alignment - 1) / alignment * alignment;
}

/*
 * Device memory aligned to a slab, not zeroed (the device writes what a slab needs); the
 * chunk list keeps what must be freed.
 */
static void *allocate_chunk(devrt_module *module, size_t bytes)
{
    struct devrt_module_heap *h = &module->heap;
    if (h->chunk_count == h->chunk_capacity) {
        size_t capacity = h->chunk_capacity ? 2 * h->chunk_capacity : 16;
        void **grown = realloc(h->chunks, capacity * sizeof *grown);
        if (!grown)
            return NULL;
        h->chunks = grown;
        h->chunk_capacity = capacity;
    }
    devrt_device *device = module->device;
    void *raw = device->ops->alloc(device, bytes + DEVRT_HEAP_SLAB_BYTES, DEVRT_MEMORY_DEVICE_RAW);
    if (!raw)
        return NULL;
    h->chunks[h->chunk_count++] = raw;
    return (void *)(uintptr_t)align_up((uint64_t)(uintptr_t)raw, DEVRT_HEAP_SLAB_BYTES);
}

/* The layout of each class's slabs, done here once so that the device never divides. */
static void lay_out_classes(struct devrt_heap_class classes[DEVRT_HEAP_CLASS_COUNT])
{
    for (uint32_t c = 0; c < DEVRT_HEAP_CLASS_COUNT; ++c) {
        struct devrt_heap_class *layout = &classes[c];
        uint32_t size = devrt_heap_class_size(c);
        uint32_t words = (DEVRT_HEAP_SLAB_BYTES / size + 31) / 32;
        uint32_t align = size & -size;
        layout->block_size = size;
        layout->bitmap_words = words;
        layout->data_offset = (uint32_t)align_up(sizeof(struct devrt_slab) + 4 * words, align);
        layout->block_count = (DEVRT_HEAP_SLAB_BYTES - layout->data_offset) / size;
        layout->reciprocal = ((1u << 24) + size / 16 - 1) / (size / 16);
    }
}

/* The slab table's and the lookup set's entries for a heap of at most MAX_BYTES. */
static void table_entries(uint64_t max_bytes, uint32_t *capacity, uint32_t *lookup_size)
{
    *capacity = (uint32_t)(max_bytes / DEVRT_HEAP_SLAB_BYTES);
    *lookup_size = 2;
    while (*lookup_size < 2 * *capacity)
        *lookup_size *= 2;
}

size_t devrt_heap_plan(devrt_module *module)
{
    devrt_device *device = module->device;
    struct devrt_module_heap *h = &module->heap;
    h->max_bytes = align_up(device->heap_max_bytes ? device->heap_max_bytes : DEFAULT_MAX_BYTES,
                            DEVRT_HEAP_SLAB_BYTES);
    size_t initial =
        device->heap_initial_bytes ? device->heap_initial_bytes : DEFAULT_INITIAL_BYTES;
    h->reserve_bytes =
        align_up(initial < h->max_bytes ? initial : h->max_bytes, DEVRT_HEAP_SLAB_BYTES);
    uint32_t capacity, lookup_size;
    table_entries(h->max_bytes, &capacity, &lookup_size);
    return capacity * sizeof(uint64_t) + lookup_size * sizeof(uint32_t);
}

int devrt_heap_attach(devrt_module *module, struct devrt_heap *heap, struct devrt_heap *device_heap,
                      void *tables)
{
    struct devrt_module_heap *h = &module->heap;
    uint32_t capacity, lookup_size;
    table_entries(h->max_bytes, &capacity, &lookup_size);
    heap->slab_capacity = capacity;
    heap->lookup_mask = lookup_size - 1;
    /* Block sizes are 32 bits in a slab's header. */
    heap->max_block = h->max_bytes - DEVRT_HEAP_LARGE_OFFSET < UINT32_MAX - 15
                          ? h->max_bytes - DEVRT_HEAP_LARGE_OFFSET
                          : UINT32_MAX - 15;
    heap->slabs = tables;
    heap->lookup = (uint32_t *)(heap->slabs + capacity);
    lay_out_classes(h->classes);
    h->device_heap = device_heap;
    h->reserve = h->reserve_bytes ? allocate_chunk(module, h->reserve_bytes) : NULL;
    if (h->reserve_bytes && !h->reserve) {
        devrt_heap_detach(module);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no device memory for a heap of %zu bytes",
                          h->reserve_bytes);
    }
    h->reserved_bytes = h->reserve_bytes;
    return DEVRT_SUCCESS;
}

void devrt_heap_detach(devrt_module *module)
{
    devrt_device *device = module->device;
    struct devrt_module_heap *h = &module->heap;
    for (size_t i = 0; i < h->chunk_count; ++i)
        device->ops->free(device, h->chunks[i], DEVRT_MEMORY_DEVICE_RAW);
    free(h->chunks);
    memset(h, 0, sizeof *h);
}

/*
 * A new reserve of at least `bytes`: as large as the heap already is, up to its maximum,
 * so that the heap doubles and a kernel that needs many slabs waits for few device
 * allocations (each one is slow, and the kernel's waves wait for it). What the old reserve
 * had left stays unused.
 */
static int grow_reserve(devrt_module *module, uint64_t bytes)
{
    struct devrt_module_heap *h = &module->heap;
    uint64_t room = h->max_bytes - h->reserved_bytes;
    if (bytes > room)
        return -1;
    uint64_t grow = h->reserved_bytes > bytes ? h->reserved_bytes : bytes;
    grow = grow < room ? grow : room;
    void *chunk = allocate_chunk(module, grow);
    if (!chunk && grow > bytes)
        chunk = allocate_chunk(module, grow = bytes);
    if (!chunk)
        return -1;
    h->reserve = chunk;
    h->reserve_bytes = grow;
    h->reserve_used = 0;
    h->reserved_bytes += grow;
    return 0;
}

/* Hand out `pages` slabs of memory; 0 when the heap is at its maximum. */
static uint64_t reserve_pages(devrt_module *module, uint32_t pages)
{
    struct devrt_module_heap *h = &module->heap;
    uint64_t bytes = (uint64_t)pages * DEVRT_HEAP_SLAB_BYTES;
    if (h->reserve_used + bytes > h->reserve_bytes && grow_reserve(module, bytes) != 0)
        return 0;
    uint64_t address = (uint64_t)(uintptr_t)h->reserve + h->reserve_used;
    h->reserve_used += bytes;
    return address;
}

/*
 * The layout of an empty slab for blocks of `block_size`, for the device to write: nothing
 * here touches device memory, since a copy is work on the GPU (a blit on HSA) that can wait
 * behind the kernel whose waves wait for this reply.
 */
static struct devrt_heap_grow_reply slab_layout(const devrt_module *module, uint64_t address,
                                                uint32_t block_size)
{
    struct devrt_heap_class layout = {block_size, 1, DEVRT_HEAP_LARGE_OFFSET, 0, 1};
    uint32_t size_class = DEVRT_HEAP_LARGE_CLASS, pages = devrt_heap_large_pages(block_size);
    if (block_size <= DEVRT_HEAP_SMALL_MAX) {
        size_class = devrt_heap_size_class(block_size);
        layout = module->heap.classes[size_class];
        pages = 1;
    }
    struct devrt_slab header = {
        .size_class = size_class,
        .block_size = layout.block_size,
        .block_count = layout.block_count,
        .free_count = layout.block_count,
        .data_offset = layout.data_offset,
        .pages = pages,
        .reciprocal = layout.reciprocal,
    };
    struct devrt_heap_grow_reply reply = {.slab = address, .bitmap_words = layout.bitmap_words};
    _Static_assert(sizeof reply.header == sizeof header, "the reply holds the whole header");
    memcpy(reply.header, &header, sizeof header);
    return reply;
}

int devrt_serve_heap_grow(struct devrt_request *request)
{
    struct devrt_module_heap *heap = &request->module->heap;
    for (uint32_t lane = 0; lane < DEVRT_RPC_MAX_LANES; ++lane) {
        if (!(request->lane_mask >> lane & 1))
            continue;
        uint32_t block_size = request->lane[lane].arg;
        bool small = block_size <= DEVRT_HEAP_SMALL_MAX;
        if (request->lane[lane].length != 0 || block_size == 0 || block_size % 16 ||
            (small && devrt_heap_class_size(devrt_heap_size_class(block_size)) != block_size) ||
            (!small && (uint64_t)block_size + DEVRT_HEAP_LARGE_OFFSET > heap->max_bytes)) {
            snprintf(request->error, sizeof request->error,
                     "heap grow request for blocks of %u bytes (message of %u bytes)", block_size,
                     request->lane[lane].length);
            return -1;
        }
        uint64_t address =
            reserve_pages(request->module, small ? 1 : devrt_heap_large_pages(block_size));
        struct devrt_heap_grow_reply reply = slab_layout(request->module, address, block_size);
        struct devrt_trace *trace = devrt_trace_of(request->module->device);
        if (DEVRT_TRACING(trace))
            devrt_trace_heap(trace, devrt_now_ns(), heap->reserved_bytes);
        _Static_assert(sizeof reply <= sizeof request->reply[lane], "a grow reply is one packet");
        memcpy(&request->reply[lane], &reply, sizeof reply);
    }
    return 0;
}

int devrt_heap_stats(devrt_module *module, struct devrt_heap_stats *stats)
{
    if (!module || !stats)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_heap_stats: missing argument");
    devrt_device *device = module->device;
    struct devrt_heap heap;
    if (device->ops->read(device, &heap, module->heap.device_heap, sizeof heap) != 0) {
        char why[512]; /* the backend's reason, out of the buffer devrt_fail writes */
        snprintf(why, sizeof why, "%s", devrt_last_error());
        return devrt_fail(DEVRT_ERROR_BACKEND, "cannot read the heap: %s", why);
    }
    pthread_mutex_lock(&device->server.lock);
    stats->bytes_reserved = module->heap.reserved_bytes;
    pthread_mutex_unlock(&device->server.lock);
    /* Each shard counts what it handed out less what was freed through it: only the sum is
       the heap's, and it wraps back to the truth however the parts did. */
    stats->bytes_in_use = 0;
    for (uint32_t shard = 0; shard < DEVRT_HEAP_SHARDS; ++shard)
        stats->bytes_in_use += heap.shard[shard].bytes_in_use;
    stats->slabs = heap.slab_count < heap.slab_capacity ? heap.slab_count : heap.slab_capacity;
    stats->failed_allocations = heap.failed_allocations;
    stats->max_bytes = module->heap.max_bytes;
    return DEVRT_SUCCESS;
}

/*
 * After a launch whose lanes were stopped (a timeout on the emulation): a lane stopped while
 * it held a class's grow lock, waiting for the host's slab, left it taken, and every later
 * allocation of that class on that shard would wait for it forever. No lane runs now, so
 * every lock is free. Blocks the stopped lanes had reserved and not yet claimed stay
 * counted as taken: the heap loses them, nothing else.
 */
int devrt_heap_reclaim_locks(devrt_module *module)
{
    devrt_device *device = module->device;
    static const uint32_t unlocked[DEVRT_HEAP_CLASS_COUNT];
    for (uint32_t shard = 0; shard < DEVRT_HEAP_SHARDS; ++shard)
        if (device->ops->write(device, module->heap.device_heap->shard[shard].grow_lock, unlocked,
                               sizeof unlocked) != 0)
            return devrt_fail(DEVRT_ERROR_BACKEND, "cannot take back the heap's locks");
    return DEVRT_SUCCESS;
}
