/*
 * The emulation's images (emu_image.c): a module's loaded image, which emu.c launches
 * kernels from.
 */
#ifndef DEVRT_EMU_IMAGE_H
#define DEVRT_EMU_IMAGE_H

#include <devrt/emu.h>

#include "backend.h"

struct emu_module {
    void *handle;
    devrt_emu_enter_fn *enter;
    int copy; /* the private copy the image was loaded from (open_copy), else -1 */
    struct devrt_state **state_variable;
    struct emu_module *next_loaded; /* among every module loaded, on any device */
};

/* The backend's load and unload (devrt_backend_ops): the image at PATH, as MODULE's. */
int devrt_emu_load(devrt_module *module, struct devrt_state ***state_variable);
void devrt_emu_unload(devrt_module *module);

#endif
