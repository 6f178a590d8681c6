/*
 * A kernel as DEVRT_KERNELn made it before it defined a caller: its signature, and no
 * __devrt_call_old_by_value. The emulation must refuse it a struct (libffi cannot pass one)
 * instead of calling it without an ffi type.
 */
#include <devrt/devrt.h>

#include "struct_kernels.h"

extern const struct devrt_emu_signature __devrt_signature_old_by_value;
__attribute__((visibility("default")))
const struct devrt_emu_signature __devrt_signature_old_by_value = {
    1, {sizeof(struct devrt_test_point)}};

DEVRT_KERNEL void old_by_value(struct devrt_test_point p)
{
    if (devrt_global_id(DEVRT_X) == 0)
        devrt_printf("%g\n", (double)p.x);
}
