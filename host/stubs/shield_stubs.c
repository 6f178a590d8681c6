/*
 * A host definition of every foreign device symbol in shield.def. The names hold dots,
 * so each stub gets a C name of its own (from __COUNTER__, which only has to be unique
 * here) and its real name through an assembler label. The intrinsics take various
 * arguments; the stubs take none, which is safe because a caller's arguments are its own
 * to clean up and a stub never returns.
 */
#include <devrt/host_stubs.h>

#define DEVRT_SHIELD(name) DEVRT_SHIELD_STUB(__COUNTER__, name)
#define DEVRT_SHIELD_STUB(n, name) DEVRT_SHIELD_DEFINE(n, name)
#define DEVRT_SHIELD_DEFINE(n, name)                                                               \
    __attribute__((noreturn)) void devrt_shield_##n(void) __asm__(name);                           \
    void devrt_shield_##n(void)                                                                    \
    {                                                                                              \
        devrt_host_trap(name);                                                                     \
    }
#include <devrt/shield.def>
#undef DEVRT_SHIELD
