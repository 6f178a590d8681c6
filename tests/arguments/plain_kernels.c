/*
 * A kernel written as a plain function that calls nothing of devrt: including
 * <devrt/devrt.h> is enough for its image to link what loading it needs.
 */
#include <devrt/devrt.h>

DEVRT_KERNEL void nothing(void) {}
