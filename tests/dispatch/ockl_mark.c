/*
 * The timeout kernels' mark (tests/kernels/timeout.c) built with devrt for the HSA double,
 * which runs the emulation's mark in its place. With CALLS_OCKL it also holds a call of
 * ockl's hostcall, as a HIP kernel's printf does, on a path no launch takes: the code reads
 * the hostcall buffer whether or not a launch goes that way.
 */
#include <devrt/devrt.h>

#ifdef CALLS_OCKL
typedef long ockl_long2 __attribute__((ext_vector_type(2)));
ockl_long2 __ockl_hostcall_preview(uint32_t service, uint64_t arg0, uint64_t arg1, uint64_t arg2,
                                   uint64_t arg3, uint64_t arg4, uint64_t arg5, uint64_t arg6,
                                   uint64_t arg7);
#endif

DEVRT_KERNEL1(mark, uint32_t *, marked)
{
#ifdef CALLS_OCKL
    if (*marked == UINT32_MAX)
        marked[1] = (uint32_t)__ockl_hostcall_preview(1, 0, 0, 0, 0, 0, 0, 0, 0).x;
#endif
    __atomic_fetch_add(marked, 1u, __ATOMIC_RELAXED);
}
