/*
 * The architecture layer: the only code in device/ that knows what it runs on. Each
 * target header provides the same static inline functions (devrt_arch_*), the atomic
 * macros below, and four macros of its own:
 *
 *   DEVRT_ARCH_INLINE       on the functions that must be inlined
 *   DEVRT_ARCH_READ_ONLY(p) p, as memory the kernel does not write
 *   DEVRT_ARCH_POLL_ORDER   the memory order of one poll of host memory for a port's
 *                           hand-back (a wait as long as the server's turn or a stream's)
 *   DEVRT_ARCH_REPLY_POLL_ORDER  the same for a lane's one-word reply (a round trip's wait)
 *   DEVRT_ARCH_FLIP_ORDER   the memory order of the outbox flip (at least release)
 *   DEVRT_ARCH_VA_ARG       1 where C's variable arguments work (devrt_vprintf reads them)
 *
 * Everything above it is target-free C.
 *
 * Scopes name who must observe an atomic: the wave, the workgroup, the device, or the
 * whole system (host included).
 */
#ifndef DEVRT_ARCH_H
#define DEVRT_ARCH_H

#include <devrt/devrt.h>

#if (defined(DEVRT_TARGET_AMDGCN) || defined(DEVRT_TARGET_NVPTX)) && defined(__MEMORY_SCOPE_SYSTEM)
/* clang 18 and newer: the scoped atomic builtins and their scopes. */
#define DEVRT_GPU_SCOPE_WAVE __MEMORY_SCOPE_WVFRNT
#define DEVRT_GPU_SCOPE_WORKGROUP __MEMORY_SCOPE_WRKGRP
#define DEVRT_GPU_SCOPE_DEVICE __MEMORY_SCOPE_DEVICE
#define DEVRT_GPU_SCOPE_SYSTEM __MEMORY_SCOPE_SYSTEM
#define devrt_scoped_load_n __scoped_atomic_load_n
#define devrt_scoped_store_n __scoped_atomic_store_n
#define devrt_scoped_fetch_add __scoped_atomic_fetch_add
#define devrt_scoped_fetch_or __scoped_atomic_fetch_or
#define devrt_scoped_fetch_and __scoped_atomic_fetch_and
#define devrt_scoped_compare_exchange_n __scoped_atomic_compare_exchange_n
#elif defined(DEVRT_TARGET_AMDGCN) || defined(DEVRT_TARGET_NVPTX)
/*
 * clang 16 and 17 (LLVM 16 is Julia 1.11's) have no __scoped_atomic_* builtins; those came
 * in clang 18. HIP's atomic builtins, which clang offers in every language, take the same
 * orders and a scope in HIP's numbering (__HIP_MEMORY_SCOPE_*, which clang predefines for
 * HIP only, hence the numbers), and clang turns both kinds into the same LLVM atomics and
 * sync scopes ("wavefront", "workgroup", "agent", and "" for the system), so the
 * instructions are the same: tests/codegen/memory_model.py checks them on every LLVM.
 */
#define DEVRT_GPU_SCOPE_WAVE 2
#define DEVRT_GPU_SCOPE_WORKGROUP 3
#define DEVRT_GPU_SCOPE_DEVICE 4
#define DEVRT_GPU_SCOPE_SYSTEM 5
#define devrt_scoped_load_n __hip_atomic_load
#define devrt_scoped_store_n __hip_atomic_store
#define devrt_scoped_fetch_add __hip_atomic_fetch_add
#define devrt_scoped_fetch_or __hip_atomic_fetch_or
#define devrt_scoped_fetch_and __hip_atomic_fetch_and
/* devrt asks for strong exchanges only, the one kind HIP's builtin has. */
#define devrt_scoped_compare_exchange_n(p, expected, desired, weak, success, failure, scope)       \
    __hip_atomic_compare_exchange_strong((p), (expected), (desired), (success), (failure), (scope))
#endif

#if defined(DEVRT_TARGET_AMDGCN) || defined(DEVRT_TARGET_NVPTX)
#define DEVRT_SCOPE_WAVE DEVRT_GPU_SCOPE_WAVE
#define DEVRT_SCOPE_WORKGROUP DEVRT_GPU_SCOPE_WORKGROUP
#define DEVRT_SCOPE_DEVICE DEVRT_GPU_SCOPE_DEVICE
#if defined(DEVRT_CONTROL_AGENT_SCOPE)
/*
 * A control build for the memory-model test (tests/codegen/memory_model.py), never
 * shipped: the host's traffic at the device's scope, which that test must refuse.
 */
#define DEVRT_SCOPE_SYSTEM DEVRT_GPU_SCOPE_DEVICE
#else
#define DEVRT_SCOPE_SYSTEM DEVRT_GPU_SCOPE_SYSTEM
#endif
#endif

#if defined(DEVRT_TARGET_AMDGCN)
#include "amdgcn.h"
#elif defined(DEVRT_TARGET_NVPTX)
#include "nvptx.h"
#elif defined(DEVRT_TARGET_EMU)
#include "emu.h"
#else
#error "device sources are built for amdgcn, nvptx or emu (define DEVRT_EMU)"
#endif

#if defined(DEVRT_TARGET_NVPTX)
/*
 * LLVM 19's NVPTX back end drops the order of atomics (nvptx.h says how): an acquire load of
 * 4 or 8 bytes is written in PTX there; every other operation is issued relaxed and ordered
 * by explicit fences of its scope.
 */
#define DEVRT_NVPTX_ORDERED_SIZE(p) (sizeof(*(p)) == 4 || sizeof(*(p)) == 8)
/* The outer cast keeps the loaded type: ?: would promote a narrow one to int. */
#define devrt_atomic_load(p, order, scope)                                                         \
    ((__typeof__(*(p)))((order) == __ATOMIC_ACQUIRE && DEVRT_NVPTX_ORDERED_SIZE(p)                 \
                            ? (__typeof__(*(p)))(uintptr_t)devrt_nvptx_load_acquire(               \
                                  (p), sizeof(*(p)), (scope))                                      \
                            : ({                                                                   \
                                  devrt_nvptx_fence_before(                                        \
                                      (order) == __ATOMIC_SEQ_CST ? (order) : __ATOMIC_RELAXED,    \
                                      (scope));                                                    \
                                  __typeof__(*(p)) devrt_value_ =                                  \
                                      devrt_scoped_load_n((p), __ATOMIC_RELAXED, (scope));         \
                                  devrt_nvptx_fence_after((order), (scope));                       \
                                  devrt_value_;                                                    \
                              })))
#define devrt_atomic_store(p, v, order, scope)                                                     \
    do {                                                                                           \
        devrt_nvptx_fence_before((order), (scope));                                                \
        devrt_scoped_store_n((p), (v), __ATOMIC_RELAXED, (scope));                                 \
    } while (0)
#define DEVRT_NVPTX_RMW(op, p, v, order, scope)                                                    \
    ({                                                                                             \
        devrt_nvptx_fence_before((order), (scope));                                                \
        __typeof__(*(p)) devrt_old_ = op((p), (v), __ATOMIC_RELAXED, (scope));                     \
        devrt_nvptx_fence_after((order), (scope));                                                 \
        devrt_old_;                                                                                \
    })
#define devrt_atomic_fetch_add(p, v, order, scope)                                                 \
    DEVRT_NVPTX_RMW(devrt_scoped_fetch_add, p, v, order, scope)
#define devrt_atomic_fetch_or(p, v, order, scope)                                                  \
    DEVRT_NVPTX_RMW(devrt_scoped_fetch_or, p, v, order, scope)
#define devrt_atomic_fetch_and(p, v, order, scope)                                                 \
    DEVRT_NVPTX_RMW(devrt_scoped_fetch_and, p, v, order, scope)
#define devrt_atomic_cas(p, expected, desired, order, scope)                                       \
    ({                                                                                             \
        devrt_nvptx_fence_before((order), (scope));                                                \
        bool devrt_swapped_ = devrt_scoped_compare_exchange_n(                                     \
            (p), (expected), (desired), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED, (scope));       \
        devrt_nvptx_fence_after((order), (scope));                                                 \
        devrt_swapped_;                                                                            \
    })
#define devrt_atomic_fence(order, scope) devrt_arch_fence((order), (scope))
#elif defined(DEVRT_TARGET_AMDGCN)
#define devrt_atomic_load(p, order, scope) devrt_scoped_load_n((p), (order), (scope))
#define devrt_atomic_store(p, v, order, scope) devrt_scoped_store_n((p), (v), (order), (scope))
#define devrt_atomic_fetch_add(p, v, order, scope)                                                 \
    devrt_scoped_fetch_add((p), (v), (order), (scope))
#define devrt_atomic_fetch_or(p, v, order, scope) devrt_scoped_fetch_or((p), (v), (order), (scope))
#define devrt_atomic_fetch_and(p, v, order, scope)                                                 \
    devrt_scoped_fetch_and((p), (v), (order), (scope))
#define devrt_atomic_cas(p, expected, desired, order, scope)                                       \
    devrt_scoped_compare_exchange_n((p), (expected), (desired), false, (order), __ATOMIC_RELAXED,  \
                                    (scope))
#define devrt_atomic_fence(order, scope) devrt_arch_fence((order), (scope))
#else
/* On the host every scope is the whole process. */
#define DEVRT_SCOPE_WAVE 0
#define DEVRT_SCOPE_WORKGROUP 0
#define DEVRT_SCOPE_DEVICE 0
#define DEVRT_SCOPE_SYSTEM 0
#define devrt_atomic_load(p, order, scope) __atomic_load_n((p), (order))
#define devrt_atomic_store(p, v, order, scope) __atomic_store_n((p), (v), (order))
/* Read-modify-writes are counted (emu.h), so tests can see how many a wave issues. */
#define devrt_atomic_fetch_add(p, v, order, scope)                                                 \
    (DEVRT_EMU_COUNT_ATOMIC(), __atomic_fetch_add((p), (v), (order)))
#define devrt_atomic_fetch_or(p, v, order, scope)                                                  \
    (DEVRT_EMU_COUNT_ATOMIC(), __atomic_fetch_or((p), (v), (order)))
#define devrt_atomic_fetch_and(p, v, order, scope)                                                 \
    (DEVRT_EMU_COUNT_ATOMIC(), __atomic_fetch_and((p), (v), (order)))
#define devrt_atomic_cas(p, expected, desired, order, scope)                                       \
    (DEVRT_EMU_COUNT_ATOMIC(),                                                                     \
     __atomic_compare_exchange_n((p), (expected), (desired), false, (order), __ATOMIC_RELAXED))
#define devrt_atomic_fence(order, scope) devrt_arch_fence((order), (scope))
#endif

#endif
