/*
 * An image given to a backend that does not run its kind, refused with what the image is
 * and what the backend runs: the backend's own loader would fail with a message about
 * something else (dlopen says it "cannot open shared object file" of a file that exists).
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime.h"

#ifdef DEVRT_HAVE_AMDGPU_METADATA
#include "amdgpu_metadata.h"
#endif

/* What each backend runs, in words. */
static const char *runs(enum devrt_backend backend)
{
    switch (backend) {
    case DEVRT_BACKEND_HSA:
    case DEVRT_BACKEND_HIP: return "amdgcn code objects (.hsaco)";
    case DEVRT_BACKEND_EMU: return "emulation images (.so)";
    case DEVRT_BACKEND_CUDA: return "PTX (.ptx)";
    default: return NULL;
    }
}

/* What PATH is, by KIND (devrt_image_backend), into TEXT: a code object with its ISA. */
static void describe(const char *path, enum devrt_backend kind, char *text, size_t size)
{
    if (kind == DEVRT_BACKEND_EMU) {
        snprintf(text, size, "a host shared object");
        return;
    }
    if (kind == DEVRT_BACKEND_CUDA) {
        snprintf(text, size, "PTX");
        return;
    }
    snprintf(text, size, "an amdgcn code object");
#ifdef DEVRT_HAVE_AMDGPU_METADATA
    /* Its processor, where its note says; the message is complete without it. */
    size_t length;
    char *image = devrt_read_image(path, &length);
    struct devrt_amdgpu_metadata *m = NULL;
    if (image && devrt_amdgpu_metadata_read(image, length, path, &m) == DEVRT_SUCCESS)
        snprintf(text, size, "an amdgcn code object (%s)", m->isa);
    devrt_amdgpu_metadata_free(m);
    free(image);
#else
    (void)path;
#endif
}

int devrt_image_check_backend(const char *path, enum devrt_backend backend)
{
    enum devrt_backend kind = devrt_image_backend(path);
    /* devrt_image_backend names HSA for every amdgcn code object: HIP runs them too. */
    if (backend == DEVRT_BACKEND_HIP && kind == DEVRT_BACKEND_HSA)
        return DEVRT_SUCCESS;
    if (kind == DEVRT_BACKEND_AUTO || kind == backend || !runs(backend))
        return DEVRT_SUCCESS;
    char what[128];
    describe(path, kind, what, sizeof what);
    return devrt_fail(DEVRT_ERROR_IMAGE, "%s is %s; the %s backend runs %s", path, what,
                      devrt_backend_name(backend), runs(backend));
}
