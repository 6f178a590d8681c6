/*
 * Architecture layer for NVIDIA GPUs (nvptx64-nvidia-cuda), sm_70 and newer.
 *
 * Warps are 32 lanes wide and, since Volta, scheduled independently: the lanes of a warp
 * need not execute together, even where the code has not diverged. So nothing here
 * assumes lock-step. Every lane-mask operation names the lanes that take part and waits
 * for them (vote.sync, shfl.sync, bar.warp.sync); the forms without a mask use the lanes
 * active at the call (activemask), which is what a caller that captured no mask means.
 * Code that calls several of them in a row for one group of lanes (the RPC client) takes
 * the mask once and passes it, so every call agrees on who takes part.
 *
 * Atomics: LLVM 19's NVPTX back end keeps no memory order on atomic read-modify-writes
 * (it emits plain `atom`, which PTX defines as relaxed at GPU scope), cannot select
 * acquire loads, release stores or `fence` instructions, and lowers relaxed loads and
 * stores to ld.volatile/st.volatile (relaxed at system scope in the PTX memory model). So
 * arch.h's atomic macros on nvptx write an acquire load of 4 or 8 bytes here in PTX, as the
 * instruction that carries its order (ld.acquire), and every other atomic as the relaxed
 * operation between explicit fences of its scope. The fence is the dearer form of an
 * acquire: ptxas makes fence.acq_rel.sys a MEMBAR.ALL.SYS, which waits on the bus (0.5 to
 * 1.1 us of a lane's round trip on the H100), and ld.acquire.sys a strong load and an L1
 * invalidation. Release stores and acquire fetch-ors keep their fences: written as
 * st.release and atom.acquire (which spared a port's take its MEMBAR.ALL.GPU, 0.07 to 0.10 us),
 * nvptx.faults.flood ran past its timeout in both calls that tried them, but it did once
 * as well with its kernel's PTX unchanged, so what slows it is not known
 * (docs/results/2026-12-06-h100-acquire.md).
 */
#ifndef DEVRT_ARCH_NVPTX_H
#define DEVRT_ARCH_NVPTX_H

#include <stdbool.h>
#include <stdint.h>

#include <devrt/rpc.h>

#define DEVRT_ARCH_READ_ONLY(p) (p)
/*
 * Inlined for correctness, not speed. A function that takes the active mask and returns
 * with it (devrt_printf_begin, devrt_rpc_open) would name every lane that entered it
 * together, and lanes from different call sites can enter a function together; back in
 * their callers they go separate ways, and the next collective with that mask waits for
 * lanes that run other code: a hang (seen on the H200 in printf.formats, whose lanes
 * printf from different call sites). Inlined, the mask names the lanes of one call site.
 */
#define DEVRT_ARCH_INLINE __attribute__((always_inline))
/*
 * A poll for a one-word reply is an acquire load (ld.acquire.sys), so no fence follows the
 * poll that succeeds: the fence.acq_rel.sys cost a lane's round trip 0.5 to 1.1 us on the
 * H100. A poll for a hand-back stays relaxed, with that fence after the poll that succeeds:
 * an acquire load also invalidates the SM's L1 at every poll, and a stream's waits are long
 * and many, the lanes of its warps reading their lines through that L1 meanwhile (a choice
 * made on that count, not measured apart).
 */
#define DEVRT_ARCH_POLL_ORDER __ATOMIC_RELAXED
#define DEVRT_ARCH_REPLY_POLL_ORDER __ATOMIC_ACQUIRE
/* The doorbell's fence.sc.sys follows its store; the server polls the count. */
#define DEVRT_ARCH_FLIP_ORDER __ATOMIC_RELEASE
/* Variable arguments on NVPTX came with LLVM 19, as on AMDGPU (amdgcn.h). */
#define DEVRT_ARCH_VA_ARG (__clang_major__ >= 19)

static inline uint32_t devrt_arch_wavefront_size(void)
{
    return 32;
}

static inline uint32_t devrt_arch_lane_id(void)
{
    return __nvvm_read_ptx_sreg_laneid();
}

static inline uint64_t devrt_arch_active_mask(void)
{
    return __nvvm_activemask();
}

/* Ballot over the lanes of mask; every lane of mask must call it. */
static inline uint64_t devrt_arch_ballot_sync(uint64_t mask, bool predicate)
{
    return __nvvm_vote_ballot_sync((uint32_t)mask, predicate);
}

static inline uint64_t devrt_arch_ballot(bool predicate)
{
    return devrt_arch_ballot_sync(__nvvm_activemask(), predicate);
}

/* Rank of this lane among the lanes set in mask that precede it. */
static inline uint32_t devrt_arch_rank_in(uint64_t mask)
{
    return (uint32_t)__builtin_popcount((uint32_t)mask & __nvvm_read_ptx_sreg_lanemask_lt());
}

/* The value of the lowest lane of mask; every lane of mask must call it. */
static inline uint32_t devrt_arch_read_first_sync(uint64_t mask, uint32_t value)
{
    return (uint32_t)__nvvm_shfl_sync_idx_i32((uint32_t)mask, (int)value,
                                              __builtin_ctz((uint32_t)mask), 31);
}

static inline uint32_t devrt_arch_read_first(uint32_t value)
{
    return devrt_arch_read_first_sync(__nvvm_activemask(), value);
}

/* A value that one lane computed alone, in a branch only the wave's leader takes: itself. */
static inline uint32_t devrt_arch_leader_value(uint32_t value)
{
    return value;
}

/*
 * The warp's place in the hardware (the RPC's home port): its slot on its SM, then the SM,
 * the SM in the low digits. The home is the place modulo the homes' count, and a launch
 * lighter than the machine runs a few warps on every SM: with the slot in the low digits
 * (SM * 64 + slot) it kept only 3 bits of the SM, and 512 warps on 132 SMs shared 32
 * homes. PTX says %warpid may change when a warp is preempted: the number is a hint, which
 * the port's lock keeps correct.
 */
static inline uint32_t devrt_arch_wave_slot(void)
{
    return __nvvm_read_ptx_sreg_warpid() * __nvvm_read_ptx_sreg_nsmid() +
           __nvvm_read_ptx_sreg_smid();
}

/*
 * The raise's one lane (exception.c): each lane raises with its own values, the registers
 * being the lane's own anyway, and no lane waits for another.
 */
static inline uint32_t devrt_arch_raising_lane_value(uint32_t value)
{
    return value;
}

/* Nothing to keep apart (amdgcn.h says why amdgcn does): ptxas schedules and allocates anew. */
static inline void devrt_arch_schedule_apart(void) {}

/* Wait until every lane of mask has arrived; orders their memory accesses too. */
static inline void devrt_arch_sync_lanes(uint64_t mask)
{
    __nvvm_bar_warp_sync((uint32_t)mask);
}

/*
 * Between polls of host memory: a poll crosses PCIe (about a microsecond), so a short
 * sleep costs no latency and spares the link and the other warps of the SM.
 */
static inline void devrt_arch_sleep(void)
{
    __nvvm_nanosleep(200);
}

/* %globaltimer: nanoseconds, the same rate on every GPU. */
static inline uint64_t devrt_arch_clock(void)
{
    uint64_t ns;
    __asm__ volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

/* PTX `exit` ends the calling thread; the other lanes of its warp carry on. */
__attribute__((noreturn)) static inline void devrt_arch_end_wave(void)
{
    __asm__ volatile("exit;" ::: "memory");
    __builtin_unreachable();
}

static inline uint32_t devrt_arch_workitem_id(uint32_t dim)
{
    switch (dim) {
    case 0: return __nvvm_read_ptx_sreg_tid_x();
    case 1: return __nvvm_read_ptx_sreg_tid_y();
    case 2: return __nvvm_read_ptx_sreg_tid_z();
    default: return 0;
    }
}

static inline uint32_t devrt_arch_workgroup_id(uint32_t dim)
{
    switch (dim) {
    case 0: return __nvvm_read_ptx_sreg_ctaid_x();
    case 1: return __nvvm_read_ptx_sreg_ctaid_y();
    case 2: return __nvvm_read_ptx_sreg_ctaid_z();
    default: return 0;
    }
}

static inline uint32_t devrt_arch_workgroup_size(uint32_t dim)
{
    switch (dim) {
    case 0: return __nvvm_read_ptx_sreg_ntid_x();
    case 1: return __nvvm_read_ptx_sreg_ntid_y();
    case 2: return __nvvm_read_ptx_sreg_ntid_z();
    default: return 1;
    }
}

static inline uint32_t devrt_arch_num_workgroups(uint32_t dim)
{
    switch (dim) {
    case 0: return __nvvm_read_ptx_sreg_nctaid_x();
    case 1: return __nvvm_read_ptx_sreg_nctaid_y();
    case 2: return __nvvm_read_ptx_sreg_nctaid_z();
    default: return 1;
    }
}

/* The grid size counts workitems, as on the other targets. */
static inline uint32_t devrt_arch_grid_size(uint32_t dim)
{
    return devrt_arch_workgroup_size(dim) * devrt_arch_num_workgroups(dim);
}

/*
 * A fence at a clang memory scope; both arguments are constants once inlined. PTX has
 * no wave scope: the CTA is the narrowest. acquire, release and acq_rel all become
 * fence.acq_rel (PTX has no lighter one-sided fence); seq_cst becomes fence.sc.
 */
static inline void devrt_arch_fence(int order, int scope)
{
    if (order == __ATOMIC_RELAXED)
        return;
    if (order == __ATOMIC_SEQ_CST) {
        if (scope == DEVRT_GPU_SCOPE_SYSTEM)
            __asm__ volatile("fence.sc.sys;" ::: "memory");
        else if (scope == DEVRT_GPU_SCOPE_DEVICE)
            __asm__ volatile("fence.sc.gpu;" ::: "memory");
        else
            __asm__ volatile("fence.sc.cta;" ::: "memory");
        return;
    }
    if (scope == DEVRT_GPU_SCOPE_SYSTEM)
        __asm__ volatile("fence.acq_rel.sys;" ::: "memory");
    else if (scope == DEVRT_GPU_SCOPE_DEVICE)
        __asm__ volatile("fence.acq_rel.gpu;" ::: "memory");
    else
        __asm__ volatile("fence.acq_rel.cta;" ::: "memory");
}

/*
 * The acquire load (this file's head says why), of SIZE 4 or 8 bytes at a clang scope, both
 * constants once inlined; the wave and workgroup scopes become the CTA.
 */
static inline uint32_t devrt_nvptx_load_acquire_32(const volatile void *p, int scope)
{
    uint32_t value;
    if (scope == DEVRT_GPU_SCOPE_SYSTEM)
        __asm__ volatile("ld.acquire.sys.b32 %0, [%1];" : "=r"(value) : "l"(p) : "memory");
    else if (scope == DEVRT_GPU_SCOPE_DEVICE)
        __asm__ volatile("ld.acquire.gpu.b32 %0, [%1];" : "=r"(value) : "l"(p) : "memory");
    else
        __asm__ volatile("ld.acquire.cta.b32 %0, [%1];" : "=r"(value) : "l"(p) : "memory");
    return value;
}

static inline uint64_t devrt_nvptx_load_acquire_64(const volatile void *p, int scope)
{
    uint64_t value;
    if (scope == DEVRT_GPU_SCOPE_SYSTEM)
        __asm__ volatile("ld.acquire.sys.b64 %0, [%1];" : "=l"(value) : "l"(p) : "memory");
    else if (scope == DEVRT_GPU_SCOPE_DEVICE)
        __asm__ volatile("ld.acquire.gpu.b64 %0, [%1];" : "=l"(value) : "l"(p) : "memory");
    else
        __asm__ volatile("ld.acquire.cta.b64 %0, [%1];" : "=l"(value) : "l"(p) : "memory");
    return value;
}

static inline uint64_t devrt_nvptx_load_acquire(const volatile void *p, unsigned size, int scope)
{
    return size == 8 ? devrt_nvptx_load_acquire_64(p, scope)
                     : devrt_nvptx_load_acquire_32(p, scope);
}

/* The fence an atomic of this order needs before it, and after it. */
static inline void devrt_nvptx_fence_before(int order, int scope)
{
    if (order == __ATOMIC_RELEASE || order == __ATOMIC_ACQ_REL || order == __ATOMIC_SEQ_CST)
        devrt_arch_fence(order == __ATOMIC_SEQ_CST ? __ATOMIC_SEQ_CST : __ATOMIC_RELEASE, scope);
}

static inline void devrt_nvptx_fence_after(int order, int scope)
{
    if (order == __ATOMIC_ACQUIRE || order == __ATOMIC_ACQ_REL || order == __ATOMIC_SEQ_CST ||
        order == __ATOMIC_CONSUME)
        devrt_arch_fence(__ATOMIC_ACQUIRE, scope);
}

/*
 * barrier.sync without .aligned: lanes may reach it from divergent code. It orders the
 * memory accesses of the CTA's threads around it.
 */
static inline void devrt_arch_barrier(void)
{
    __nvvm_barrier_sync(0);
}

/*
 * The device cannot interrupt the host. It sets the doorbell word instead, one posted
 * write over PCIe, and the CUDA backend's server polls that word while it waits (see
 * host/backends/cuda.c); a plain store is enough because the server only asks whether the
 * word was set since it last cleared it.
 *
 * The fence after it is for latency: without one the GPU may hold the outbox flip and the
 * doorbell back while the wave goes on to poll. On the H200, three runs each way, one
 * warp's round trip took 11.7 to 12.0 us without it and 8.7 to 11.2 us with it
 * (docs/performance.md).
 */
static inline void devrt_arch_ring_doorbell(struct devrt_rpc_doorbell *doorbell)
{
    devrt_scoped_store_n(&doorbell->count, 1u, __ATOMIC_RELAXED, DEVRT_GPU_SCOPE_SYSTEM);
    __asm__ volatile("fence.sc.sys;" ::: "memory");
}

/* Whether the host's copies can reach P: global memory, not a thread's local or shared. */
static inline bool devrt_arch_host_can_read(const void *p)
{
    return __nvvm_isspacep_global(p);
}

#endif
