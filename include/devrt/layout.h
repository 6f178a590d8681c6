/*
 * Compile-time checks of the layouts device code and the host share: each side builds
 * them with its own compiler, so a field that moves on one side only would be read at the
 * wrong place without a word. The offsets are written out, not computed, so that any
 * change to a shared layout fails the build until its author has looked at it (and bumped
 * DEVRT_ABI_VERSION).
 */
#ifndef DEVRT_LAYOUT_H
#define DEVRT_LAYOUT_H

#define DEVRT_LAYOUT(type, field, offset)                                                          \
    _Static_assert(__builtin_offsetof(type, field) == (offset), #type "." #field " moved")
#define DEVRT_LAYOUT_SIZE(type, size) _Static_assert(sizeof(type) == (size), #type " resized")

#endif
