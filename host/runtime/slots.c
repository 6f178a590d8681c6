/*
 * The pool of exception records (slots) of a module: host-visible memory in chunks of
 * SLOTS_PER_CHUNK from the backend, the free slots, and giving a launch's slot back. Which
 * slot a launch gets, and when the state is pointed at it, is launch.c's ("Records").
 * Everything here runs under device->launches.lock.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "slots.h"

#define SLOTS_PER_CHUNK 64u

/* A zeroed slot that the claim word cannot hold; under the lock. NULL with the error set. */
struct devrt_exception_record *devrt_slot_take(devrt_module *module)
{
    for (size_t i = module->free_slot_count; i-- > 0;) {
        struct devrt_exception_record *slot = module->free_slots[i];
        if (slot == module->raised_slot)
            continue;
        module->free_slots[i] = module->free_slots[--module->free_slot_count];
        memset(slot, 0, sizeof *slot);
        return slot;
    }
    devrt_device *device = module->device;
    size_t total = (module->slot_chunk_count + 1) * SLOTS_PER_CHUNK;
    void **chunks = realloc(module->slot_chunks, (module->slot_chunk_count + 1) * sizeof *chunks);
    if (chunks)
        module->slot_chunks = chunks;
    struct devrt_exception_record **free_slots =
        chunks ? realloc(module->free_slots, total * sizeof *free_slots) : NULL;
    if (free_slots) {
        module->free_slots = free_slots;
        module->free_slot_capacity = total;
    }
    struct devrt_exception_record *chunk =
        free_slots ? device->ops->alloc(device, SLOTS_PER_CHUNK * sizeof *chunk, DEVRT_MEMORY_HOST)
                   : NULL;
    if (!chunk) {
        devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no host-visible memory for exception records");
        return NULL;
    }
    module->slot_chunks[module->slot_chunk_count++] = chunk;
    for (uint32_t i = 1; i < SLOTS_PER_CHUNK; ++i)
        module->free_slots[module->free_slot_count++] = &chunk[i];
    return &chunk[0];
}

void devrt_slot_give_back(devrt_module *module, struct devrt_exception_record *slot)
{
    module->free_slots[module->free_slot_count++] = slot;
}

void devrt_slots_free(devrt_module *module)
{
    devrt_device *device = module->device;
    for (size_t i = 0; i < module->slot_chunk_count; ++i)
        device->ops->free(device, module->slot_chunks[i], DEVRT_MEMORY_HOST);
    free(module->slot_chunks);
    free(module->free_slots);
    module->slot_chunks = NULL;
    module->free_slots = NULL;
    module->slot_chunk_count = module->free_slot_count = module->free_slot_capacity = 0;
    module->slot = module->raised_slot = NULL;
}
