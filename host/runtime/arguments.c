/* devrt_image_check_args: a kernel's arguments against an image, before any device. */
#include <stdlib.h>

#include "runtime.h"

int devrt_image_check_args(const char *path, enum devrt_backend backend, const char *kernel,
                           const struct devrt_arg *args, size_t arg_count)
{
    if (!path || !kernel || (arg_count && !args))
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_image_check_args: missing argument");
    size_t size;
    char *image = devrt_read_image(path, &size);
    if (!image)
        return DEVRT_ERROR_IMAGE;
    /* AUTO: the image's kind; the others first refuse an image of another kind. */
    const struct devrt_backend_entry *entry =
        backend == DEVRT_BACKEND_AUTO
            ? devrt_backend_sniff((const unsigned char *)image, size < 64 ? size : 64)
            : devrt_backend_entry(backend);
    int status = DEVRT_SUCCESS;
    if (backend != DEVRT_BACKEND_AUTO)
        status = devrt_image_check_kind(image, size, path, backend);
    /*
     * The other images say what their kernels take only once loaded (devrt_launch checks);
     * an image that says it here checks the count before the arguments' types.
     */
    if (status == DEVRT_SUCCESS && entry && entry->image->check_image_args)
        status = entry->image->check_image_args(image, size, path, kernel, args, arg_count);
    else if (status == DEVRT_SUCCESS)
        status = devrt_check_arg_types("devrt_image_check_args", args, arg_count);
    free(image);
    return status;
}
