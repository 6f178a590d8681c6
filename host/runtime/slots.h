/*
 * The pool of a module's exception records (slots.c), under device->launches.lock: what
 * launch.c takes a launch's record from and gives it back to.
 */
#ifndef DEVRT_SLOTS_H
#define DEVRT_SLOTS_H

#include "runtime.h"

/* A zeroed slot that the claim word cannot hold. NULL with the error set. */
struct devrt_exception_record *devrt_slot_take(devrt_module *module);
/* SLOT is free for another launch of MODULE. */
void devrt_slot_give_back(devrt_module *module, struct devrt_exception_record *slot);
/* The module's records go back to the backend, its pool is empty. */
void devrt_slots_free(devrt_module *module);

#endif
