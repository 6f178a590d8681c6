/*
 * Compile-time checks of the layouts device code and the host share: each side builds
 * them with its own compiler, so a field that moves on one side only would be read at the
 * wrong place without a word. The offsets are written out, not computed, so that any
 * change to a shared layout fails the build until its author has looked at it (and bumped
 * DEVRT_ABI_VERSION).
 */
#ifndef DEVRT_LAYOUT_H
#define DEVRT_LAYOUT_H

/* The headers are C17; C++ programs include them too, and spell these two differently. */
#ifdef __cplusplus
#define DEVRT_STATIC_ASSERT(condition, message) static_assert(condition, message)
#define DEVRT_ALIGNAS(bytes) alignas(bytes)
#else
#define DEVRT_STATIC_ASSERT(condition, message) _Static_assert(condition, message)
#define DEVRT_ALIGNAS(bytes) _Alignas(bytes)
#endif

#define DEVRT_LAYOUT(type, field, offset)                                                          \
    DEVRT_STATIC_ASSERT(__builtin_offsetof(type, field) == (offset), #type "." #field " moved")
#define DEVRT_LAYOUT_SIZE(type, size) DEVRT_STATIC_ASSERT(sizeof(type) == (size), #type " resized")

#endif
