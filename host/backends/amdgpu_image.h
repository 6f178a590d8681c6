/* The registry's view of amdgcn code objects, through the code-object layer. */
#ifndef DEVRT_AMDGPU_IMAGE_H
#define DEVRT_AMDGPU_IMAGE_H

#include <stddef.h>

#include <devrt/host.h>

/* struct devrt_backend_entry's check_image_args and describe_image for amdgcn code objects. */
int devrt_amdgpu_check_image_args(const void *image, size_t size, const char *path,
                                  const char *kernel, const struct devrt_arg *args,
                                  size_t arg_count);
void devrt_amdgpu_describe_image(const void *image, size_t size, const char *path, char *text,
                                 size_t length);

#endif
