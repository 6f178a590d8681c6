/*
 * The host-emulation ABI: how the emulation backend of the host runtime runs a kernel
 * image (a shared object built from kernel C with the device library compiled for the
 * host). Each lane is a host thread; a wave is one lane wide. The runtime hands each lane
 * thread a devrt_emu_lane before it calls the kernel function.
 */
#ifndef DEVRT_EMU_H
#define DEVRT_EMU_H

#include <stdint.h>

struct devrt_emu_lane {
    uint32_t workitem[3];
    uint32_t workgroup[3];
    uint32_t workgroup_size[3];
    uint32_t num_workgroups[3];
    void *runtime; /* the launch's own bookkeeping; device code does not look inside */
    void (*barrier)(struct devrt_emu_lane *lane);
    __attribute__((noreturn)) void (*end_wave)(struct devrt_emu_lane *lane);
};

/*
 * A kernel's parameters as DEVRT_KERNELn records them: how many, and each one's size in
 * bytes. The image exports it as DEVRT_EMU_SIGNATURE_PREFIX followed by the kernel's name.
 */
#define DEVRT_EMU_SIGNATURE_PREFIX "__devrt_signature_"
#define DEVRT_EMU_MAX_PARAMETERS 8u
struct devrt_emu_signature {
    uint32_t count;
    uint32_t size[DEVRT_EMU_MAX_PARAMETERS];
};

/* Exported by every emulation image: binds the calling thread to a lane. */
#define DEVRT_EMU_ENTER_SYMBOL "__devrt_emu_enter"
typedef void devrt_emu_enter_fn(struct devrt_emu_lane *lane);

#endif
