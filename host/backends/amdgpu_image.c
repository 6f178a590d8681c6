/* What the registry asks of an amdgcn code object without a device: its kernels' arguments
   and its ISA, from its metadata. */
#include <stdio.h>

#include "amdgpu_image.h"
#include "amdgpu_metadata.h"
#include "codeobject.h"

int devrt_amdgpu_check_image_args(const void *image, size_t size, const char *path,
                                  const char *kernel, const struct devrt_arg *args,
                                  size_t arg_count)
{
    struct devrt_amdgpu_metadata *metadata;
    int status = devrt_amdgpu_metadata_read(image, size, path, &metadata);
    if (status == DEVRT_SUCCESS) {
        status = devrt_check_code_object_arguments("devrt_image_check_args", metadata, path, kernel,
                                                   args, arg_count);
        devrt_amdgpu_metadata_free(metadata);
    }
    return status;
}

void devrt_amdgpu_describe_image(const void *image, size_t size, const char *path, char *text,
                                 size_t length)
{
    /* Its processor, where its note says; the message is complete without it. */
    struct devrt_amdgpu_metadata *m = NULL;
    char error[1024];
    snprintf(error, sizeof error, "%s", devrt_last_error());
    if (devrt_amdgpu_metadata_read(image, size, path, &m) == DEVRT_SUCCESS)
        snprintf(text, length, "an amdgcn code object (%s)", m->isa);
    devrt_amdgpu_metadata_free(m);
    /* A note that cannot be read is not this message's subject. */
    devrt_fail(DEVRT_SUCCESS, "%s", error);
}
