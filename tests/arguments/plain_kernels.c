/*
 * A kernel written as a plain function that calls nothing of devrt: its image links nothing
 * of the archive, so the runtime refuses it (the control of unit.devrt_run.emu_lane_only).
 */
#include <devrt/devrt.h>

DEVRT_KERNEL void nothing(void) {}
