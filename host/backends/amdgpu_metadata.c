/*
 * The .amdhsa.kernels metadata of amdgcn code objects: elfutils' libelf finds the
 * NT_AMDGPU_METADATA note, msgpack-c reads it. The file is untrusted input: every key is
 * type-checked, and what the runtime would act on (sizes, offsets) is bounded.
 */
#include <gelf.h>
#include <libelf.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdgpu_metadata.h"
#include "runtime.h"

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif
#define DEVRT_NT_AMDGPU_METADATA 32u

/* Where a malformed note went wrong, for the message. */
struct reader {
    const char *path;
    char where[160];
};

static int malformed(const struct reader *r, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static int malformed(const struct reader *r, const char *format, ...)
{
    char what[512];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    return devrt_fail(DEVRT_ERROR_IMAGE, "%s: malformed AMDGPU metadata: %s%s", r->path, r->where,
                      what);
}

static bool is_key(const msgpack_object *key, const char *name)
{
    size_t length = strlen(name);
    return key->type == MSGPACK_OBJECT_STR && key->via.str.size == length &&
           memcmp(key->via.str.ptr, name, length) == 0;
}

/* The value of KEY in MAP, or NULL. */
static const msgpack_object *lookup(const msgpack_object *map, const char *key)
{
    for (uint32_t i = 0; i < map->via.map.size; ++i)
        if (is_key(&map->via.map.ptr[i].key, key))
            return &map->via.map.ptr[i].val;
    return NULL;
}

static int get_u32(const struct reader *r, const msgpack_object *map, const char *key,
                   bool required, uint32_t *out)
{
    const msgpack_object *value = lookup(map, key);
    if (!value) {
        *out = 0;
        return required ? malformed(r, "no %s", key) : DEVRT_SUCCESS;
    }
    if (value->type != MSGPACK_OBJECT_POSITIVE_INTEGER || value->via.u64 > UINT32_MAX)
        return malformed(r, "%s is not an unsigned 32-bit integer", key);
    *out = (uint32_t)value->via.u64;
    return DEVRT_SUCCESS;
}

static int get_bool(const struct reader *r, const msgpack_object *map, const char *key, bool *out)
{
    const msgpack_object *value = lookup(map, key);
    *out = false;
    if (!value)
        return DEVRT_SUCCESS;
    if (value->type != MSGPACK_OBJECT_BOOLEAN)
        return malformed(r, "%s is not a boolean", key);
    *out = value->via.boolean;
    return DEVRT_SUCCESS;
}

/* A copy of the string KEY, NUL-terminated; *out stays NULL when it is absent. */
static int get_string(const struct reader *r, const msgpack_object *map, const char *key,
                      bool required, char **out)
{
    const msgpack_object *value = lookup(map, key);
    *out = NULL;
    if (!value)
        return required ? malformed(r, "no %s", key) : DEVRT_SUCCESS;
    if (value->type != MSGPACK_OBJECT_STR)
        return malformed(r, "%s is not a string", key);
    const char *text = value->via.str.ptr;
    uint32_t size = value->via.str.size;
    if (memchr(text, '\0', size))
        return malformed(r, "%s holds a NUL byte", key);
    *out = malloc((size_t)size + 1);
    if (!*out)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for AMDGPU metadata");
    memcpy(*out, text, size);
    (*out)[size] = '\0';
    return DEVRT_SUCCESS;
}

static int read_arg(const struct reader *r, const msgpack_object *map, uint32_t kernarg_size,
                    struct devrt_amdgpu_arg *arg)
{
    if (map->type != MSGPACK_OBJECT_MAP)
        return malformed(r, "not a map");
    int status = get_u32(r, map, ".offset", true, &arg->offset);
    if (status == DEVRT_SUCCESS)
        status = get_u32(r, map, ".size", true, &arg->size);
    if (status == DEVRT_SUCCESS)
        status = get_string(r, map, ".value_kind", true, &arg->value_kind);
    if (status != DEVRT_SUCCESS)
        return status;
    if ((uint64_t)arg->offset + arg->size > kernarg_size)
        return malformed(r, "%u bytes at offset %u, past the kernarg segment's %u", arg->size,
                         arg->offset, kernarg_size);
    arg->hidden = strncmp(arg->value_kind, "hidden_", 7) == 0;
    return DEVRT_SUCCESS;
}

static int read_kernel(struct reader *r, const msgpack_object *map, size_t index,
                       struct devrt_amdgpu_kernel *k)
{
    snprintf(r->where, sizeof r->where, "kernel %zu: ", index);
    if (map->type != MSGPACK_OBJECT_MAP)
        return malformed(r, "not a map");
    int status = get_string(r, map, ".name", true, &k->name);
    if (status != DEVRT_SUCCESS)
        return status;
    snprintf(r->where, sizeof r->where, "kernel %.100s: ", k->name);
    struct {
        const char *key;
        uint32_t *field;
    } numbers[] = {
        {".kernarg_segment_size", &k->kernarg_segment_size},
        {".kernarg_segment_align", &k->kernarg_segment_align},
        {".group_segment_fixed_size", &k->group_segment_fixed_size},
        {".private_segment_fixed_size", &k->private_segment_fixed_size},
        {".max_flat_workgroup_size", &k->max_flat_workgroup_size},
        {".wavefront_size", &k->wavefront_size},
        {".sgpr_count", &k->sgpr_count},
        {".vgpr_count", &k->vgpr_count},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0] && status == DEVRT_SUCCESS; ++i)
        status = get_u32(r, map, numbers[i].key, true, numbers[i].field);
    if (status == DEVRT_SUCCESS)
        status = get_string(r, map, ".symbol", true, &k->symbol);
    if (status == DEVRT_SUCCESS)
        status = get_bool(r, map, ".uses_dynamic_stack", &k->uses_dynamic_stack);
    if (status != DEVRT_SUCCESS)
        return status;

    const msgpack_object *args = lookup(map, ".args");
    if (!args)
        return DEVRT_SUCCESS; /* a kernel without arguments may leave .args out */
    if (args->type != MSGPACK_OBJECT_ARRAY)
        return malformed(r, ".args is not an array");
    k->args = calloc(args->via.array.size ? args->via.array.size : 1, sizeof *k->args);
    if (!k->args)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for AMDGPU metadata");
    for (uint32_t i = 0; i < args->via.array.size; ++i) {
        snprintf(r->where, sizeof r->where, "kernel %.100s: .args[%u]: ", k->name, i);
        status = read_arg(r, &args->via.array.ptr[i], k->kernarg_segment_size, &k->args[i]);
        k->arg_count = i + 1; /* what the free must look at, read or not */
        if (status != DEVRT_SUCCESS)
            return status;
        if (!k->args[i].hidden)
            k->explicit_count++;
    }
    return DEVRT_SUCCESS;
}

static int read_map(struct reader *r, const msgpack_object *root, struct devrt_amdgpu_metadata *m)
{
    if (root->type != MSGPACK_OBJECT_MAP)
        return malformed(r, "not a map");
    const msgpack_object *version = lookup(root, "amdhsa.version");
    if (!version || version->type != MSGPACK_OBJECT_ARRAY || version->via.array.size != 2 ||
        version->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
        version->via.array.ptr[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return malformed(r, "amdhsa.version is not two unsigned integers");
    if (version->via.array.ptr[0].via.u64 != 1)
        return devrt_fail(DEVRT_ERROR_IMAGE,
                          "%s: AMDGPU metadata version %llu.%llu; this runtime reads 1.x "
                          "(code object versions 3 to 6)",
                          r->path, (unsigned long long)version->via.array.ptr[0].via.u64,
                          (unsigned long long)version->via.array.ptr[1].via.u64);
    m->version[0] = 1;
    m->version[1] = version->via.array.ptr[1].via.u64 > UINT32_MAX
                        ? UINT32_MAX
                        : (uint32_t)version->via.array.ptr[1].via.u64;
    int status = get_string(r, root, "amdhsa.target", false, &m->target);
    if (status != DEVRT_SUCCESS)
        return status;

    const msgpack_object *kernels = lookup(root, "amdhsa.kernels");
    if (!kernels || kernels->type != MSGPACK_OBJECT_ARRAY)
        return malformed(r, "amdhsa.kernels is not an array");
    m->kernels = calloc(kernels->via.array.size ? kernels->via.array.size : 1, sizeof *m->kernels);
    if (!m->kernels)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for AMDGPU metadata");
    for (uint32_t i = 0; i < kernels->via.array.size; ++i) {
        m->kernel_count = i + 1;
        status = read_kernel(r, &kernels->via.array.ptr[i], i, &m->kernels[i]);
        if (status != DEVRT_SUCCESS)
            return status;
    }
    return DEVRT_SUCCESS;
}

/* The NT_AMDGPU_METADATA note's contents, pointing into ELF's data. */
static int find_note(Elf *elf, const char *path, const char **desc, size_t *desc_size)
{
    static const char owner[] = "AMDGPU";
    Elf_Scn *section = NULL;
    while ((section = elf_nextscn(elf, section))) {
        GElf_Shdr header;
        if (!gelf_getshdr(section, &header) || header.sh_type != SHT_NOTE)
            continue;
        Elf_Data *data = elf_getdata(section, NULL);
        if (!data)
            continue;
        size_t offset = 0, name_offset, desc_offset;
        GElf_Nhdr note;
        while ((offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0) {
            if (note.n_type == DEVRT_NT_AMDGPU_METADATA && note.n_namesz == sizeof owner &&
                memcmp((const char *)data->d_buf + name_offset, owner, sizeof owner) == 0) {
                *desc = (const char *)data->d_buf + desc_offset;
                *desc_size = note.n_descsz;
                return DEVRT_SUCCESS;
            }
        }
    }
    return devrt_fail(DEVRT_ERROR_IMAGE,
                      "%s: no AMDGPU metadata note (code object version 2 and older are not "
                      "supported)",
                      path);
}

/* Parse the note of the ELF image COPY, which libelf may rewrite in place. */
static int read_elf(char *copy, size_t size, const char *path, struct devrt_amdgpu_metadata *m)
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory(copy, size);
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        elf_end(elf);
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s: not an ELF file", path);
    }
    GElf_Ehdr header;
    int status = DEVRT_SUCCESS;
    if (!gelf_getehdr(elf, &header))
        status =
            devrt_fail(DEVRT_ERROR_IMAGE, "%s: unreadable ELF header: %s", path, elf_errmsg(-1));
    else if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_machine != EM_AMDGPU)
        status = devrt_fail(DEVRT_ERROR_IMAGE, "%s: not an amdgcn code object (ELF machine %u)",
                            path, header.e_machine);
    const char *desc = NULL;
    size_t desc_size = 0;
    if (status == DEVRT_SUCCESS)
        status = find_note(elf, path, &desc, &desc_size);
    if (status == DEVRT_SUCCESS) {
        struct reader r = {.path = path, .where = ""};
        msgpack_unpacked root;
        msgpack_unpacked_init(&root);
        size_t offset = 0;
        if (msgpack_unpack_next(&root, desc, desc_size, &offset) != MSGPACK_UNPACK_SUCCESS)
            status = malformed(&r, "not MessagePack");
        else
            status = read_map(&r, &root.data, m);
        msgpack_unpacked_destroy(&root);
    }
    elf_end(elf);
    return status;
}

int devrt_amdgpu_metadata_read(const void *image, size_t size, const char *path,
                               struct devrt_amdgpu_metadata **out)
{
    *out = NULL;
    struct devrt_amdgpu_metadata *m = calloc(1, sizeof *m);
    /* libelf takes a writable image: it converts a foreign byte order in place. */
    char *copy = malloc(size ? size : 1);
    if (!m || !copy) {
        free(m);
        free(copy);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory to read %s", path);
    }
    memcpy(copy, image, size);
    int status = read_elf(copy, size, path, m);
    free(copy);
    if (status != DEVRT_SUCCESS) {
        devrt_amdgpu_metadata_free(m);
        return status;
    }
    *out = m;
    return DEVRT_SUCCESS;
}

void devrt_amdgpu_metadata_free(struct devrt_amdgpu_metadata *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->kernel_count; ++i) {
        struct devrt_amdgpu_kernel *k = &m->kernels[i];
        for (size_t j = 0; j < k->arg_count; ++j)
            free(k->args[j].value_kind);
        free(k->args);
        free(k->name);
        free(k->symbol);
    }
    free(m->kernels);
    free(m->target);
    free(m);
}

const struct devrt_amdgpu_kernel *
devrt_amdgpu_metadata_kernel(const struct devrt_amdgpu_metadata *m, const char *name)
{
    for (size_t i = 0; i < m->kernel_count; ++i)
        if (strcmp(m->kernels[i].name, name) == 0)
            return &m->kernels[i];
    return NULL;
}
