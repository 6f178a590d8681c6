/*
 * The dispatch of an amdgcn kernel as a function of the code object and the launch: the AQL
 * packet's fields and the kernarg segment's bytes, computed without a GPU. The HSA backend
 * copies them into a packet and a kernarg buffer; devrt-run --explain prints them; the tests
 * compare them with llvm-readelf's reading of the same code object.
 */
#ifndef DEVRT_AMDGPU_DISPATCH_H
#define DEVRT_AMDGPU_DISPATCH_H

#include <stdint.h>

#include <devrt/host.h>

#include "amdgpu_metadata.h"

/*
 * Scratch bytes per workitem given to a kernel whose call stack has no bound known at compile
 * time (.uses_dynamic_stack), beyond its fixed private segment: the default of LLVM's
 * offload plugin (LIBOMPTARGET_STACK_SIZE), so a kernel that runs under OpenMP offload gets
 * the same stack here.
 */
#define DEVRT_AMDGPU_DYNAMIC_STACK_BYTES 1024u

/* The GPU a dispatch is made for. */
struct devrt_amdgpu_agent {
    /* Its ISA as a target ID, with or without the triple: gfx1100, gfx90a:sramecc+:xnack-,
       amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-. A feature it leaves out matches either. */
    const char *isa;
    /* LDS bytes per workgroup; 0: the processor's (devrt_amdgpu_processor_lds) */
    uint32_t group_segment_limit;
    /* The address of the hsa_queue_t the packet goes to, for kernels that list
       hidden_queue_ptr; 0 where there is no queue (devrt-run --explain). */
    uint64_t queue_address;
};

/* A hidden argument devrt fills with zero, and why (NULL for the ones it computes). */
const char *devrt_amdgpu_hidden_zero_reason(const char *value_kind);

struct devrt_amdgpu_dispatch {
    const struct devrt_amdgpu_kernel *kernel; /* in the metadata the call was given */
    uint16_t dimensions;                      /* 1 to 3: the packet's setup field */
    uint16_t workgroup_size[3];
    uint32_t grid_size[3]; /* workitems, as the AQL packet counts */
    uint32_t private_segment_size;
    uint32_t group_segment_size;
    uint32_t kernarg_size;
    uint32_t kernarg_align;
    unsigned char *kernarg; /* kernarg_size bytes (at least 1 allocated), owned */
};

/* A launch the code object allows on the agent: everything the dispatch packs, checked. */
struct devrt_amdgpu_launch {
    const struct devrt_amdgpu_kernel *kernel; /* in the metadata the check was given */
    struct devrt_launch_config config;
    struct devrt_amdgpu_agent agent;
    uint32_t private_segment_size; /* scratch per workitem, the dynamic stack included */
};

/*
 * devrt_amdgpu_launch_check checks the launch of KERNEL from the code object METADATA
 * describes (PATH names it in messages) on AGENT, with CONFIG's geometry (workgroups and
 * workitems per workgroup) and ARGS, into *LAUNCH; devrt_amdgpu_dispatch_pack packs a
 * checked launch with the same ARGS, failing only for memory; devrt_amdgpu_dispatch_make
 * does both. The check fails, with the reason in devrt_last_error(), when:
 *   DEVRT_ERROR_IMAGE          the image is for another GPU ("image is gfx90a:xnack-, GPU is
 *                              gfx1100"), of a code object version other than 4 to 6, or its
 *                              descriptor disagrees with its metadata;
 *   DEVRT_ERROR_NO_KERNEL      it has no such kernel;
 *   DEVRT_ERROR_ARGUMENTS      ARGS do not fit the kernel's parameters;
 *   DEVRT_ERROR_LAUNCH         the geometry exceeds the kernel's or the GPU's limits, the
 *                              kernel needs a hidden argument devrt does not provide (its
 *                              code object holds ockl's hostcall or malloc), or it uses
 *                              dynamic LDS;
 *   DEVRT_ERROR_INVALID_ARGUMENT  AGENT's ISA names no processor devrt knows;
 *   DEVRT_ERROR_OUT_OF_MEMORY.
 * On success *DISPATCH holds the result; release it with devrt_amdgpu_dispatch_free.
 */
int devrt_amdgpu_launch_check(const struct devrt_amdgpu_metadata *metadata, const char *path,
                              const struct devrt_amdgpu_agent *agent, const char *kernel,
                              const struct devrt_launch_config *config,
                              const struct devrt_arg *args, size_t arg_count,
                              struct devrt_amdgpu_launch *launch);
/*
 * The launch devrt_amdgpu_launch_check passed before, made again without its checks for an
 * AGENT that differs from the checked one in its queue_address alone (a backend checks a
 * launch when it is asked for, and packs it when its queue takes it).
 */
int devrt_amdgpu_launch_again(const struct devrt_amdgpu_metadata *metadata, const char *path,
                              const struct devrt_amdgpu_agent *agent, const char *kernel,
                              const struct devrt_launch_config *config,
                              struct devrt_amdgpu_launch *launch);
int devrt_amdgpu_dispatch_pack(const struct devrt_amdgpu_launch *launch,
                               const struct devrt_arg *args,
                               struct devrt_amdgpu_dispatch *dispatch);
int devrt_amdgpu_dispatch_make(const struct devrt_amdgpu_metadata *metadata, const char *path,
                               const struct devrt_amdgpu_agent *agent, const char *kernel,
                               const struct devrt_launch_config *config,
                               const struct devrt_arg *args, size_t arg_count,
                               struct devrt_amdgpu_dispatch *dispatch);
void devrt_amdgpu_dispatch_free(struct devrt_amdgpu_dispatch *dispatch);

/* DEVRT_SUCCESS when an image of METADATA runs on a GPU of ISA, else DEVRT_ERROR_IMAGE
   naming both. */
int devrt_amdgpu_check_target(const struct devrt_amdgpu_metadata *metadata, const char *path,
                              const char *isa);

#endif
