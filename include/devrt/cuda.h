/*
 * devrt attached to a module that a CUDA driver-API program loaded (cuModuleLoad*) and
 * launches itself (cuLaunchKernel on its own streams). <devrt/attach.h> says the rest:
 * devrt_attached_check after the program's synchronization, devrt_detach at the end.
 *
 * The driver is opened at run time, as devrt's CUDA backend opens it: this header needs
 * no CUDA header, and libdevrt no libcuda.
 */
#ifndef DEVRT_CUDA_H
#define DEVRT_CUDA_H

#include <devrt/attach.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The driver's handle, as cuda.h declares it (a typedef may be repeated in C11). */
typedef struct CUmod_st *CUmodule;

/*
 * Attach to MODULE, in the context current on the calling thread (the module's). The
 * device must have unified addressing and map host memory (sm_70 or newer does). A module
 * whose PTX does not link devrt-nvptx.bc is refused with DEVRT_ERROR_IMAGE.
 */
int devrt_cuda_attach(CUmodule module, const struct devrt_device_options *options,
                      devrt_module **attached);

#ifdef __cplusplus
}
#endif

#endif
