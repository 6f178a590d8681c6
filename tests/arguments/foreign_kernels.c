/*
 * A shared object that never included <devrt/devrt.h>: it links nothing of the archive, and
 * the runtime refuses it as no emulation image (the control of unit.devrt_run.emu_plain).
 */
void nothing(void);

void nothing(void) {}
