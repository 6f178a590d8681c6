/*
 * The host-emulation ABI: how the emulation backend of the host runtime runs a kernel
 * image (a shared object built from kernel C with the device library compiled for the
 * host). Each lane is a host thread; a wave is 1, 32 or 64 of them, scheduled independently
 * (docs/runtime.md). The runtime hands each lane thread a devrt_emu_lane before it calls the
 * kernel function.
 */
#ifndef DEVRT_EMU_H
#define DEVRT_EMU_H

#include <stdint.h>

/*
 * What a rendezvous of lanes of one wave gives each of them: who met, the ballot of their
 * predicates, and the value of the lowest of them.
 */
struct devrt_emu_meeting {
    uint64_t lanes;
    uint64_t ballot;
    uint32_t first;
};

struct devrt_emu_lane {
    uint32_t workitem[3];
    uint32_t workgroup[3];
    uint32_t workgroup_size[3];
    uint32_t num_workgroups[3];
    void *runtime; /* the launch's own bookkeeping; device code does not look inside */
    void (*barrier)(struct devrt_emu_lane *lane);
    __attribute__((noreturn)) void (*end_wave)(struct devrt_emu_lane *lane);
    uint32_t wave_size;
    uint32_t lane_id; /* within the wave */
    /*
     * Meet lanes of the wave: exactly the live lanes of MASK, or with MASK 0 whichever lanes
     * of the wave reach the caller's call site (its whole call stack) together.
     */
    void (*meet)(struct devrt_emu_lane *lane, uint64_t mask, int predicate, uint32_t value,
                 struct devrt_emu_meeting *out);
    /* The lane waits for something other lanes or the host will do (devrt_arch_sleep), on
       waves of any width; a launch past its timeout may end the lane here. */
    void (*sleep)(struct devrt_emu_lane *lane);
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

/*
 * How DEVRT_KERNELn kernels are called: the image exports DEVRT_EMU_CALL_PREFIX followed by
 * the kernel's name, which takes a pointer to each argument's bytes and calls the kernel, so
 * that the compiler, not the runtime, passes each value as the host ABI wants (a struct by
 * value goes in registers or memory by its fields' types).
 */
#define DEVRT_EMU_CALL_PREFIX "__devrt_call_"
typedef void devrt_emu_call_fn(void *const *values);

/* Exported by every emulation image: binds the calling thread to a lane. */
#define DEVRT_EMU_ENTER_SYMBOL "__devrt_emu_enter"
typedef void devrt_emu_enter_fn(struct devrt_emu_lane *lane);
/* In libdevrt_emu; <devrt/devrt.h> refers to it, so that every kernel image links it. */
#ifdef __cplusplus
extern "C"
#endif
    __attribute__((visibility("default"))) devrt_emu_enter_fn __devrt_emu_enter;

#endif
