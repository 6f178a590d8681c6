/*
 * Memory: pool allocations, grants of access, fills, pointer information and the copy
 * engine. The GPU's memory is host memory here, so that the emulated kernels reach it; what
 * the double checks is that devrt asks for it as ROCr wants.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "hsasim.h"

static struct hsasim_block *blocks; /* under hsasim_lock */

/* Small blocks are poisoned, as GPU memory holds whatever it held; large ones are pages. */
#define MAPPED_FROM (64u << 10)
#define POISON 0xa5

struct hsasim_block *hsasim_find_block(const void *address, size_t size)
{
    uintptr_t at = (uintptr_t)address;
    for (struct hsasim_block *b = blocks; b; b = b->next) {
        uintptr_t base = (uintptr_t)b->base;
        if (at >= base && at - base <= b->size && size <= b->size - (at - base))
            return b;
    }
    return NULL;
}

static void add_block(struct hsasim_block *block)
{
    pthread_mutex_lock(&hsasim_lock);
    block->next = blocks;
    blocks = block;
    pthread_mutex_unlock(&hsasim_lock);
}

/* Takes the block at BASE off the list; returns it, or NULL. Under hsasim_lock. */
static struct hsasim_block *take_block(const void *base)
{
    for (struct hsasim_block **p = &blocks; *p; p = &(*p)->next)
        if ((*p)->base == base) {
            struct hsasim_block *b = *p;
            *p = b->next;
            return b;
        }
    return NULL;
}

int hsasim_add_segment(void *base, size_t size, struct hsasim_agent *gpu)
{
    struct hsasim_block *b = calloc(1, sizeof *b);
    if (!b)
        return -1;
    *b = (struct hsasim_block){.base = base, .size = size, .owner = gpu, .gpu_access = ~0u};
    add_block(b);
    return 0;
}

void hsasim_remove_segment(void *base)
{
    pthread_mutex_lock(&hsasim_lock);
    free(take_block(base));
    pthread_mutex_unlock(&hsasim_lock);
}

hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t handle, size_t size, uint32_t flags,
                                          void **ptr)
{
    (void)flags;
    const struct hsasim_pool *pool = hsasim_pool(handle);
    if (!pool || !ptr)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (!pool->alloc_allowed)
        return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    if (size == 0 || size > pool->size)
        return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    if (hsasim_injected(DEVRT_HSASIM_ALLOCATION))
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    /*
     * The control of the kernel argument alignment check ($DEVRT_HSASIM_PLANT=kernarg_skew):
     * the kernel argument pool hands out memory 8 bytes past its granule, which no kernel's
     * arguments may start at.
     */
    size_t skew =
        hsasim_planted("kernarg_skew") && pool->flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT
            ? 8
            : 0;
    /* ROCr rounds every allocation up to the pool's granule (MemoryRegion::Allocate). */
    size_t rounded = (size + skew + 4095) / 4096 * 4096;
    char *base;
    if (rounded >= MAPPED_FROM) {
        base = mmap(NULL, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    } else {
        base = aligned_alloc(4096, rounded);
        if (!base)
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        memset(base, POISON, rounded);
    }
    struct hsasim_block *b = calloc(1, sizeof *b);
    if (!b) {
        rounded >= MAPPED_FROM ? (void)munmap(base, rounded) : free(base);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    /* The size asked for, not the granule: fills and copies past it are the caller's bug. */
    base += skew;
    *b = (struct hsasim_block){
        .base = base,
        .skew = skew,
        .size = size,
        .pool = pool,
        .owner = pool->owner,
        .gpu_access = hsasim_is_gpu(pool->owner) ? 1u << pool->owner->gpu : 0,
    };
    add_block(b);
    __atomic_add_fetch(&hsasim_counts.allocations, 1u, __ATOMIC_RELAXED);
    if (pool->owner == &hsasim_cpu1)
        __atomic_add_fetch(&hsasim_counts.node1_allocations, 1u, __ATOMIC_RELAXED);
    if (pool->flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)
        __atomic_add_fetch(&hsasim_counts.kernarg_allocations, 1u, __ATOMIC_RELAXED);
    *ptr = base;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_free(void *ptr)
{
    pthread_mutex_lock(&hsasim_lock);
    struct hsasim_block *b = take_block(ptr);
    pthread_mutex_unlock(&hsasim_lock);
    if (!b || !b->pool) {
        /* ROCr ignores a pointer it did not allocate; devrt never frees one. */
        hsasim_say("hsa_amd_memory_pool_free(%p): not an allocation of a pool", ptr);
        if (b)
            add_block(b);
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    size_t rounded = (b->size + b->skew + 4095) / 4096 * 4096;
    char *allocated = b->base - b->skew;
    rounded >= MAPPED_FROM ? (void)munmap(allocated, rounded) : free(allocated);
    free(b);
    return HSA_STATUS_SUCCESS;
}

/*
 * ROCr's hsa_amd_agents_allow_access: the pointer must be the start of a pool's allocation
 * (Runtime::AllowAccess looks the allocation up by its base), the agents known.
 */
hsa_status_t hsa_amd_agents_allow_access(uint32_t count, const hsa_agent_t *agents,
                                         const uint32_t *flags, const void *ptr)
{
    (void)flags;
    if (!count || !agents || !ptr)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < count; ++i)
        if (!hsasim_agent(agents[i]))
            return HSA_STATUS_ERROR_INVALID_AGENT;
    if (hsasim_injected(DEVRT_HSASIM_ACCESS))
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    pthread_mutex_lock(&hsasim_lock);
    struct hsasim_block *b = hsasim_find_block(ptr, 1);
    hsa_status_t status =
        b && b->base == ptr && b->pool ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (status == HSA_STATUS_SUCCESS)
        for (uint32_t i = 0; i < count; ++i)
            if (hsasim_is_gpu(hsasim_agent(agents[i])))
                b->gpu_access |= 1u << hsasim_agent(agents[i])->gpu;
    __atomic_add_fetch(&hsasim_counts.grants, 1u, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&hsasim_lock);
    return status;
}

/* ROCr's FillMemory: COUNT words from PTR, all of them inside one allocation. */
hsa_status_t hsa_amd_memory_fill(void *ptr, uint32_t value, size_t count)
{
    if (!ptr || ((uintptr_t)ptr & 3))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&hsasim_lock);
    struct hsasim_block *b = count <= SIZE_MAX / 4 ? hsasim_find_block(ptr, count * 4) : NULL;
    pthread_mutex_unlock(&hsasim_lock);
    if (!b) {
        hsasim_say("hsa_amd_memory_fill(%p, %zu words): past the end of its allocation", ptr,
                   count);
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    /*
     * ROCr's fill is a blit kernel on the GPU's own queue, waited for with no timeout
     * (GpuAgent::DmaFill, BlitKernel::SubmitLinearFillCommand): on an evicted GPU it never
     * returns. The double ends the process there instead, saying so, so that a test fails at
     * once rather than hanging.
     */
    /* The fill runs on the GPU that owns the memory, or the first for host memory. */
    if (hsasim_gpu_evicted(hsasim_is_gpu(b->owner) ? b->owner : &hsasim_gpus[0])) {
        hsasim_say("hsa_amd_memory_fill(%p, %zu words) on a GPU whose queues a memory fault "
                   "evicted: ROCr's blit kernel would never run, and the fill never return",
                   ptr, count);
        abort();
    }
    for (size_t i = 0; i < count; ++i)
        memcpy((char *)ptr + 4 * i, &value, 4);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_pointer_info(const void *ptr, hsa_amd_pointer_info_t *info,
                                  void *(*alloc)(size_t), uint32_t *accessible_count,
                                  hsa_agent_t **accessible)
{
    (void)alloc;
    if (!info || info->size < offsetof(hsa_amd_pointer_info_t, agentOwner))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (accessible_count || accessible)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT; /* devrt never asks */
    uint32_t size = info->size < sizeof *info ? info->size : (uint32_t)sizeof *info;
    hsa_amd_pointer_info_t out = {.size = size, .type = HSA_EXT_POINTER_TYPE_UNKNOWN};
    pthread_mutex_lock(&hsasim_lock);
    const struct hsasim_block *b = hsasim_find_block(ptr, 1);
    if (b) {
        const struct hsasim_agent *owner = b->owner;
        out.type = HSA_EXT_POINTER_TYPE_HSA;
        out.agentBaseAddress = b->base;
        out.hostBaseAddress = b->base;
        out.sizeInBytes = b->size;
        out.agentOwner = (hsa_agent_t){(uint64_t)(uintptr_t)owner};
        out.global_flags =
            b->pool ? b->pool->flags : HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
    }
    pthread_mutex_unlock(&hsasim_lock);
    memcpy(info, &out, size);
    return HSA_STATUS_SUCCESS;
}

/*
 * The copy engine: one thread runs the copies in order, as an SDMA queue does, and
 * decrements each one's completion signal. On an evicted GPU it stops, as its queues do.
 * With HSA_ENABLE_SDMA=0 ROCr copies with blit kernels on a queue of its own instead
 * (GpuAgent::InitDma; an APU always does): a copy then needs a wave slot of the GPU, and
 * waits while the process's dispatches hold every one ($DEVRT_HSASIM_WAVE_SLOTS, 4096 if
 * unset), as a blit dispatch waits behind kernels that fill the GPU.
 */
struct copy {
    struct copy *next;
    void *dst;
    const void *src;
    size_t size;
    struct hsasim_signal *done;
    const struct hsasim_agent *gpu; /* whose copy engine runs it */
    uint64_t generation;            /* the runtime's that posted it */
};

/* A copy engine per GPU, as each has SDMA engines of its own: one GPU's eviction stops only its. */
static pthread_mutex_t copy_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t copy_posted = PTHREAD_COND_INITIALIZER;
static struct copy *copies[HSASIM_MAX_GPUS], **copies_end[HSASIM_MAX_GPUS];
static pthread_once_t copy_once = PTHREAD_ONCE_INIT;

/*
 * The copy engine reads what the GPU may read: a device string is read in whole chunks,
 * past its end into the rest of the code object's segment, which a sanitizer of the
 * emulation image would take for an overflow of the string.
 */
__attribute__((no_sanitize("address"))) static void engine_copy(void *dst, const void *src,
                                                                size_t size)
{
    volatile unsigned char *to = dst;
    const volatile unsigned char *from = src;
    for (size_t i = 0; i < size; ++i)
        to[i] = from[i];
}

/* Whether a copy on GPU waits for a wave slot: it runs as a kernel, and none is free. */
static bool no_wave_slot(const struct hsasim_agent *gpu)
{
    const char *sdma = getenv("HSA_ENABLE_SDMA");
    if (!sdma || strcmp(sdma, "0"))
        return false;
    const char *slots = getenv("DEVRT_HSASIM_WAVE_SLOTS");
    unsigned limit = slots ? (unsigned)strtoul(slots, NULL, 10) : 4096u;
    return hsasim_running_waves(gpu) >= limit;
}

static void *copy_engine(void *arg)
{
    unsigned g = ((const struct hsasim_agent *)arg)->gpu;
    for (;;) {
        pthread_mutex_lock(&copy_lock);
        while (!copies[g])
            pthread_cond_wait(&copy_posted, &copy_lock);
        struct copy *c = copies[g];
        copies[g] = c->next;
        if (!copies[g])
            copies_end[g] = &copies[g];
        pthread_mutex_unlock(&copy_lock);
        /* Never restored: amdkfd restores only queues it evicted for memory. A copy of a
           runtime shut down since is dropped with its queues. */
        struct timespec tick = {0, 1000000};
        bool counted = false;
        while (c->generation == hsasim_generation() &&
               (hsasim_gpu_evicted(c->gpu) || no_wave_slot(c->gpu))) {
            if (!counted && !hsasim_gpu_evicted(c->gpu))
                __atomic_add_fetch(&hsasim_counts.blit_waits, 1u, __ATOMIC_RELEASE);
            counted = true;
            nanosleep(&tick, NULL);
        }
        if (c->generation == hsasim_generation()) {
            engine_copy(c->dst, c->src, c->size);
            /* The decrement releases the copy's writes to whoever acquires the signal. */
            hsasim_signal_add(c->done, -1);
        }
        free(c);
    }
    return NULL;
}

static void start_copy_engines(void)
{
    for (unsigned g = 0; g < HSASIM_MAX_GPUS; ++g) {
        copies_end[g] = &copies[g];
        pthread_t thread;
        if (pthread_create(&thread, NULL, copy_engine, &hsasim_gpus[g]) == 0)
            pthread_detach(thread);
    }
}

/* ROCr's hsa_amd_memory_async_copy: both ranges in allocations the runtime knows. */
hsa_status_t hsa_amd_memory_async_copy(void *dst, hsa_agent_t dst_agent, const void *src,
                                       hsa_agent_t src_agent, size_t size, uint32_t num_dep_signals,
                                       const hsa_signal_t *dep_signals, hsa_signal_t completion)
{
    (void)dep_signals;
    struct hsasim_signal *done = hsasim_signal(completion);
    if (!dst || !src || !done || num_dep_signals || !hsasim_agent(dst_agent) ||
        !hsasim_agent(src_agent))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&hsasim_lock);
    bool known = hsasim_find_block(dst, size) && hsasim_find_block(src, size);
    pthread_mutex_unlock(&hsasim_lock);
    if (!known) {
        hsasim_say("hsa_amd_memory_async_copy(%p, %p, %zu): a range outside every allocation", dst,
                   src, size);
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    struct copy *c = hsasim_injected(DEVRT_HSASIM_COPY) ? NULL : malloc(sizeof *c);
    if (!c)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    /* The engine of the GPU the copy goes to or comes from. */
    struct hsasim_agent *to = hsasim_agent(dst_agent), *from = hsasim_agent(src_agent);
    const struct hsasim_agent *gpu = hsasim_is_gpu(to)     ? to
                                     : hsasim_is_gpu(from) ? from
                                                           : &hsasim_gpus[0];
    *c = (struct copy){.dst = dst,
                       .src = src,
                       .size = size,
                       .done = done,
                       .gpu = gpu,
                       .generation = hsasim_generation()};
    pthread_once(&copy_once, start_copy_engines);
    pthread_mutex_lock(&copy_lock);
    *copies_end[gpu->gpu] = c;
    copies_end[gpu->gpu] = &c->next;
    pthread_cond_broadcast(&copy_posted);
    pthread_mutex_unlock(&copy_lock);
    return HSA_STATUS_SUCCESS;
}
