/*
 * The kernels of a module that a vendor API looks up by name (CUDA, HIP), each looked up on
 * its first launch and kept. Launches come from any thread, so the cache has a lock, and
 * an entry, once made, stays where it is until the module goes: a launch keeps its pointer.
 */
#ifndef DEVRT_KERNEL_CACHE_H
#define DEVRT_KERNEL_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct devrt_kernel_entry {
    struct devrt_kernel_entry *next;
    char *name;
    void *function;  /* the vendor's handle: a CUfunction, a hipFunction_t */
    uint32_t *sizes; /* the parameters' sizes where the vendor tells them; NULL otherwise */
    size_t count;
};

struct devrt_kernel_cache {
    pthread_mutex_t lock;
    struct devrt_kernel_entry *first;
};

void devrt_kernel_cache_init(struct devrt_kernel_cache *cache);

/* Frees every entry, with its name and sizes. */
void devrt_kernel_cache_free(struct devrt_kernel_cache *cache);

/* NAME's entry, or NULL before it has one. */
struct devrt_kernel_entry *devrt_kernel_cache_find(struct devrt_kernel_cache *cache,
                                                   const char *name);

/*
 * Keeps what the vendor found for NAME: FUNCTION and SIZES (COUNT of them, or NULL), which
 * the cache then owns. Returns NAME's entry: this one, or the one another thread added
 * first (SIZES are then freed); NULL without memory (SIZES freed too).
 */
struct devrt_kernel_entry *devrt_kernel_cache_add(struct devrt_kernel_cache *cache,
                                                  const char *name, void *function, uint32_t *sizes,
                                                  size_t count);

#endif
