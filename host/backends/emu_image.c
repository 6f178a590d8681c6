/*
 * The emulation backend's images: dlopen of a kernel image, or of a private copy of it when
 * the file is loaded already, and the check that no two modules share a state.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu_image.h"
#include "backend.h"
#include "codeobject.h"

/*
 * dlopen maps a file once per process, so a second module of an image already loaded (on
 * this device or another) would share the first one's __devrt_state, and with it the first
 * module's channel and heap. Such an image is loaded again from a private copy, as a GPU
 * loads each module into memory of its own. dlopen also takes a name it has mapped already
 * for the same object: the copy's name, /proc/self/fd/N, stays unique only while N stays
 * open, so the copy's descriptor lives as long as the module. Every load is checked against
 * the modules loaded (loaded_modules), whatever the reason two could share a state. The
 * lock makes "loaded already?", the load and the check one step for threads loading at once.
 */
static pthread_mutex_t image_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_module *loaded_modules; /* under image_lock */

/* dlopen a copy of PATH in an anonymous file, which no other load can share. */
static void *open_copy(const char *path, int *copy)
{
    int in = open(path, O_RDONLY | O_CLOEXEC);
    int out = memfd_create("devrt-emu-image", MFD_CLOEXEC);
    void *handle = NULL;
    char buffer[65536], name[64];
    ssize_t n = 0;
    if (in >= 0 && out >= 0) {
        while ((n = read(in, buffer, sizeof buffer)) > 0)
            if (write(out, buffer, (size_t)n) != n) {
                n = -1;
                break;
            }
    }
    if (in < 0 || out < 0 || n < 0) {
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: cannot copy it to load it a second time: %s", path,
                   strerror(errno));
    } else {
        snprintf(name, sizeof name, "/proc/self/fd/%d", out);
        handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            devrt_fail(DEVRT_ERROR_IMAGE, "%s (a copy of %s)", dlerror(), path);
    }
    if (in >= 0)
        close(in);
    if (handle) {
        *copy = out;
    } else if (out >= 0) {
        close(out);
    }
    return handle;
}

/* Whether a module loaded already has the state variable at STATE; under image_lock. */
static bool state_taken(struct devrt_state **state)
{
    for (const struct emu_module *m = loaded_modules; m; m = m->next_loaded)
        if (m->state_variable == state)
            return true;
    return false;
}

static int open_image(struct emu_module *m, const char *path)
{
    void *loaded = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (loaded) {
        dlclose(loaded); /* RTLD_NOLOAD counted a reference too */
        m->handle = open_copy(path, &m->copy);
    } else {
        m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!m->handle)
            devrt_fail(DEVRT_ERROR_IMAGE, "%s", dlerror());
    }
    if (!m->handle)
        return DEVRT_ERROR_IMAGE;
    m->state_variable = dlsym(m->handle, DEVRT_STATE_SYMBOL);
    m->enter = (devrt_emu_enter_fn *)dlsym(m->handle, DEVRT_EMU_ENTER_SYMBOL);
    int status = DEVRT_SUCCESS;
    if (!m->state_variable || !m->enter)
        status = devrt_fail(DEVRT_ERROR_IMAGE,
                            "%s: not an emulation image (no %s or %s); link it with libdevrt_emu",
                            path, DEVRT_STATE_SYMBOL, DEVRT_EMU_ENTER_SYMBOL);
    else if (state_taken(m->state_variable))
        status = devrt_fail(DEVRT_ERROR_IMAGE,
                            "%s: the loader gave this module the %s of a module loaded already; "
                            "their channels and heaps would be one",
                            path, DEVRT_STATE_SYMBOL);
    return status;
}

static void close_image(struct emu_module *m)
{
    if (m->handle)
        dlclose(m->handle);
    if (m->copy >= 0)
        close(m->copy);
}

int devrt_emu_load(devrt_module *module, struct devrt_state ***state_variable)
{
    const char *path = devrt_module_path(module);
    struct emu_module *m = calloc(1, sizeof *m);
    if (!m)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a module");
    m->copy = -1;
    /* An image is a file: without a slash dlopen would search the library path instead. */
    char local[4096];
    if (!strchr(path, '/') && snprintf(local, sizeof local, "./%s", path) < (int)sizeof local)
        path = local;
    pthread_mutex_lock(&image_lock);
    int status = open_image(m, path);
    if (status == DEVRT_SUCCESS) {
        m->next_loaded = loaded_modules;
        loaded_modules = m;
    }
    pthread_mutex_unlock(&image_lock);
    if (status != DEVRT_SUCCESS) {
        close_image(m);
        free(m);
        return status;
    }
    *state_variable = m->state_variable;
    devrt_module_set_backend_state(module, m);
    return DEVRT_SUCCESS;
}

void devrt_emu_unload(devrt_module *module)
{
    struct emu_module *m = devrt_module_backend_state(module);
    pthread_mutex_lock(&image_lock);
    for (struct emu_module **p = &loaded_modules; *p; p = &(*p)->next_loaded)
        if (*p == m) {
            *p = m->next_loaded;
            break;
        }
    close_image(m);
    pthread_mutex_unlock(&image_lock);
    free(m);
}
