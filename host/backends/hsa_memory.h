/*
 * The HSA backend's decisions about memory, as pure functions of what the HSA runtime
 * reported, so that they are tested without a GPU (tests/unit/hsa_memory_test.c). The backend
 * asks the runtime and acts on the answer.
 */
#ifndef DEVRT_HSA_MEMORY_H
#define DEVRT_HSA_MEMORY_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the host may reach a range of device addresses. */
enum devrt_hsa_access {
    DEVRT_HSA_ACCESS_NONE,   /* no allocation of the runtime holds the whole range */
    DEVRT_HSA_ACCESS_HOST,   /* fine-grained or locked host memory: the host's own loads */
    DEVRT_HSA_ACCESS_DEVICE, /* GPU memory, or of unknown grain: a copy by the runtime */
};

/*
 * For SIZE bytes at ADDRESS, given what hsa_amd_pointer_info said of ADDRESS: whether the
 * host may touch them, and how. For DEVRT_HSA_ACCESS_HOST, *host is the host's address of
 * the first byte.
 */
enum devrt_hsa_access devrt_hsa_access(const hsa_amd_pointer_info_t *info, uintptr_t address,
                                       size_t size, void **host);

/* A memory pool of an agent, as hsa_amd_memory_pool_get_info describes it. */
struct devrt_hsa_pool {
    uint64_t handle;
    hsa_amd_segment_t segment;
    uint32_t flags; /* hsa_amd_memory_pool_global_flag_t, for a global pool */
    size_t size;
    bool alloc_allowed; /* HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED */
};

/* The pools the backend allocates from, and what it reports of them. */
struct devrt_hsa_pools {
    uint64_t coarse;  /* the GPU's own memory: state blocks, port state words, heaps */
    uint64_t fine;    /* the CPU's fine-grained memory: mailboxes, buffers, user memory */
    uint64_t kernarg; /* kernel arguments */
    uint64_t memory_bytes;
    uint32_t group_segment_limit; /* LDS bytes per workgroup; 0 if the runtime did not say */
};

/*
 * Choose the pools from the GPU agent's and the CPU agent's. Returns 0, or -1 with the
 * reason in WHY when one is missing. The fine-grained pool must be the CPU's: the host
 * polls and writes the mailboxes, and the GPU's fine-grained memory (VRAM) is not for the
 * CPU to touch over PCIe.
 */
int devrt_hsa_choose_pools(const struct devrt_hsa_pool *gpu, size_t gpu_count,
                           const struct devrt_hsa_pool *cpu, size_t cpu_count,
                           struct devrt_hsa_pools *out, char *why, size_t why_size);

/*
 * What a system event is to devrt: for a memory fault on one of the COUNT GPUs devrt has
 * open (GPUS, agent handles), the index of that GPU, and the event is devrt's to handle
 * (the runtime then does not abort the process). Any other event, or a fault on a GPU that
 * devrt did not open, is not: -1, and the runtime's default (for a fault, abort) stands.
 */
int devrt_hsa_fault_owner(const hsa_amd_event_t *event, const uint64_t *gpus, size_t count);

/* The reasons of a fault's mask (hsa_amd_memory_fault_reason_t) as words, into OUT. */
void devrt_hsa_fault_reasons(uint32_t mask, char *out, size_t size);

#endif
