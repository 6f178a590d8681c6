/*
 * Kernel arguments against the kernel's parameters as its image records them: the one check
 * and its message, for every backend (launch.c) and for devrt_image_check_args, which needs
 * no device.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobject.h"

#ifdef DEVRT_HAVE_AMDGPU_METADATA
#include "amdgpu_metadata.h"
#endif

/* Pinned: programs built against an earlier host.h pass arrays of this struct. */
_Static_assert(offsetof(struct devrt_arg, type) == 0, "devrt_arg.type moved");
_Static_assert(offsetof(struct devrt_arg, size) == 4, "devrt_arg.size must stay in the padding");
_Static_assert(offsetof(struct devrt_arg, value) == 8, "devrt_arg.value moved");
_Static_assert(sizeof(struct devrt_arg) == 16, "devrt_arg grew");

size_t devrt_arg_size(const struct devrt_arg *arg)
{
    switch (arg->type) {
    case DEVRT_ARG_BYTES: return arg->size;
    case DEVRT_ARG_I8:
    case DEVRT_ARG_U8: return 1;
    case DEVRT_ARG_I16:
    case DEVRT_ARG_U16: return 2;
    case DEVRT_ARG_I32:
    case DEVRT_ARG_U32:
    case DEVRT_ARG_F32: return 4;
    default: return 8;
    }
}

const void *devrt_arg_data(const struct devrt_arg *arg)
{
    return arg->type == DEVRT_ARG_BYTES ? arg->value.pointer : (const void *)&arg->value;
}

static const char *arg_type_name(enum devrt_arg_type type)
{
    switch (type) {
    case DEVRT_ARG_POINTER: return "pointer";
    case DEVRT_ARG_I8: return "i8";
    case DEVRT_ARG_U8: return "u8";
    case DEVRT_ARG_I16: return "i16";
    case DEVRT_ARG_U16: return "u16";
    case DEVRT_ARG_I32: return "i32";
    case DEVRT_ARG_U32: return "u32";
    case DEVRT_ARG_I64: return "i64";
    case DEVRT_ARG_U64: return "u64";
    case DEVRT_ARG_F32: return "f32";
    case DEVRT_ARG_F64: return "f64";
    case DEVRT_ARG_BYTES: return "bytes";
    }
    return NULL;
}

static const char *arg_type_label(enum devrt_arg_type type)
{
    const char *name = arg_type_name(type);
    return name ? name : "unknown";
}

int devrt_check_arg_types(const char *caller, const struct devrt_arg *args, size_t arg_count)
{
    for (size_t i = 0; i < arg_count; ++i) {
        const struct devrt_arg *a = &args[i];
        if (!arg_type_name(a->type))
            return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                              "%s: argument %zu has no devrt_arg_type (%u)", caller, i + 1,
                              (unsigned)a->type);
        if (a->type == DEVRT_ARG_BYTES && (!a->size || !a->value.pointer))
            return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                              "%s: argument %zu is %u bytes at %p; DEVRT_ARG_BYTES takes at "
                              "least one byte at a valid address",
                              caller, i + 1, a->size, a->value.pointer);
        /* What a positional initializer written for an older devrt_arg leaves. */
        if (a->type != DEVRT_ARG_BYTES && a->size)
            return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                              "%s: argument %zu, a %s, has a size (%u), which only "
                              "DEVRT_ARG_BYTES has; make arguments with the DEVRT_ARG_* macros "
                              "or by field name",
                              caller, i + 1, arg_type_name(a->type), a->size);
    }
    return DEVRT_SUCCESS;
}

/* A message of bounded length: what does not fit is cut, the rest is kept. */
struct message {
    char text[1024];
    size_t used;
};

static void add(struct message *m, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void add(struct message *m, const char *format, ...)
{
    if (m->used >= sizeof m->text - 1)
        return;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(m->text + m->used, sizeof m->text - m->used, format, args);
    va_end(args);
    if (n > 0)
        m->used += (size_t)n < sizeof m->text - m->used ? (size_t)n : sizeof m->text - 1 - m->used;
}

static const char *bytes(uint64_t n)
{
    return n == 1 ? "byte" : "bytes";
}

/* Whether a parameter of KIND takes an argument of TYPE (its size is compared apart). */
static bool kind_takes(uint32_t kind, enum devrt_arg_type type)
{
    bool floating = type == DEVRT_ARG_F32 || type == DEVRT_ARG_F64;
    switch (kind) {
    case DEVRT_PARAM_POINTER: return type == DEVRT_ARG_POINTER;
    case DEVRT_PARAM_SIGNED:
    case DEVRT_PARAM_UNSIGNED: return type != DEVRT_ARG_POINTER && !floating;
    case DEVRT_PARAM_FLOAT: return floating || type == DEVRT_ARG_BYTES;
    case DEVRT_PARAM_VALUE: return type != DEVRT_ARG_POINTER;
    default: return true;
    }
}

/* A parameter of KIND and SIZE as a message says it. */
static void add_kind(struct message *m, uint32_t kind, uint32_t size)
{
    switch (kind) {
    case DEVRT_PARAM_POINTER: add(m, "a pointer"); break;
    case DEVRT_PARAM_SIGNED: add(m, "a %u-bit signed integer", 8 * size); break;
    case DEVRT_PARAM_UNSIGNED: add(m, "a %u-bit unsigned integer", 8 * size); break;
    case DEVRT_PARAM_FLOAT: add(m, "a %u-bit float", 8 * size); break;
    default: add(m, "%u %s by value", size, bytes(size)); break;
    }
}

/* Both lists, of the parameters and of the arguments given, the latter cut at the former's
   length: a count the caller got wrong must not lead to reading past its array. */
static void add_lists(struct message *m, const char *kernel, const struct devrt_params *p,
                      const struct devrt_arg *args, size_t arg_count)
{
    add(m, "kernel %s takes %zu argument%s", kernel, p->count, p->count == 1 ? "" : "s");
    for (size_t i = 0; i < p->count; ++i)
        add(m, "%s%u %s%s", i ? ", " : " (", p->sizes[i], bytes(p->sizes[i]),
            i + 1 == p->count ? ")" : "");
    add(m, ", given %zu", arg_count);
    size_t listed = arg_count < p->count ? arg_count : p->count;
    for (size_t i = 0; i < listed; ++i) {
        size_t size = devrt_arg_size(&args[i]);
        add(m, "%s%s: %zu %s", i ? ", " : " (", arg_type_label(args[i].type), size, bytes(size));
    }
    if (listed && arg_count > listed)
        add(m, ", and %zu more", arg_count - listed);
    if (listed)
        add(m, ")");
}

int devrt_check_arguments(const char *caller, const char *kernel, const struct devrt_params *p,
                          const struct devrt_arg *args, size_t arg_count)
{
    struct message m = {.used = 0};
    if (arg_count != p->count) {
        add_lists(&m, kernel, p, args, arg_count);
        return devrt_fail(DEVRT_ERROR_ARGUMENTS, "%s", m.text);
    }
    int status = devrt_check_arg_types(caller, args, arg_count);
    for (size_t i = 0; i < arg_count && status == DEVRT_SUCCESS; ++i) {
        const struct devrt_arg *a = &args[i];
        uint32_t kind = p->kinds ? p->kinds[i] : DEVRT_PARAM_UNKNOWN;
        size_t size = devrt_arg_size(a);
        if (!kind_takes(kind, a->type)) {
            const char *name = p->names ? p->names[i] : NULL;
            add(&m, "kernel %s: argument %zu", kernel, i + 1);
            if (name && *name)
                add(&m, " (%s)", name);
            add(&m, " is ");
            add_kind(&m, kind, p->sizes[i]);
            if (a->type == DEVRT_ARG_POINTER)
                add(&m, ", given a pointer");
            else if (a->type == DEVRT_ARG_BYTES)
                add(&m, ", given %zu %s", size, bytes(size));
            else
                add(&m, ", given %s", arg_type_label(a->type));
            status = devrt_fail(DEVRT_ERROR_ARGUMENTS, "%s", m.text);
        } else if (size != p->sizes[i]) {
            add_lists(&m, kernel, p, args, arg_count);
            add(&m, "; argument %zu is %zu %s where the kernel takes %u", i + 1, size, bytes(size),
                p->sizes[i]);
            status = devrt_fail(DEVRT_ERROR_ARGUMENTS, "%s", m.text);
        }
    }
    return status;
}

#ifdef DEVRT_HAVE_AMDGPU_METADATA
int devrt_amdgpu_find_kernel(const struct devrt_amdgpu_metadata *metadata, const char *path,
                             const char *kernel, const struct devrt_amdgpu_kernel **found)
{
    *found = devrt_amdgpu_metadata_kernel(metadata, kernel);
    if (*found)
        return DEVRT_SUCCESS;
    struct message m = {.used = 0};
    add(&m, "%s: no kernel %s; it has", path, kernel);
    for (size_t i = 0; i < metadata->kernel_count; ++i)
        add(&m, "%s %s", i ? "," : "", metadata->kernels[i].name);
    if (!metadata->kernel_count)
        add(&m, " none");
    return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s", m.text);
}

int devrt_check_code_object_arguments(const char *caller,
                                      const struct devrt_amdgpu_metadata *metadata,
                                      const char *path, const char *kernel,
                                      const struct devrt_arg *args, size_t arg_count)
{
    const struct devrt_amdgpu_kernel *k;
    int status = devrt_amdgpu_find_kernel(metadata, path, kernel, &k);
    if (status == DEVRT_SUCCESS) {
        struct devrt_params params = {k->explicit_count, k->explicit_sizes, k->explicit_kinds,
                                      (const char *const *)k->explicit_names};
        status = devrt_check_arguments(caller, kernel, &params, args, arg_count);
    }
    return status;
}
#endif
