/*
 * The HSA backend's decisions about memory, as pure functions of what the HSA runtime
 * reported, so that they are tested without a GPU (tests/unit/hsa_memory_test.c). hsa.c
 * asks the runtime and acts on the answer.
 */
#ifndef DEVRT_HSA_MEMORY_H
#define DEVRT_HSA_MEMORY_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
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

#endif
