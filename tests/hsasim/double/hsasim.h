/*
 * The HSA runtime double's internals (tests/hsasim/README.md): a shared library that stands
 * in for libhsa-runtime64.so.1 behind the HSA backend's library override. It models the
 * part of the HSA and AMD-extension API devrt calls, with ROCr's observable behaviour, and
 * runs each dispatch's kernel from the emulation build of the same sources. Every rule it
 * models names, where it is written, the ROCr, amdkfd or clr function it follows.
 */
#ifndef DEVRT_HSASIM_H
#define DEVRT_HSASIM_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hsasim_control.h"

/* The agents, as ROCr reports discrete GPUs and the CPUs of their machine. */
struct hsasim_agent {
    hsa_device_type_t type;
    const char *name;
    char isa[64];        /* the GPU's: amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack- */
    uint32_t mach;       /* EF_AMDGPU_MACH of the GPU's processor */
    bool sramecc, xnack; /* the GPU's target features, as the kernel driver set them */
    uint32_t wave_size;
    unsigned gpu; /* a GPU's index among the GPUs */
    bool evicted; /* atomic: a memory fault evicted the process's queues on the GPU */
};
/* $DEVRT_HSASIM_GPUS (1 or 2) GPUs of one kind, listed after the CPUs. */
#define HSASIM_MAX_GPUS 2
extern struct hsasim_agent hsasim_cpu, hsasim_cpu1, hsasim_gpus[HSASIM_MAX_GPUS];
extern unsigned hsasim_gpu_count;
/* Whether AGENT is one of the GPUs listed. */
bool hsasim_is_gpu(const struct hsasim_agent *agent);

/* The agent a handle names, or NULL. */
struct hsasim_agent *hsasim_agent(hsa_agent_t agent);

/* A memory pool: an agent's, with ROCr's segment and flags. */
struct hsasim_pool {
    struct hsasim_agent *owner;
    hsa_amd_segment_t segment;
    uint32_t flags; /* hsa_amd_memory_pool_global_flag_t */
    size_t size;
    bool alloc_allowed;
    bool since_rocm6; /* not listed by ROCm 5's runtime ($DEVRT_HSASIM_PLANT=rocm5_pools) */
};

/* The pool a handle names, or NULL. */
const struct hsasim_pool *hsasim_pool(hsa_amd_memory_pool_t pool);

/* A block of memory the double knows: an allocation from a pool, or a loaded code object. */
struct hsasim_block {
    struct hsasim_block *next;
    char *base;
    size_t size;
    const struct hsasim_pool *pool; /* NULL: a code object's segment (the GPU's memory) */
    struct hsasim_agent *owner;     /* the pool's agent, or the GPU a segment was loaded for */
    unsigned gpu_access;            /* bit i: GPU i may reach it (its own, or granted) */
    size_t skew; /* bytes from the memory allocated to base ($DEVRT_HSASIM_PLANT=kernarg_skew) */
};

/* The block holding [address, address + size), or NULL; under hsasim_lock. */
struct hsasim_block *hsasim_find_block(const void *address, size_t size);
/* Add or remove a code object's segment, which pointer info reports as GPU's memory. */
int hsasim_add_segment(void *base, size_t size, struct hsasim_agent *gpu);
void hsasim_remove_segment(void *base);

/* A signal. Its handle is its address, whose first bytes are laid out as amd_signal_t's. */
struct hsasim_signal {
    int64_t kind;            /* amd_signal_t: AMD_SIGNAL_KIND_USER */
    int64_t value;           /* amd_signal_t: at byte 8 */
    uint64_t *event_mailbox; /* amd_signal_t: at 16; NULL while interrupts are dropped */
    uint32_t event_id;       /* amd_signal_t: at 24; its mailbox is a slot of the event page */
};

struct hsasim_signal *hsasim_signal(hsa_signal_t signal);
/* Wake every waiter of SIGNAL: the interrupt a store by an agent raises. */
void hsasim_signal_notify(struct hsasim_signal *signal);
void hsasim_signal_add(struct hsasim_signal *signal, int64_t delta);
/* Interrupts of device stores are dropped (true) or delivered again. */
void hsasim_signals_drop_interrupts(bool drop);

/* Which runtime this is: hsa_init after the last hsa_shut_down starts a new one. */
uint64_t hsasim_generation(void);

/* Whether GPU's queues are evicted: after a memory fault, as amdkfd does. */
bool hsasim_gpu_evicted(const struct hsasim_agent *gpu);

/* The n-th event of KIND from now (devrt_hsasim_inject) is this one: consumes it. */
bool hsasim_injected(enum devrt_hsasim_fault kind);

/* Whether $DEVRT_HSASIM_PLANT names PLANT: a control's planted defect or older runtime. */
bool hsasim_planted(const char *plant);

/*
 * GPU faulted at ADDRESS: amdkfd evicts every queue of the process on that GPU, and ROCr
 * calls the system event handlers, aborting the process when none claims the fault.
 */
void hsasim_memory_fault(struct hsasim_agent *gpu, uint64_t address);
/* Stops the lanes of every dispatch running on GPU: its evicted queues' waves are preempted. */
void hsasim_preempt_queues(const struct hsasim_agent *gpu);
/* The waves of the dispatches running on GPU, which hold its wave slots (dispatch.c). */
unsigned hsasim_running_waves(const struct hsasim_agent *gpu);

/* A kernel of a loaded code object: what its kernel object (the descriptor's address) is. */
struct hsasim_kernel {
    unsigned char descriptor[64]; /* the kernel descriptor, first: the kernel object's bytes */
    struct hsasim_executable *executable;
    char name[256];
    void (*entry)(void); /* the emulation image's kernel */
    void *caller;        /* its DEVRT_KERNELn caller, or NULL */
    uint32_t kernarg_size;
    uint32_t kernarg_align; /* the metadata's .kernarg_segment_align */
    uint32_t group_segment_size, private_segment_size;
    /* From the code object's metadata: each argument's place, size and kind. */
    uint32_t arg_count;
    struct hsasim_arg {
        uint32_t offset, size;
        char kind[40]; /* .value_kind */
    } arg[64];
};

/* The kernel a kernel object names, or NULL; the executable stays loaded while it runs. */
struct hsasim_kernel *hsasim_kernel(uint64_t kernel_object);
/* The dispatch of KERNEL ended: its executable may be destroyed again. */
void hsasim_kernel_done(struct hsasim_kernel *kernel);
/* The emulation image's entry (__devrt_emu_enter) for KERNEL. */
void *hsasim_kernel_enter(const struct hsasim_kernel *kernel);
/* Reads every argument's metadata of the code object's kernels; 0 or -1 with WHY. */
int hsasim_read_metadata(const void *image, size_t size, struct hsasim_kernel *kernels,
                         size_t count, char *why, size_t why_size);

/* Runs one dispatch packet's kernel on GPU; returns HSA_STATUS_SUCCESS or the queue's error. */
hsa_status_t hsasim_dispatch(const hsa_kernel_dispatch_packet_t *packet, const bool *cancel,
                             const struct hsasim_agent *gpu);

/* What the double counted, for devrt_hsasim_count. */
struct hsasim_counts {
    uint64_t dispatches;          /* kernels run to their end */
    uint64_t grants;              /* calls of hsa_amd_agents_allow_access */
    uint64_t allocations;         /* calls of hsa_amd_memory_pool_allocate that succeeded */
    uint64_t node1_allocations;   /* of them, in the pools of node 1's CPU */
    uint64_t kernarg_allocations; /* of them, in a kernel argument pool */
    uint64_t reserved, taken;     /* packet slots reserved by producers, taken by processors */
    uint64_t queues;              /* queues created and not destroyed (an inactive one counts) */
    uint64_t barrier_holds;       /* packets whose barrier bit held them behind a running one */
    uint64_t barriers;            /* barrier-AND packets completed */
    uint64_t running;             /* dispatches started whose lanes have not all ended */
    uint64_t blit_waits;          /* copies run as kernels that waited for a wave slot */
};
extern struct hsasim_counts hsasim_counts;

/* The double's one lock, over its lists of blocks, executables and handlers. */
extern pthread_mutex_t hsasim_lock;

/* Prints a line about what the double saw that ROCr would not let pass. */
void hsasim_say(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
