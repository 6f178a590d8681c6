/* The kernels a module has launched, by name (kernel_cache.h). */
#include "kernel_cache.h"

#include <stdlib.h>
#include <string.h>

void devrt_kernel_cache_init(struct devrt_kernel_cache *cache)
{
    pthread_mutex_init(&cache->lock, NULL);
    cache->first = NULL;
}

void devrt_kernel_cache_free(struct devrt_kernel_cache *cache)
{
    while (cache->first) {
        struct devrt_kernel_entry *entry = cache->first;
        cache->first = entry->next;
        free(entry->name);
        free(entry->sizes);
        free(entry);
    }
    pthread_mutex_destroy(&cache->lock);
}

/* Under the cache's lock. */
static struct devrt_kernel_entry *find_locked(struct devrt_kernel_cache *cache, const char *name)
{
    struct devrt_kernel_entry *entry = cache->first;
    while (entry && strcmp(entry->name, name))
        entry = entry->next;
    return entry;
}

struct devrt_kernel_entry *devrt_kernel_cache_find(struct devrt_kernel_cache *cache,
                                                   const char *name)
{
    pthread_mutex_lock(&cache->lock);
    struct devrt_kernel_entry *entry = find_locked(cache, name);
    pthread_mutex_unlock(&cache->lock);
    return entry;
}

struct devrt_kernel_entry *devrt_kernel_cache_add(struct devrt_kernel_cache *cache,
                                                  const char *name, void *function, uint32_t *sizes,
                                                  size_t count)
{
    pthread_mutex_lock(&cache->lock);
    struct devrt_kernel_entry *entry = find_locked(cache, name);
    if (entry) {
        free(sizes);
    } else if ((entry = malloc(sizeof *entry)) && (entry->name = strdup(name))) {
        entry->next = cache->first;
        entry->function = function;
        entry->sizes = sizes;
        entry->count = count;
        cache->first = entry;
    } else {
        free(entry);
        free(sizes);
        entry = NULL;
    }
    pthread_mutex_unlock(&cache->lock);
    return entry;
}
