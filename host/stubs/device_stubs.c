/*
 * A host definition of every symbol in the manifest (symbols.def), for host images that
 * reference device code they never call. Including devrt.h first makes the compiler check
 * each stub against the device declaration, so a signature change cannot slip past.
 */
#include <devrt/devrt.h>
#include <devrt/host_stubs.h>

/* The stubs keep the device parameter names but never look at the arguments. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define DEVRT_FUNCTION(ret, name, params)                                                          \
    ret name params                                                                                \
    {                                                                                              \
        devrt_host_trap(#name);                                                                    \
    }
#define DEVRT_NORETURN(name, params)                                                               \
    void name params                                                                               \
    {                                                                                              \
        devrt_host_trap(#name);                                                                    \
    }
/* A device global is data: the host sees a zero-initialized object of the same type. */
#define DEVRT_VARIABLE(type, name) type name;
#include <devrt/symbols.def>
#undef DEVRT_FUNCTION
#undef DEVRT_NORETURN
#undef DEVRT_VARIABLE
