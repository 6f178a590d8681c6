/*
 * What an amdgcn code object says about its kernels: the .amdhsa.kernels map of its
 * NT_AMDGPU_METADATA note (code object versions 3 to 6; LLVM's AMDGPUUsage documents the
 * keys). Read from the file's bytes, without a GPU, so that the launch of a kernel (its
 * kernarg layout, hidden arguments, limits) is a function of the code object that can be
 * checked anywhere.
 */
#ifndef DEVRT_AMDGPU_METADATA_H
#define DEVRT_AMDGPU_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One entry of a kernel's .args, in kernarg segment order. */
struct devrt_amdgpu_arg {
    uint32_t offset; /* in the kernarg segment */
    uint32_t size;
    char *value_kind; /* by_value, global_buffer, hidden_block_count_x, ... */
    char *name;       /* .name, as the source names it; NULL where the compiler left it out */
    /* value_kind begins with hidden_: the runtime fills it in, the caller does not pass it */
    bool hidden;
};

struct devrt_amdgpu_kernel {
    char *name;   /* as in the source */
    char *symbol; /* its kernel descriptor, NAME.kd */
    struct devrt_amdgpu_arg *args;
    size_t arg_count;         /* hidden ones included */
    size_t explicit_count;    /* those not hidden, which a launch passes */
    uint32_t *explicit_sizes; /* their sizes, in order (explicit_count of them) */
    uint32_t *explicit_kinds; /* their enum devrt_param_kind (codeobject.h), from .value_kind */
    char **explicit_names;    /* their args' names (owned there), NULL where unnamed */
    uint32_t kernarg_segment_size;
    uint32_t kernarg_segment_align;
    uint32_t group_segment_fixed_size;   /* LDS bytes, before any dynamic LDS */
    uint32_t private_segment_fixed_size; /* scratch bytes per workitem */
    uint32_t max_flat_workgroup_size;
    uint32_t wavefront_size;
    uint32_t sgpr_count, vgpr_count;
    bool uses_dynamic_stack; /* private_segment_fixed_size is then a lower bound */
    /*
     * The kernel descriptor (NAME.kd, 64 bytes in the image), which the GPU reads at dispatch:
     * its sizes must agree with the metadata's, or the packet and the kernel disagree.
     */
    bool has_descriptor;
    uint32_t descriptor_group_segment_fixed_size;
    uint32_t descriptor_private_segment_fixed_size;
    uint32_t descriptor_kernarg_size;
    uint16_t descriptor_kernel_code_properties;
};

/* A target feature of the code object (ELF header flags, code object version 4 and later). */
enum devrt_amdgpu_feature {
    DEVRT_AMDGPU_FEATURE_UNSUPPORTED, /* the processor lacks it */
    DEVRT_AMDGPU_FEATURE_ANY,         /* built to run either way */
    DEVRT_AMDGPU_FEATURE_OFF,
    DEVRT_AMDGPU_FEATURE_ON
};

struct devrt_amdgpu_metadata {
    uint32_t version[2]; /* amdhsa.version: {1, 1} is code object version 4, {1, 2} 5 and 6 */
    char *target;        /* amdhsa.target, such as amdgcn-amd-amdhsa--gfx90a:xnack- */
    /* From the ELF header, which the loader trusts over the note. */
    uint32_t code_object_version; /* 3 to 6, from e_ident[EI_ABIVERSION] */
    uint32_t os_abi;              /* e_ident[EI_OSABI]: 64 for HSA; 65 PAL, 66 Mesa */
    uint32_t e_flags;
    char processor[32]; /* gfx90a; "unknown machine 0x.." for a value this reader lacks */
    enum devrt_amdgpu_feature xnack, sramecc;
    char isa[64]; /* processor and features as a target ID: gfx90a:xnack-, gfx1100 */
    /*
     * Why devrt may not write 0 to the hidden argument that carries ockl's hostcall buffer
     * (hostcall_read) or heap (heap_read) in any kernel listing it: a load of the code that
     * may read it (amdgpu_code_scan.h), or why the code could not be read. "" where no kernel
     * lists it or no code reads it.
     */
    char hostcall_read[512], heap_read[512];
    struct devrt_amdgpu_kernel *kernels;
    size_t kernel_count;
};

/*
 * Reads the metadata of the code object IMAGE, SIZE bytes (not changed; PATH only names it
 * in messages). DEVRT_ERROR_IMAGE with the reason when it is not an amdgcn code object, has
 * no metadata note, or the note is malformed: wrong types, missing keys, an argument
 * outside the kernarg segment.
 */
int devrt_amdgpu_metadata_read(const void *image, size_t size, const char *path,
                               struct devrt_amdgpu_metadata **metadata);
void devrt_amdgpu_metadata_free(struct devrt_amdgpu_metadata *metadata);

/*
 * The most lanes an RPC request from this code object's kernels may name: its widest
 * kernel's .wavefront_size, or DEVICE_WAVE when it lists no kernel. Not the GPU's wave size:
 * on gfx10 and later a kernel built with -mwavefrontsize64 runs waves of 64 where the agent
 * reports 32.
 */
uint32_t devrt_amdgpu_rpc_lanes(const struct devrt_amdgpu_metadata *metadata, uint32_t device_wave);

/* The processor of the EF_AMDGPU_MACH value MACH, or NULL when this reader lacks it. */
const char *devrt_amdgpu_processor_name(uint32_t mach);
/* Whether NAME (gfx90a, gfx11-generic) is a processor of that table. */
bool devrt_amdgpu_processor_known(const char *name);
/* LDS bytes a workgroup may have on processor NAME. */
uint32_t devrt_amdgpu_processor_lds(const char *name);
/* The table's processors, comma-separated, into TEXT (cut at SIZE). */
void devrt_amdgpu_processor_list(char *text, size_t size);

/* The kernel named NAME (its source name), or NULL. */
const struct devrt_amdgpu_kernel *
devrt_amdgpu_metadata_kernel(const struct devrt_amdgpu_metadata *metadata, const char *name);

#endif
