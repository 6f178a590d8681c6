/*
 * The code-object layer (host/codeobject/): reading an image, an amdgcn code object's
 * metadata, a kernel's arguments and a launch's geometry checked against what the image
 * records, and the dispatch packed from a checked launch. It depends on nothing of the
 * runtime: the runtime, its backends and devrt-run build on it.
 */
#ifndef DEVRT_CODEOBJECT_H
#define DEVRT_CODEOBJECT_H

#include <stddef.h>
#include <stdint.h>

#include <devrt/host.h>

/* error.c: sets the thread's last error (devrt_last_error) and returns STATUS. */
int devrt_fail(int status, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* image.c: the whole file, NUL-terminated; NULL with the error set. */
char *devrt_read_image(const char *path, size_t *size);

/* kernel_args.c */
size_t devrt_arg_size(const struct devrt_arg *arg);
/* Where the value's bytes are, little-endian: in the union, or DEVRT_ARG_BYTES' pointer. */
const void *devrt_arg_data(const struct devrt_arg *arg);
/*
 * Every type known, every DEVRT_ARG_BYTES at least one byte somewhere; before any backend,
 * for kernels whose parameters the image does not record (devrt_check_arguments does it
 * otherwise, once the count is known to be right).
 */
int devrt_check_arg_types(const char *caller, const struct devrt_arg *args, size_t arg_count);

/*
 * What a parameter takes beyond its size, where the image records it: the values are
 * <devrt/emu.h>'s DEVRT_EMU_KIND_*, which emulation images record as they are; an amdgcn
 * code object's .value_kind says pointer (global_buffer) or by value (by_value) alone.
 */
enum devrt_param_kind {
    DEVRT_PARAM_UNKNOWN,  /* its size alone is compared */
    DEVRT_PARAM_POINTER,  /* DEVRT_ARG_POINTER only */
    DEVRT_PARAM_SIGNED,   /* an integer type of its size, or bytes; signedness is not compared */
    DEVRT_PARAM_UNSIGNED, /* the same */
    DEVRT_PARAM_FLOAT,    /* DEVRT_ARG_F32 or F64 of its size, or bytes */
    DEVRT_PARAM_VALUE     /* anything of its size but a pointer */
};

/* A kernel's parameters as its image records them. */
struct devrt_params {
    size_t count;
    const uint32_t *sizes;    /* COUNT of them, in bytes */
    const uint32_t *kinds;    /* enum devrt_param_kind each, or NULL: sizes alone */
    const char *const *names; /* as the source names them, or NULL (or a NULL entry): unknown */
};

/*
 * DEVRT_ERROR_ARGUMENTS, with a message naming the kernel and what differs, unless ARGS fit
 * PARAMS: the count first, so that no more arguments are read than the kernel takes
 * (CALLER names the API in devrt_check_arg_types' messages), then each argument's kind and
 * size.
 */
int devrt_check_arguments(const char *caller, const char *kernel, const struct devrt_params *params,
                          const struct devrt_arg *args, size_t arg_count);
struct devrt_amdgpu_metadata;
struct devrt_amdgpu_kernel;
/* KERNEL of the metadata; DEVRT_ERROR_NO_KERNEL, naming the kernels it has, if none. */
int devrt_amdgpu_find_kernel(const struct devrt_amdgpu_metadata *metadata, const char *path,
                             const char *kernel, const struct devrt_amdgpu_kernel **found);
/* The same against a code object's metadata; DEVRT_ERROR_NO_KERNEL if it lacks KERNEL. */
int devrt_check_code_object_arguments(const char *caller,
                                      const struct devrt_amdgpu_metadata *metadata,
                                      const char *path, const char *kernel,
                                      const struct devrt_arg *args, size_t arg_count);

#endif
