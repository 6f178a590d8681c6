/*
 * devrt attached to a module that a HIP program loaded (hipModuleLoad*) and launches itself
 * (hipModuleLaunchKernel on its own streams). <devrt/attach.h> says the rest:
 * devrt_attached_check after the program's synchronization, devrt_detach at the end.
 *
 * HIP is opened at run time (libamdhip64.so, or the file $DEVRT_HIP_LIBRARY names): this
 * header needs no HIP header, and libdevrt no libamdhip64.
 */
#ifndef DEVRT_HIP_H
#define DEVRT_HIP_H

#include <devrt/attach.h>

#ifdef __cplusplus
extern "C" {
#endif

/* HIP's handle, as hip_runtime_api.h declares it (a typedef may be repeated in C11). */
typedef struct ihipModule_t *hipModule_t;

/*
 * Attach to MODULE, loaded on the calling thread's current HIP device. A code object that
 * does not link devrt-amdgcn.bc is refused with DEVRT_ERROR_IMAGE.
 */
int devrt_hip_attach(hipModule_t module, const struct devrt_device_options *options,
                     devrt_module **attached);

#ifdef __cplusplus
}
#endif

#endif
