/*
 * devrt device API. Include it from kernel code compiled for amdgcn-amd-amdhsa or
 * nvptx64-nvidia-cuda, from the host-emulation build (DEVRT_EMU defined), or from plain
 * host code, where the same functions are declared and libdevrt_host.a defines them as
 * trapping stubs.
 */
#ifndef DEVRT_DEVRT_H
#define DEVRT_DEVRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi.h"

#if defined(__AMDGCN__)
#define DEVRT_TARGET_AMDGCN 1
#elif defined(__NVPTX__)
#define DEVRT_TARGET_NVPTX 1
#elif defined(DEVRT_EMU)
#define DEVRT_TARGET_EMU 1
#else
#define DEVRT_TARGET_HOST 1
#endif

/*
 * Calls into the runtime may communicate between lanes, so on a GPU every one is
 * convergent: the optimizer must not move a call into or out of divergent control flow.
 */
#if defined(DEVRT_TARGET_AMDGCN) || defined(DEVRT_TARGET_NVPTX)
#define DEVRT_DEVICE_FUNCTION __attribute__((convergent))
#else
#define DEVRT_DEVICE_FUNCTION
#endif

/*
 * GPU compilers default to hidden visibility, and a hidden declaration in a kernel would
 * hide the library's exported state global when the two are linked.
 */
#if defined(DEVRT_TARGET_AMDGCN) || defined(DEVRT_TARGET_NVPTX)
#define DEVRT_DEVICE_VARIABLE __attribute__((visibility("protected")))
#else
#define DEVRT_DEVICE_VARIABLE
#endif

#if defined(DEVRT_TARGET_AMDGCN)
#define DEVRT_KERNEL __attribute__((amdgpu_kernel, visibility("protected")))
#elif defined(DEVRT_TARGET_NVPTX)
#define DEVRT_KERNEL __attribute__((nvptx_kernel, visibility("default")))
#elif defined(DEVRT_TARGET_EMU)
#define DEVRT_KERNEL __attribute__((visibility("default")))
#else
#define DEVRT_KERNEL
#endif

/* Dimensions for the grid functions. */
#define DEVRT_X 0u
#define DEVRT_Y 1u
#define DEVRT_Z 2u

#ifdef __cplusplus
extern "C" {
#endif

#define DEVRT_FUNCTION(ret, name, params) DEVRT_DEVICE_FUNCTION ret name params;
#define DEVRT_NORETURN(name, params) DEVRT_DEVICE_FUNCTION __attribute__((noreturn)) void name params;
#define DEVRT_VARIABLE(type, name) extern DEVRT_DEVICE_VARIABLE type name;
#include "symbols.def"
#undef DEVRT_FUNCTION
#undef DEVRT_NORETURN
#undef DEVRT_VARIABLE

#ifdef __cplusplus
}
#endif

/* Raise an exception with a message and the caller's source location. */
#define DEVRT_THROW(code, message)                                                           \
    devrt_signal_exception_at((code), (message), __FILE__, (uint32_t)__LINE__, 0)

#endif
