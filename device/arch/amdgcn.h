/* Architecture layer for AMDGPU (amdgcn-amd-amdhsa), wave32 and wave64 alike. */
#ifndef DEVRT_ARCH_AMDGCN_H
#define DEVRT_ARCH_AMDGCN_H

#include <stdbool.h>
#include <stdint.h>

#include <devrt/rpc.h>

#include "amdgcn_signal.h"

/*
 * Calls on AMDGPU cost a kernel the calling convention's registers and a stack; the
 * runtime's rare paths (raising an exception) are inlined so they cost only what they use.
 */
#define DEVRT_ARCH_INLINE __attribute__((always_inline))
/* Polls of host memory are relaxed; one acquire fence follows the poll that succeeds. */
#define DEVRT_ARCH_POLL_ORDER __ATOMIC_RELAXED
#define DEVRT_ARCH_REPLY_POLL_ORDER __ATOMIC_RELAXED
/*
 * The flip is seq_cst: the doorbell's seq_cst load of the server's sleeping flag follows
 * it, and of the two (Dekker's pattern, with the server's store of the flag and its rescan)
 * at least one must see the other. On every target the store costs what a release does.
 */
#define DEVRT_ARCH_FLIP_ORDER __ATOMIC_SEQ_CST

/*
 * LLVM's AMDGPU back end passes variable arguments since LLVM 19; clang 16 cannot even
 * read one (va_arg) for it. Without them devrt_vprintf and the function form of
 * devrt_printf print nothing and return -1; the devrt_printf macro needs no variable
 * arguments and prints on every LLVM.
 */
#define DEVRT_ARCH_VA_ARG (__clang_major__ >= 19)

/*
 * Reads of runtime data that no kernel changes (the channel's and the heap's descriptors)
 * go through the constant address space, so they become scalar loads into SGPRs instead of
 * vector loads into VGPRs, which every lane pays for.
 */
#define DEVRT_ARCH_READ_ONLY(p) ((const __attribute__((address_space(4))) __typeof__(*(p)) *)(p))

/*
 * __builtin_amdgcn_wavefrontsize() stays an intrinsic in target-independent bitcode and
 * folds to a constant once the kernel's target is known, so one bitcode serves both widths
 * and the branch on it costs nothing.
 */
#if __has_builtin(__builtin_amdgcn_wavefrontsize)
static inline uint32_t devrt_arch_wavefront_size(void)
{
    return __builtin_amdgcn_wavefrontsize();
}
#else
/*
 * clang 16 and 17 have no builtin for it (clang 18 brought it back), but LLVM 16 has the
 * intrinsic and folds it the same way: a declaration under the intrinsic's name is the
 * intrinsic to LLVM, the call the same IR as the builtin's.
 */
extern uint32_t devrt_amdgcn_wavefrontsize(void) __asm__("llvm.amdgcn.wavefrontsize");

static inline uint32_t devrt_arch_wavefront_size(void)
{
    return devrt_amdgcn_wavefrontsize();
}
#endif

static inline uint32_t devrt_arch_lane_id(void)
{
    uint32_t low = __builtin_amdgcn_mbcnt_lo(~0u, 0u);
    if (devrt_arch_wavefront_size() == 32)
        return low;
    return __builtin_amdgcn_mbcnt_hi(~0u, low);
}

#if __clang_major__ >= 18
static inline uint64_t devrt_arch_ballot(bool predicate)
{
    return __builtin_amdgcn_ballot_w64(predicate);
}
#else
/*
 * clang 16 and 17 accept a ballot only of the width of the target's waves, which
 * target-free bitcode has none of, and LLVM 16 cannot select the 64-lane ballot on wave32.
 * So each width calls its own intrinsic, declared under its name; the wave size folds once
 * the kernel's target is known and only the right one is left.
 */
extern uint64_t devrt_amdgcn_ballot_w64(bool predicate) __asm__("llvm.amdgcn.ballot.i64");
extern uint32_t devrt_amdgcn_ballot_w32(bool predicate) __asm__("llvm.amdgcn.ballot.i32");

static inline uint64_t devrt_arch_ballot(bool predicate)
{
    if (devrt_arch_wavefront_size() == 32)
        return devrt_amdgcn_ballot_w32(predicate);
    return devrt_amdgcn_ballot_w64(predicate);
}
#endif

static inline uint64_t devrt_arch_active_mask(void)
{
    return devrt_arch_ballot(true);
}

/* Rank of this lane among the lanes set in mask that precede it. */
static inline uint32_t devrt_arch_rank_in(uint64_t mask)
{
    uint32_t low = __builtin_amdgcn_mbcnt_lo((uint32_t)mask, 0u);
    if (devrt_arch_wavefront_size() == 32)
        return low;
    return __builtin_amdgcn_mbcnt_hi((uint32_t)(mask >> 32), low);
}

static inline uint32_t devrt_arch_read_first(uint32_t value)
{
    return __builtin_amdgcn_readfirstlane(value);
}

/*
 * A value that one lane computed alone, in a branch only the wave's leader takes (the ready
 * ring's position): the same as it, in an SGPR, so that what is computed from it costs no
 * VGPRs (the atomic optimizer hands each active lane its own share of an add otherwise).
 */
static inline uint32_t devrt_arch_leader_value(uint32_t value)
{
    return __builtin_amdgcn_readfirstlane(value);
}

/*
 * The wave's place in the hardware (the RPC's home port): HW_ID's CU, shader array and
 * engine fields on GFX9, HW_ID1's WGP, shader array and engine on GFX10 and later, in the
 * low 8 bits, then the SIMD, then the wave's slot. The home is the place modulo the homes'
 * count: a launch lighter than the machine runs a few waves on every CU, and these must
 * keep every CU's bits to find different homes. Target-free bitcode cannot
 * tell the generations apart; the wave size folds, and only GFX10 and later run wave32. A
 * wave64 kernel on GFX10 or later reads register 4 there, whatever it holds: the number is
 * a hint, which the port's lock keeps correct. (LLVM folds the size only when it selects
 * instructions, after s_getreg's side effects have pinned both reads: the code keeps both,
 * and the branch on the constant runs one.)
 */
static inline uint32_t devrt_arch_wave_slot(void)
{
    if (devrt_arch_wavefront_size() == 32) {
        /* hwreg(HW_REG_HW_ID1, 0, 21): wave [4:0], SIMD [9:8], WGP [13:10], SA 16, SE [20:18]. */
        uint32_t id = __builtin_amdgcn_s_getreg(23 | 20 << 11);
        uint32_t wgp = (id >> 10 & 0xfu) | (id >> 12 & 0x10u) | (id >> 13 & 0xe0u);
        return wgp | (id >> 8 & 0x3u) << 8 | (id & 0x1fu) << 10;
    }
    /* hwreg(HW_REG_HW_ID, 0, 16): wave [3:0], SIMD [5:4], CU [11:8], SH 12, SE [15:13]. */
    uint32_t id = __builtin_amdgcn_s_getreg(4 | 15 << 11);
    return (id >> 8 & 0xffu) | (id >> 4 & 0x3u) << 8 | (id & 0xfu) << 10;
}

/*
 * The raise's one lane (exception.c): the first active lane's value, for every lane that
 * raises with it. No lane waits for another: the lanes of a branch run together, so the
 * value is there to read, and it sits in an SGPR instead of every lane's VGPR.
 */
static inline uint32_t devrt_arch_raising_lane_value(uint32_t value)
{
    return __builtin_amdgcn_readfirstlane(value);
}

/*
 * The instruction scheduler keeps what comes before this point apart from what comes after
 * it: a run of stores whose data would otherwise be moved into VGPRs all at once, to be
 * stored together, holds only one half's at a time.
 */
static inline void devrt_arch_schedule_apart(void)
{
    __builtin_amdgcn_sched_barrier(0);
}

/*
 * The forms over a mask the caller took once (see nvptx.h): a wave runs its active lanes
 * together, so that mask is the active one and the plain forms serve.
 */
static inline uint64_t devrt_arch_ballot_sync(uint64_t mask, bool predicate)
{
    (void)mask;
    return devrt_arch_ballot(predicate);
}

static inline uint32_t devrt_arch_read_first_sync(uint64_t mask, uint32_t value)
{
    (void)mask;
    return devrt_arch_read_first(value);
}

/* AMDGPU wavefronts execute in lock-step: the lanes of a mask are always in sync. */
static inline void devrt_arch_sync_lanes(uint64_t mask)
{
    (void)mask;
    __builtin_amdgcn_wave_barrier();
}

static inline void devrt_arch_sleep(void)
{
    __builtin_amdgcn_s_sleep(2);
}

/*
 * The constant-rate counter: s_memrealtime, or on gfx11 and later the GET_REALTIME message,
 * chosen by the back end once the target is known. clang 16 and 17 lack the builtin (it
 * came in clang 18, with llvm.readsteadycounter); no target-free form of the real-time
 * counter exists there, so those builds count shader cycles instead (s_memtime on gfx9; a
 * 20-bit counter on gfx10 and later): docs/llvm-versions.md writes the limit down.
 */
static inline uint64_t devrt_arch_clock(void)
{
#if __has_builtin(__builtin_readsteadycounter)
    return __builtin_readsteadycounter();
#else
    return __builtin_readcyclecounter();
#endif
}

__attribute__((noreturn)) static inline void devrt_arch_end_wave(void)
{
    __builtin_amdgcn_endpgm();
}

/* The HSA kernel dispatch packet holds the launch geometry (hsa_kernel_dispatch_packet_t). */
struct devrt_amdgcn_dispatch {
    uint16_t header;
    uint16_t setup;
    uint16_t workgroup_size[3];
    uint16_t reserved0;
    uint32_t grid_size[3];
};

static inline const __attribute__((address_space(4))) struct devrt_amdgcn_dispatch *
devrt_amdgcn_dispatch(void)
{
    return (const __attribute__((
        address_space(4))) struct devrt_amdgcn_dispatch *)__builtin_amdgcn_dispatch_ptr();
}

static inline uint32_t devrt_arch_workitem_id(uint32_t dim)
{
    switch (dim) {
    case 0: return __builtin_amdgcn_workitem_id_x();
    case 1: return __builtin_amdgcn_workitem_id_y();
    case 2: return __builtin_amdgcn_workitem_id_z();
    default: return 0;
    }
}

static inline uint32_t devrt_arch_workgroup_id(uint32_t dim)
{
    switch (dim) {
    case 0: return __builtin_amdgcn_workgroup_id_x();
    case 1: return __builtin_amdgcn_workgroup_id_y();
    case 2: return __builtin_amdgcn_workgroup_id_z();
    default: return 0;
    }
}

static inline uint32_t devrt_arch_workgroup_size(uint32_t dim)
{
    return dim < 3 ? devrt_amdgcn_dispatch()->workgroup_size[dim] : 1;
}

/* HSA's grid size counts workitems. */
static inline uint32_t devrt_arch_grid_size(uint32_t dim)
{
    return dim < 3 ? devrt_amdgcn_dispatch()->grid_size[dim] : 1;
}

#if __clang_major__ >= 17 && __clang_major__ <= 19
/*
 * The code object version the kernel is built for, learnt as clang's own version-dependent
 * builtins learn it: clang 17 to 19 define __oclc_ABI_version (400, 500, 600) in every
 * amdgcn translation unit built for a version, while devrt's bitcode, built for none, only
 * refers to it. Once a kernel links the bitcode, the test on it folds to one branch.
 */
extern const __attribute__((address_space(4))) int __oclc_ABI_version;
#define DEVRT_AMDGCN_BLOCK_COUNTS (__oclc_ABI_version >= 500)
#else
/*
 * clang 16 does not define __oclc_ABI_version yet, and clang 22 no longer does (it folds its
 * builtins with the version itself), so a kernel that links this bitcode would have nothing
 * to resolve it with. The packet's grid, divided, is right on every version: these builds
 * divide (docs/llvm-versions.md, "Costs that differ").
 */
#define DEVRT_AMDGCN_BLOCK_COUNTS 0
#endif

static inline uint32_t devrt_arch_num_workgroups(uint32_t dim)
{
    if (dim >= 3)
        return 1;
    /* Version 5 and later: the runtime puts the block counts in the implicit arguments
       (hidden_block_count_x/y/z at offsets 0, 4 and 8), no division needed. */
    if (DEVRT_AMDGCN_BLOCK_COUNTS)
        return ((const __attribute__((address_space(4)))
                 uint32_t *)__builtin_amdgcn_implicitarg_ptr())[dim];
    /* Version 4 has only the packet's grid, in workitems. */
    uint32_t size = devrt_arch_workgroup_size(dim);
    return (devrt_arch_grid_size(dim) + size - 1) / size;
}

/* A fence at a clang memory scope; both arguments are constants once inlined. */
static inline void devrt_arch_fence(int order, int scope)
{
#define DEVRT_AMDGCN_FENCE(name)                                                                   \
    do {                                                                                           \
        if (order == __ATOMIC_ACQUIRE)                                                             \
            __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, name);                                        \
        else if (order == __ATOMIC_RELEASE)                                                        \
            __builtin_amdgcn_fence(__ATOMIC_RELEASE, name);                                        \
        else                                                                                       \
            __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, name);                                        \
    } while (0)
    switch (scope) {
    case DEVRT_GPU_SCOPE_WAVE: DEVRT_AMDGCN_FENCE("wavefront"); break;
    case DEVRT_GPU_SCOPE_WORKGROUP: DEVRT_AMDGCN_FENCE("workgroup"); break;
    case DEVRT_GPU_SCOPE_DEVICE: DEVRT_AMDGCN_FENCE("agent"); break;
    default: DEVRT_AMDGCN_FENCE(""); break;
    }
#if __clang_major__ < 17
    /*
     * LLVM 16's acquire on GFX10 and GFX11 invalidates GL0 before GL1, so another wave of
     * the same CU may refill GL0 from the stale GL1 between the two; AMDGPUUsage's sequence,
     * which LLVM 19 emits, invalidates GL1 first. A second acquire puts its GL0
     * invalidation after the first one's GL1 invalidation, the order that is needed
     * (tests/codegen/memory_model.py checks it); elsewhere it repeats the invalidation.
     * The empty asm keeps LLVM from merging the two fences into one.
     */
    if (order == __ATOMIC_ACQUIRE && scope != DEVRT_GPU_SCOPE_WAVE &&
        scope != DEVRT_GPU_SCOPE_WORKGROUP) {
        __asm__ volatile("" ::: "memory");
        if (scope == DEVRT_GPU_SCOPE_DEVICE)
            DEVRT_AMDGCN_FENCE("agent");
        else
            DEVRT_AMDGCN_FENCE("");
    }
#endif
#undef DEVRT_AMDGCN_FENCE
}

static inline void devrt_arch_barrier(void)
{
    devrt_arch_fence(__ATOMIC_RELEASE, DEVRT_GPU_SCOPE_WORKGROUP);
    __builtin_amdgcn_s_barrier();
    devrt_arch_fence(__ATOMIC_ACQUIRE, DEVRT_GPU_SCOPE_WORKGROUP);
}

/*
 * Wake the host server through an HSA signal (struct devrt_amdgcn_signal): store its
 * value, then raise the signal's interrupt so that a host thread waiting on it in the
 * kernel driver wakes up.
 */

/*
 * The interrupt carries the signal's event id in M0. amdkfd reads 24 bits of it on gfx9,
 * gfx11 and gfx12 and ockl sends 23 on gfx10; one bitcode serves every family, so it sends
 * the narrower width. amdkfd gives signal events ids below KFD_SIGNAL_EVENT_LIMIT (4096),
 * which both widths hold whole: an 8-bit mask named slot id % 256 for ids of 256 and more.
 */
#if defined(DEVRT_CONTROL_NARROW_INTERRUPT_ID)
#define DEVRT_AMDGCN_INTERRUPT_ID_MASK 0xffu /* the defect, for the codegen check's control */
#else
#define DEVRT_AMDGCN_INTERRUPT_ID_MASK 0x7fffffu
#endif

static inline void devrt_arch_ring_doorbell(struct devrt_rpc_doorbell *doorbell)
{
    struct devrt_amdgcn_signal *signal =
        (struct devrt_amdgcn_signal *)DEVRT_ARCH_READ_ONLY(doorbell)->signal;
    if (!signal)
        return;
    /*
     * Only a sleeping server needs the interrupt: one per post would risk a storm of them
     * under printf load. seq_cst pairs with the flip's (DEVRT_ARCH_FLIP_ORDER) and with the
     * server's seq_cst store of the flag before its rescan (host/runtime/server.c): a
     * device that reads 0 flipped before the server's rescan, which sees the flip.
     */
    if (!devrt_scoped_load_n(&doorbell->sleeping, __ATOMIC_SEQ_CST, DEVRT_SCOPE_SYSTEM))
        return;
    /*
     * Relaxed: the outbox flip before this (devrt_rpc_hand_over_in) is the post's one
     * release, paired with the server's acquire load of the outbox; the server reads
     * nothing through the signal but that it was rung. On gfx90a and gfx942 each
     * system-scope release writes back every dirty line of the L2 (buffer_wbl2).
     */
    devrt_scoped_store_n(&signal->value, 1, __ATOMIC_RELAXED, DEVRT_SCOPE_SYSTEM);
    uint64_t *mailbox = DEVRT_ARCH_READ_ONLY(signal)->event_mailbox;
    if (mailbox) {
        uint32_t id = DEVRT_ARCH_READ_ONLY(signal)->event_id;
        devrt_scoped_store_n(mailbox, id, __ATOMIC_RELAXED, DEVRT_SCOPE_SYSTEM);
        /*
         * s_sendmsg does not wait for earlier stores: without the release, the interrupt
         * can reach the host before the value and the mailbox it announces, and the woken
         * waiter sleeps again on the old value.
         */
        devrt_arch_fence(__ATOMIC_RELEASE, DEVRT_SCOPE_SYSTEM);
        __builtin_amdgcn_s_sendmsg(1 /* MSG_INTERRUPT */, id & DEVRT_AMDGCN_INTERRUPT_ID_MASK);
    }
}

/* Whether the host's copies can reach P: global memory, not a lane's private or LDS. */
static inline bool devrt_arch_host_can_read(const void *p)
{
    /* The builtins take the flat address space by number, which C's default pointer is. */
    const __attribute__((address_space(0))) void *flat =
        (const __attribute__((address_space(0))) void *)p;
    return !__builtin_amdgcn_is_private(flat) && !__builtin_amdgcn_is_shared(flat);
}

#endif
