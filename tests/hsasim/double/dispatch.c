/*
 * One kernel dispatch packet, run as the GPU would: the packet's geometry and segment
 * sizes checked against the kernel's descriptor, the kernel argument segment read where
 * the compiler's metadata says each argument is, the hidden arguments the grid functions
 * read checked against the packet, then the kernel's emulation build run on lanes
 * (host/backends/emu_waves.c) in the GPU's wave width.
 */
#include <ffi.h>
#include <stdlib.h>
#include <string.h>

#include "emu_waves.h"
#include "hsasim.h"

/* A hidden argument the packet must agree with: its value, or -1 when the kernel lacks it. */
static int64_t hidden(const struct hsasim_kernel *k, const unsigned char *kernarg, const char *kind)
{
    for (uint32_t i = 0; i < k->arg_count; ++i)
        if (!strcmp(k->arg[i].kind, kind)) {
            uint64_t v = 0;
            memcpy(&v, kernarg + k->arg[i].offset, k->arg[i].size < 8 ? k->arg[i].size : 8);
            return (int64_t)v;
        }
    return -1;
}

/* The packet's geometry, as workgroups and lanes, or a reason it is not one the GPU runs. */
static const char *geometry(const hsa_kernel_dispatch_packet_t *p, const struct hsasim_kernel *k,
                            const unsigned char *kernarg, uint32_t block[3], uint32_t grid[3])
{
    unsigned dims = p->setup >> HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS & 3;
    uint32_t size[3] = {p->workgroup_size_x, p->workgroup_size_y, p->workgroup_size_z};
    uint32_t total[3] = {p->grid_size_x, p->grid_size_y, p->grid_size_z};
    static const char *const block_count[3] = {"hidden_block_count_x", "hidden_block_count_y",
                                               "hidden_block_count_z"};
    static const char *const group_size[3] = {"hidden_group_size_x", "hidden_group_size_y",
                                              "hidden_group_size_z"};
    if (dims < 1 || dims > 3)
        return "the setup field names no dimension count from 1 to 3";
    for (unsigned d = 0; d < 3; ++d) {
        if (size[d] == 0 || total[d] == 0)
            return "a workgroup or grid size of 0";
        if (d >= dims && (size[d] != 1 || total[d] != 1))
            return "a size other than 1 in a dimension past the setup's count";
        if (total[d] % size[d])
            return "a partial workgroup, which devrt never launches";
        block[d] = size[d];
        grid[d] = total[d] / size[d];
        int64_t count = hidden(k, kernarg, block_count[d]);
        int64_t group = hidden(k, kernarg, group_size[d]);
        if ((count >= 0 && count != grid[d]) || (group >= 0 && group != size[d]))
            return "the hidden block count or group size disagrees with the packet's grid";
    }
    if ((uint64_t)size[0] * size[1] * size[2] > 1024)
        return "more than 1024 work-items in a workgroup";
    if (p->group_segment_size < k->group_segment_size)
        return "a group segment smaller than the kernel descriptor's";
    if (p->private_segment_size < k->private_segment_size)
        return "a private segment smaller than the kernel descriptor's";
    return NULL;
}

static ffi_type *ffi_of(uint32_t size)
{
    return size == 8   ? &ffi_type_uint64
           : size == 4 ? &ffi_type_uint32
           : size == 2 ? &ffi_type_uint16
           : size == 1 ? &ffi_type_uint8
                       : NULL;
}

/*
 * Whether the kernel argument segment of P no longer holds AT_START, the bytes the kernel
 * read when it began: a GPU reads its arguments all along the kernel, so memory of its that
 * another launch took while it ran feeds it wrong ones. Compared under the double's lock,
 * while the memory is still allocated: a dispatch left running by a fault may outlive it.
 */
static bool rewritten_while_run(const hsa_kernel_dispatch_packet_t *p,
                                const struct hsasim_kernel *k, const unsigned char *at_start)
{
    pthread_mutex_lock(&hsasim_lock);
    bool rewritten = hsasim_find_block(p->kernarg_address, k->kernarg_size) &&
                     memcmp(p->kernarg_address, at_start, k->kernarg_size) != 0;
    pthread_mutex_unlock(&hsasim_lock);
    return rewritten;
}

/* The waves each GPU runs for the process's dispatches: what a blit kernel competes with. */
static unsigned running_waves[HSASIM_MAX_GPUS];

unsigned hsasim_running_waves(const struct hsasim_agent *gpu)
{
    return __atomic_load_n(&running_waves[gpu->gpu], __ATOMIC_ACQUIRE);
}

hsa_status_t hsasim_dispatch(const hsa_kernel_dispatch_packet_t *p, const bool *cancel,
                             const struct hsasim_agent *gpu)
{
    struct hsasim_kernel *k = hsasim_kernel(p->kernel_object);
    if (!k) {
        hsasim_say("kernel object 0x%llx is no loaded kernel's descriptor",
                   (unsigned long long)p->kernel_object);
        return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    }
    const char *wrong = NULL;
    unsigned acquire = p->header >> HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE & 3;
    unsigned release = p->header >> HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE & 3;
    /* Host memory devrt wrote must be seen, and the kernel's writes seen by the host. */
    if (acquire != HSA_FENCE_SCOPE_SYSTEM || release != HSA_FENCE_SCOPE_SYSTEM)
        wrong = "an acquire or release fence scope short of the system's";
    pthread_mutex_lock(&hsasim_lock);
    const struct hsasim_block *b = hsasim_find_block(p->kernarg_address, k->kernarg_size);
    bool readable = b && b->gpu_access >> gpu->gpu & 1;
    pthread_mutex_unlock(&hsasim_lock);
    if (!wrong && k->kernarg_size && !readable)
        wrong = "kernel arguments outside memory the GPU may read";
    /* The AQL packet's kernarg_address is 16-byte aligned (HSA specification), and the
       kernel's loads assume the metadata's .kernarg_segment_align. */
    uintptr_t align = k->kernarg_align > 16 ? k->kernarg_align : 16;
    if (!wrong && (uintptr_t)p->kernarg_address % align)
        wrong = "kernel arguments not aligned to 16 bytes and .kernarg_segment_align";
    /* Aligned as the emulation aligns arguments: vector types up to a cache line. */
    unsigned char *kernarg = aligned_alloc(64, (k->kernarg_size + 63) / 64 * 64 + 64);
    unsigned char *at_start = malloc(k->kernarg_size + 1);
    if (!wrong && (!kernarg || !at_start))
        wrong = "no memory";
    if (!wrong) {
        memcpy(kernarg, p->kernarg_address, k->kernarg_size);
        memcpy(at_start, kernarg, k->kernarg_size);
    }
    /* The control of the check that follows the run ($DEVRT_HSASIM_PLANT=kernarg_reuse): the
       arguments change under the running kernel, as when a later launch took their memory. */
    if (!wrong && hsasim_planted("kernarg_reuse") && k->kernarg_size)
        ((unsigned char *)p->kernarg_address)[0] ^= 0xff;
    /*
     * The control of the hsasim tests ($DEVRT_HSASIM_PLANT=kernarg_swap): the kernel reads
     * its first two argument words swapped, as a dispatch that wrote them at wrong offsets
     * would make it; the tests must then fail.
     */
    if (!wrong && hsasim_planted("kernarg_swap") && k->kernarg_size >= 16) {
        unsigned char first[8];
        memcpy(first, kernarg, 8);
        memmove(kernarg, kernarg + 8, 8);
        memcpy(kernarg + 8, first, 8);
    }
    uint32_t block[3], grid[3];
    if (!wrong)
        wrong = geometry(p, k, kernarg, block, grid);
    void *values[64];
    ffi_type *types[64];
    unsigned count = 0;
    for (uint32_t i = 0; !wrong && i < k->arg_count; ++i) {
        const struct hsasim_arg *a = &k->arg[i];
        if (!strncmp(a->kind, "hidden_", 7))
            continue;
        if ((uint64_t)a->offset + a->size > k->kernarg_size)
            wrong = "an argument past the kernel argument segment";
        values[count] = kernarg + a->offset;
        types[count++] = ffi_of(a->size);
    }
    ffi_cif cif;
    if (!wrong && !k->caller) {
        for (unsigned i = 0; i < count && !wrong; ++i)
            if (!types[i])
                wrong = "an argument by value that only DEVRT_KERNELn's caller can pass";
        if (!wrong && ffi_prep_cif(&cif, FFI_DEFAULT_ABI, count, &ffi_type_void, types) != FFI_OK)
            wrong = "no call of its arguments";
    }
    if (wrong) {
        hsasim_say("dispatch of kernel %s: %s", k->name, wrong);
        free(at_start);
        free(kernarg);
        hsasim_kernel_done(k);
        return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    }
    const char *seed = getenv("DEVRT_HSASIM_SEED");
    struct devrt_emu_grid run = {
        .enter = (devrt_emu_enter_fn *)hsasim_kernel_enter(k),
        .kernel = k->entry,
        .call = (devrt_emu_call_fn *)k->caller,
        .cif = &cif,
        .values = values,
        .block = {block[0], block[1], block[2]},
        .grid = {grid[0], grid[1], grid[2]},
        .wave_size = gpu->wave_size,
        .random_seed = seed ? strtoull(seed, NULL, 10) : 0,
        .cancel = cancel,
    };
    /* A wave a slot, from the dispatch's start to its end: every lane is resident at once. */
    unsigned waves = grid[0] * grid[1] * grid[2] *
                     ((block[0] * block[1] * block[2] + gpu->wave_size - 1) / gpu->wave_size);
    __atomic_add_fetch(&running_waves[gpu->gpu], waves, __ATOMIC_RELEASE);
    enum devrt_emu_grid_result result = devrt_emu_run_grid(&run);
    __atomic_sub_fetch(&running_waves[gpu->gpu], waves, __ATOMIC_RELEASE);
    bool rewritten = result == DEVRT_EMU_GRID_DONE && rewritten_while_run(p, k, at_start);
    free(at_start);
    free(kernarg);
    hsasim_kernel_done(k);
    if (rewritten) {
        hsasim_say("dispatch of kernel %s: its kernel arguments were rewritten while it ran, as "
                   "a launch that reuses their memory too early does",
                   k->name);
        return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    }
    if (result == DEVRT_EMU_GRID_NO_MEMORY || result == DEVRT_EMU_GRID_NO_THREAD) {
        hsasim_say("dispatch of kernel %s: no memory or thread for its lanes", k->name);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    return HSA_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) uint64_t devrt_hsasim_count(const char *what)
{
    static const struct {
        const char *name;
        const uint64_t *count;
    } counts[] = {
        {"dispatches", &hsasim_counts.dispatches},
        {"grants", &hsasim_counts.grants},
        {"allocations", &hsasim_counts.allocations},
        {"queues", &hsasim_counts.queues},
        {"barrier_holds", &hsasim_counts.barrier_holds},
        {"running", &hsasim_counts.running},
        {"blit_waits", &hsasim_counts.blit_waits},
        {"barriers", &hsasim_counts.barriers},
        {"kernarg_allocations", &hsasim_counts.kernarg_allocations},
        {"node1_allocations", &hsasim_counts.node1_allocations},
    };
    for (size_t i = 0; i < sizeof counts / sizeof *counts; ++i)
        if (!strcmp(what, counts[i].name))
            return __atomic_load_n(counts[i].count, __ATOMIC_ACQUIRE);
    /* Packets reserved and not yet taken: queued behind the one a processor runs. */
    if (!strcmp(what, "waiting"))
        return __atomic_load_n(&hsasim_counts.reserved, __ATOMIC_ACQUIRE) -
               __atomic_load_n(&hsasim_counts.taken, __ATOMIC_ACQUIRE);
    return UINT64_MAX;
}
