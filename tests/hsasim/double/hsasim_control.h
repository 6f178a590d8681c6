/*
 * What a test asks of the HSA runtime double beyond the HSA API: faults to inject. A test
 * finds these functions with dlsym in the library that $DEVRT_TEST_HSA_LIBRARY names, or
 * sets $DEVRT_HSASIM_INJECT to "KIND:N" ("memory:1": the first dispatch faults).
 */
#ifndef DEVRT_HSASIM_CONTROL_H
#define DEVRT_HSASIM_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

enum devrt_hsasim_fault {
    DEVRT_HSASIM_MEMORY_FAULT, /* a dispatch faults the GPU's memory instead of running */
    DEVRT_HSASIM_QUEUE_ERROR,  /* a dispatch fails its queue (an illegal instruction) */
    DEVRT_HSASIM_LOADER,       /* loading a code object is refused */
    DEVRT_HSASIM_ALLOCATION,   /* a pool allocation fails: out of resources */
    DEVRT_HSASIM_ACCESS,       /* a grant of access fails */
    DEVRT_HSASIM_COPY,         /* an asynchronous copy is refused: out of resources */
    DEVRT_HSASIM_FAULT_KINDS
};

/* The N-th event of KIND from now on (1: the next) fails; 0 cancels. */
typedef void devrt_hsasim_inject_fn(enum devrt_hsasim_fault kind, uint64_t n);
#define DEVRT_HSASIM_INJECT "devrt_hsasim_inject"

/* Interrupts that device code raises on signals are dropped (true) or delivered (false). */
typedef void devrt_hsasim_drop_interrupts_fn(bool drop);
#define DEVRT_HSASIM_DROP_INTERRUPTS "devrt_hsasim_drop_interrupts"

/* A memory fault on the GPU by another user of it: no dispatch of devrt's caused it. */
typedef void devrt_hsasim_foreign_fault_fn(void);
#define DEVRT_HSASIM_FOREIGN_FAULT "devrt_hsasim_foreign_fault"

/* A memory fault on GPU (0 or 1) at ADDRESS, now, as a kernel that ran there would make it. */
typedef void devrt_hsasim_fault_at_fn(unsigned gpu, uint64_t address);
#define DEVRT_HSASIM_FAULT_AT "devrt_hsasim_fault_at"

/* A count by name: "queues" live (created, not destroyed; inactive ones count),
   "barrier_holds" (packets a barrier bit held behind a running dispatch),
   "barriers" (barrier-AND packets completed), "running" (dispatches whose lanes run),
   "dispatches" run to their end, "grants" of access, "allocations" made,
   "node1_allocations" of them in the pools of NUMA node 1's CPU ($DEVRT_HSASIM_NEAREST_CPU),
   "kernarg_allocations" of them in a kernel argument pool. */
typedef uint64_t devrt_hsasim_count_fn(const char *what);
#define DEVRT_HSASIM_COUNT "devrt_hsasim_count"

#endif
