/*
 * The dispatch of an amdgcn kernel, from its code object's metadata alone: everything the
 * HSA backend would otherwise decide next to the queue, where only a GPU could test it.
 *
 * Explicit arguments go where the metadata says, not where a C layout would put them.
 * Hidden arguments are filled by their value kind, at the metadata's offsets, so one code
 * path serves code object versions 4 (global offsets only), 5 and 6 (block counts, group
 * sizes, remainders, grid dimensions, dynamic LDS size): a version changes the list, not
 * this code.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdgpu_dispatch.h"
#include "geometry.h"
#include "codeobject.h"

#define DEVRT_ELFOSABI_AMDGPU_HSA 64u

/* Generic processors and the processors their code runs on (LLVM's AMDGPUUsage). */
static const struct {
    const char *generic;
    const char *members[8];
} generics[] = {
    {"gfx9-generic", {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}},
    {"gfx9-4-generic", {"gfx940", "gfx941", "gfx942", "gfx950"}},
    {"gfx10-1-generic", {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}},
    {"gfx10-3-generic",
     {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"}},
    {"gfx11-generic",
     {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"}},
    {"gfx12-generic", {"gfx1200", "gfx1201"}},
};

static bool processor_runs(const char *image, const char *gpu)
{
    if (!strcmp(image, gpu))
        return true;
    for (size_t i = 0; i < sizeof generics / sizeof generics[0]; ++i)
        if (!strcmp(generics[i].generic, image))
            for (size_t j = 0; j < 8 && generics[i].members[j]; ++j)
                if (!strcmp(generics[i].members[j], gpu))
                    return true;
    return false;
}

int devrt_amdgpu_check_target(const struct devrt_amdgpu_metadata *m, const char *path,
                              const char *isa)
{
    /* The agent's ISA name carries the triple (amdgcn-amd-amdhsa--gfx90a:xnack-); users
       write the target ID alone. */
    const char *id = strstr(isa, "--");
    id = id ? id + 2 : isa;
    char processor[64];
    size_t length = strcspn(id, ":");
    if (length == 0 || length >= sizeof processor)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "GPU ISA '%s' names no processor", isa);
    memcpy(processor, id, length);
    processor[length] = '\0';
    /* A GPU's name that is no processor would only be refused below as another GPU's,
       which misleads: gfx9999 is a typo, not a GPU an image could run on. */
    if (!devrt_amdgpu_processor_known(processor) || strstr(processor, "-generic")) {
        char known[1024];
        devrt_amdgpu_processor_list(known, sizeof known);
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "GPU ISA '%s': unknown processor '%s' (devrt knows %s)", isa, processor,
                          known);
    }
    enum devrt_amdgpu_feature xnack = DEVRT_AMDGPU_FEATURE_ANY, sramecc = xnack;
    for (const char *f = id + length; *f == ':';) {
        const char *next = f + 1 + strcspn(f + 1, ":");
        size_t n = (size_t)(next - f);
        enum devrt_amdgpu_feature *feature = NULL;
        if (n == 7 && !strncmp(f, ":xnack", 6))
            feature = &xnack;
        else if (n == 9 && !strncmp(f, ":sramecc", 8))
            feature = &sramecc;
        if (!feature || (f[n - 1] != '+' && f[n - 1] != '-'))
            return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                              "GPU ISA '%s': unknown feature '%.*s' (xnack+, xnack-, sramecc+ "
                              "and sramecc- are known)",
                              isa, (int)(n - 1), f + 1);
        *feature = f[n - 1] == '+' ? DEVRT_AMDGPU_FEATURE_ON : DEVRT_AMDGPU_FEATURE_OFF;
        f = next;
    }
    /* A feature set one way in the image must be set that way on the GPU; an image built
       for either (any) runs on both, and a GPU whose setting is not given matches all. */
    bool fits = processor_runs(m->processor, processor) &&
                !(m->xnack >= DEVRT_AMDGPU_FEATURE_OFF && xnack != DEVRT_AMDGPU_FEATURE_ANY &&
                  m->xnack != xnack) &&
                !(m->sramecc >= DEVRT_AMDGPU_FEATURE_OFF && sramecc != DEVRT_AMDGPU_FEATURE_ANY &&
                  m->sramecc != sramecc);
    if (!fits)
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s: image is %s, GPU is %s", path, m->isa, id);
    return DEVRT_SUCCESS;
}

/* Hidden arguments that devrt leaves zero, each with the reason it may. */
static const struct {
    const char *kind;
    const char *reason;
} zeroed[] = {
    {"hidden_global_offset_x", "devrt's grids start at 0 (no OpenCL global offset)"},
    {"hidden_global_offset_y", "devrt's grids start at 0 (no OpenCL global offset)"},
    {"hidden_global_offset_z", "devrt's grids start at 0 (no OpenCL global offset)"},
    {"hidden_none", "a slot LLVM keeps in place of an argument the kernel does not use"},
    /* clr writes 0 for these three too: no kernel reads them unless it enqueues from the
       device or syncs across grids, which no compiler emits for plain C. */
    {"hidden_multigrid_sync_arg", "devrt has no multi-grid cooperative launch"},
    {"hidden_default_queue", "devrt has no device-side enqueue"},
    {"hidden_completion_action", "devrt has no device-side enqueue"},
    /* Without the AMDGPU attributor (-O0, LLVM 19's LTO pipeline, a call LLVM cannot see
       into) LLVM lists these two for every kernel; only ockl's code reads them, and the
       dispatch refuses a code object whose code may read them (ockl_refusal). */
    {"hidden_hostcall_buffer", "no load in the code object reads it"},
    {"hidden_heap_v1", "no load in the code object reads it"},
};

/* Hidden arguments that would need a service devrt does not provide: such kernels are
   refused, since zero would send them through a null pointer. */
static const struct {
    const char *kind;
    const char *reason;
} refused[] = {
    {"hidden_printf_buffer", "devrt prints through devrt_printf, not OpenCL's printf buffer"},
    {"hidden_private_base", "devrt's GPUs (gfx9 and newer) give the apertures in registers"},
    {"hidden_shared_base", "devrt's GPUs (gfx9 and newer) give the apertures in registers"},
};

/*
 * Why KIND may not be zero in a code object of METADATA, or NULL: ockl's hostcall and malloc
 * read their buffer through it, and zero would send them through a null pointer. The code
 * was read for loads of it when the code object was (amdgpu_code_scan.h).
 */
static const char *ockl_refusal(const struct devrt_amdgpu_metadata *m, const char *kind, char *text,
                                size_t size)
{
    bool hostcall = !strcmp(kind, "hidden_hostcall_buffer");
    if (!hostcall && strcmp(kind, "hidden_heap_v1"))
        return NULL;
    const char *read = hostcall ? m->hostcall_read : m->heap_read;
    if (!read[0])
        return NULL;
    snprintf(text, size, "%s; devrt does not serve ockl's %s, so it may not pass 0", read,
             hostcall ? "hostcall" : "malloc");
    return text;
}

const char *devrt_amdgpu_hidden_zero_reason(const char *kind)
{
    for (size_t i = 0; i < sizeof zeroed / sizeof zeroed[0]; ++i)
        if (!strcmp(zeroed[i].kind, kind))
            return zeroed[i].reason;
    return NULL;
}

static void store(unsigned char *to, uint64_t value, uint32_t size)
{
    for (uint32_t i = 0; i < size; ++i)
        to[i] = (unsigned char)(value >> (8 * i));
}

/* The per-dimension hidden arguments: KIND is PREFIX followed by _x, _y or _z. */
static int dimension_of(const char *kind, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(kind, prefix, n) || kind[n] != '_' || kind[n + 2] != '\0')
        return -1;
    return kind[n + 1] >= 'x' && kind[n + 1] <= 'z' ? kind[n + 1] - 'x' : -1;
}

/*
 * Whether devrt can give a hidden argument, or a failure naming it. A size other than the
 * one the ABI gives means metadata this code does not understand: refused, not truncated.
 */
static int hidden_check(const struct devrt_amdgpu_metadata *m, const struct devrt_amdgpu_kernel *k,
                        const struct devrt_amdgpu_arg *a, const char *path)
{
    const char *kind = a->value_kind;
    uint32_t want = 8;
    char why[1024];
    if (ockl_refusal(m, kind, why, sizeof why))
        return devrt_fail(DEVRT_ERROR_LAUNCH, "kernel %s needs %s (offset %u): %s", k->name, kind,
                          a->offset, why);
    if (dimension_of(kind, "hidden_block_count") >= 0) {
        want = 4;
    } else if (dimension_of(kind, "hidden_group_size") >= 0 ||
               dimension_of(kind, "hidden_remainder") >= 0 || !strcmp(kind, "hidden_grid_dims")) {
        want = 2;
    } else if (!strcmp(kind, "hidden_queue_ptr")) {
        want = 8;
    } else if (!strcmp(kind, "hidden_dynamic_lds_size")) {
        /* LLVM lists it only for a kernel that declares an unsized LDS array; devrt's
           launches have no way to size that array (docs/runtime.md), and 0 bytes would leave
           every access to it out of bounds. */
        return devrt_fail(DEVRT_ERROR_LAUNCH,
                          "kernel %s uses dynamic LDS (an extern LDS array of no size; its "
                          "metadata lists hidden_dynamic_lds_size): devrt's launches give no "
                          "dynamic LDS, only the kernel's fixed %u bytes",
                          k->name, k->group_segment_fixed_size);
    } else if (!strcmp(kind, "hidden_none")) {
        want = a->size;
    } else if (devrt_amdgpu_hidden_zero_reason(kind)) {
        want = 8;
    } else {
        for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i)
            if (!strcmp(refused[i].kind, kind))
                return devrt_fail(DEVRT_ERROR_LAUNCH,
                                  "kernel %s needs %s (offset %u), which devrt does not "
                                  "provide: %s",
                                  k->name, kind, a->offset, refused[i].reason);
        return devrt_fail(DEVRT_ERROR_LAUNCH,
                          "kernel %s needs %s (offset %u), a hidden argument devrt does not know",
                          k->name, kind, a->offset);
    }
    if (a->size != want)
        return devrt_fail(DEVRT_ERROR_IMAGE,
                          "%s: kernel %s: %s is %u bytes; the code object ABI makes it %u", path,
                          k->name, kind, a->size, want);
    return DEVRT_SUCCESS;
}

/* The value of a hidden argument that hidden_check passed; 0 for those devrt leaves zero. */
static uint64_t hidden_value(const struct devrt_amdgpu_arg *a,
                             const struct devrt_amdgpu_dispatch *d,
                             const struct devrt_launch_config *config,
                             const struct devrt_amdgpu_agent *agent)
{
    const char *kind = a->value_kind;
    int dim;
    if ((dim = dimension_of(kind, "hidden_block_count")) >= 0)
        return config->grid[dim];
    if ((dim = dimension_of(kind, "hidden_group_size")) >= 0)
        return d->workgroup_size[dim];
    /* The last workgroup's size when the grid is not a whole number of workgroups; devrt's
       grids count workgroups, so it is always 0. */
    if ((dim = dimension_of(kind, "hidden_remainder")) >= 0)
        return d->grid_size[dim] % d->workgroup_size[dim];
    if (!strcmp(kind, "hidden_grid_dims"))
        return d->dimensions;
    /* The queue's own structure: code that traps or reads the dispatch's queue finds it here
       on code object version 5 and later. */
    if (!strcmp(kind, "hidden_queue_ptr"))
        return agent->queue_address;
    return 0;
}

/* The kernel's descriptor, which the GPU reads, against the metadata, which devrt reads. */
static int check_descriptor(const struct devrt_amdgpu_kernel *k, const char *path)
{
    if (!k->has_descriptor)
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s: kernel %s has no kernel descriptor %s", path,
                          k->name, k->symbol);
    const struct {
        const char *what;
        uint32_t descriptor, metadata;
    } sizes[] = {
        {"kernarg segment", k->descriptor_kernarg_size, k->kernarg_segment_size},
        {"group segment", k->descriptor_group_segment_fixed_size, k->group_segment_fixed_size},
        {"private segment", k->descriptor_private_segment_fixed_size,
         k->private_segment_fixed_size},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        if (sizes[i].descriptor != sizes[i].metadata)
            return devrt_fail(DEVRT_ERROR_IMAGE,
                              "%s: kernel %s: its descriptor's %s is %u bytes, its metadata's %u",
                              path, k->name, sizes[i].what, sizes[i].descriptor, sizes[i].metadata);
    return DEVRT_SUCCESS;
}

/*
 * Scratch bytes one wave may have on ISA's processor: the per-wave size must fit
 * COMPUTE_TMPRING_SIZE.WAVESIZE (13 bits of 1 KiB units before gfx12), and ROCr refuses a
 * dispatch past its own limit for it (MAX_WAVE_SCRATCH, and MAX_WAVE_SCRATCH_GFX12 on gfx12)
 * rather than clamp it. The major version is the processor's number less its last two
 * characters: gfx90a is 9, gfx1201 is 12.
 */
static uint64_t wave_scratch_limit(const char *isa)
{
    const char *processor = strstr(isa, "gfx");
    size_t digits = processor ? strcspn(processor + 3, ":") : 0;
    bool gfx12_or_later = digits == 4 && strncmp(processor + 3, "12", 2) >= 0;
    return gfx12_or_later ? 67106816u : 8387584u;
}

/* The private segment a dispatch gives each workitem, within the GPU's per-wave limit. */
static int check_private_segment(const struct devrt_amdgpu_kernel *k, const char *isa,
                                 uint64_t per_workitem)
{
    uint64_t limit = wave_scratch_limit(isa);
    char stack[64] = "";
    if (k->uses_dynamic_stack)
        snprintf(stack, sizeof stack, " (%u fixed + %u for its dynamic stack)",
                 k->private_segment_fixed_size, DEVRT_AMDGPU_DYNAMIC_STACK_BYTES);
    /* Scratch is given to waves in 1 KiB units. */
    uint64_t per_wave = (per_workitem * k->wavefront_size + 1023u) & ~(uint64_t)1023u;
    if (per_wave > limit)
        return devrt_fail(DEVRT_ERROR_LAUNCH,
                          "kernel %s needs %llu private bytes per workitem%s, %llu per wave of "
                          "%u; %s gives a wave at most %llu",
                          k->name, (unsigned long long)per_workitem, stack,
                          (unsigned long long)per_wave, k->wavefront_size, isa,
                          (unsigned long long)limit);
    return DEVRT_SUCCESS;
}

static int check_geometry(const struct devrt_amdgpu_metadata *m,
                          const struct devrt_amdgpu_kernel *k,
                          const struct devrt_launch_config *config,
                          const struct devrt_amdgpu_agent *agent)
{
    /* devrt's limits first: past them the products below would wrap. */
    int status = devrt_check_geometry(config);
    if (status != DEVRT_SUCCESS)
        return status;
    uint64_t flat = (uint64_t)config->block[0] * config->block[1] * config->block[2];
    if (flat > k->max_flat_workgroup_size)
        return devrt_fail(DEVRT_ERROR_LAUNCH,
                          "kernel %s takes workgroups of at most %u workitems, given %llu "
                          "(%ux%ux%u)",
                          k->name, k->max_flat_workgroup_size, (unsigned long long)flat,
                          config->block[0], config->block[1], config->block[2]);
    /* Without the GPU's own figure, the processor's: the agent's when named (the image's may
       be generic), else the image's. */
    char processor[32];
    const char *id = agent->isa ? strstr(agent->isa, "--") : NULL;
    id = id ? id + 2 : agent->isa ? agent->isa : m->processor;
    snprintf(processor, sizeof processor, "%.*s", (int)strcspn(id, ":"), id);
    uint32_t lds = agent->group_segment_limit ? agent->group_segment_limit
                                              : devrt_amdgpu_processor_lds(processor);
    if (k->group_segment_fixed_size > lds)
        return devrt_fail(DEVRT_ERROR_LAUNCH,
                          "kernel %s needs %u bytes of LDS per workgroup, the GPU has %u", k->name,
                          k->group_segment_fixed_size, lds);
    return DEVRT_SUCCESS;
}

/* Scratch per workitem, the dynamic stack included. */
static uint64_t private_size_of(const struct devrt_amdgpu_kernel *k)
{
    return (uint64_t)k->private_segment_fixed_size +
           (k->uses_dynamic_stack ? DEVRT_AMDGPU_DYNAMIC_STACK_BYTES : 0);
}

/* A launch of K the checks have passed (check_private_segment bounds its size). */
static struct devrt_amdgpu_launch launch_of(const struct devrt_amdgpu_kernel *k,
                                            const struct devrt_launch_config *config,
                                            const struct devrt_amdgpu_agent *agent)
{
    return (struct devrt_amdgpu_launch){
        .kernel = k,
        .config = *config,
        .agent = *agent,
        .private_segment_size = (uint32_t)private_size_of(k),
    };
}

int devrt_amdgpu_launch_check(const struct devrt_amdgpu_metadata *m, const char *path,
                              const struct devrt_amdgpu_agent *agent, const char *kernel,
                              const struct devrt_launch_config *config,
                              const struct devrt_arg *args, size_t arg_count,
                              struct devrt_amdgpu_launch *launch)
{
    memset(launch, 0, sizeof *launch);
    if (!m || !path || !agent || !kernel || !config || (arg_count && !args))
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "devrt_amdgpu_launch_check: missing argument");
    if (m->code_object_version < 4 || m->code_object_version > 6)
        return devrt_fail(DEVRT_ERROR_IMAGE,
                          "%s: code object version %u; devrt dispatches versions 4 to 6", path,
                          m->code_object_version);
    /* PAL's and Mesa's code objects share the machine but not the kernel ABI. */
    if (m->os_abi != DEVRT_ELFOSABI_AMDGPU_HSA)
        return devrt_fail(DEVRT_ERROR_IMAGE,
                          "%s: ELF OS ABI %u, not the HSA runtime's (%u): built for PAL or Mesa?",
                          path, m->os_abi, DEVRT_ELFOSABI_AMDGPU_HSA);
    int status = agent->isa ? devrt_amdgpu_check_target(m, path, agent->isa) : DEVRT_SUCCESS;
    if (status == DEVRT_SUCCESS)
        status =
            devrt_check_code_object_arguments("devrt_launch", m, path, kernel, args, arg_count);
    if (status != DEVRT_SUCCESS)
        return status;
    const struct devrt_amdgpu_kernel *k = devrt_amdgpu_metadata_kernel(m, kernel);
    status = check_descriptor(k, path);
    if (status == DEVRT_SUCCESS)
        status = check_geometry(m, k, config, agent);
    if (status == DEVRT_SUCCESS)
        status = check_private_segment(k, m->isa, private_size_of(k));
    for (size_t i = 0, given = 0; i < k->arg_count && status == DEVRT_SUCCESS; ++i) {
        const struct devrt_amdgpu_arg *a = &k->args[i];
        if (a->hidden) {
            status = hidden_check(m, k, a, path);
            continue;
        }
        given++;
        if (strcmp(a->value_kind, "by_value") && strcmp(a->value_kind, "global_buffer"))
            status = devrt_fail(DEVRT_ERROR_LAUNCH,
                                "kernel %s: argument %zu is a %s, which devrt does not pass",
                                k->name, given, a->value_kind);
    }
    if (status != DEVRT_SUCCESS)
        return status;
    *launch = launch_of(k, config, agent);
    return DEVRT_SUCCESS;
}

int devrt_amdgpu_launch_again(const struct devrt_amdgpu_metadata *m, const char *path,
                              const struct devrt_amdgpu_agent *agent, const char *kernel,
                              const struct devrt_launch_config *config,
                              struct devrt_amdgpu_launch *launch)
{
    const struct devrt_amdgpu_kernel *k = devrt_amdgpu_metadata_kernel(m, kernel);
    if (!k)
        return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s: no kernel %s", path, kernel);
    *launch = launch_of(k, config, agent);
    return DEVRT_SUCCESS;
}

int devrt_amdgpu_dispatch_pack(const struct devrt_amdgpu_launch *launch,
                               const struct devrt_arg *args, struct devrt_amdgpu_dispatch *d)
{
    const struct devrt_amdgpu_kernel *k = launch->kernel;
    const struct devrt_launch_config *config = &launch->config;
    memset(d, 0, sizeof *d);
    d->kernel = k;
    d->dimensions = 1;
    for (int dim = 0; dim < 3; ++dim) {
        d->workgroup_size[dim] = (uint16_t)config->block[dim];
        d->grid_size[dim] = config->grid[dim] * config->block[dim];
        if (d->grid_size[dim] > 1)
            d->dimensions = (uint16_t)(dim + 1);
    }
    d->group_segment_size = k->group_segment_fixed_size;
    d->private_segment_size = launch->private_segment_size;
    d->kernarg_size = k->kernarg_segment_size;
    d->kernarg_align = k->kernarg_segment_align;
    d->kernarg = calloc(d->kernarg_size ? d->kernarg_size : 1, 1);
    if (!d->kernarg)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for %s's kernel arguments",
                          k->name);
    for (size_t i = 0, given = 0; i < k->arg_count; ++i) {
        const struct devrt_amdgpu_arg *a = &k->args[i];
        unsigned char *at = d->kernarg + a->offset; /* in bounds: the reader checked */
        /* Sizes match (the check); the value's first bytes are it, little-endian. */
        if (!a->hidden)
            memcpy(at, devrt_arg_data(&args[given++]), a->size);
        else
            store(at, hidden_value(a, d, config, &launch->agent), a->size < 8 ? a->size : 8);
    }
    return DEVRT_SUCCESS;
}

int devrt_amdgpu_dispatch_make(const struct devrt_amdgpu_metadata *m, const char *path,
                               const struct devrt_amdgpu_agent *agent, const char *kernel,
                               const struct devrt_launch_config *config,
                               const struct devrt_arg *args, size_t arg_count,
                               struct devrt_amdgpu_dispatch *d)
{
    memset(d, 0, sizeof *d);
    struct devrt_amdgpu_launch launch;
    int status =
        devrt_amdgpu_launch_check(m, path, agent, kernel, config, args, arg_count, &launch);
    return status == DEVRT_SUCCESS ? devrt_amdgpu_dispatch_pack(&launch, args, d) : status;
}

void devrt_amdgpu_dispatch_free(struct devrt_amdgpu_dispatch *d)
{
    free(d->kernarg);
    d->kernarg = NULL;
}
