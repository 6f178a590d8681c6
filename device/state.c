/* The kernel state global: how device code finds the block its host runtime set up. */
#include "arch/arch.h"

static const struct devrt_library_id devrt_library_id = {DEVRT_STATE_MAGIC, DEVRT_ABI_VERSION};

/*
 * Protected, so it is exported from every code object yet never preempted. Until the host
 * attaches a state block it points at the library id, which the host checks first. "used"
 * keeps it external when a compiler links the library with internalization
 * (-mlink-builtin-bitcode), which would otherwise hide it from the host.
 */
__attribute__((used, retain, visibility("protected"))) struct devrt_state *__devrt_state =
    (struct devrt_state *)&devrt_library_id;

struct devrt_state *devrt_kernel_state(void)
{
    return __devrt_state;
}
