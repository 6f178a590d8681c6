/*
 * The code object's metadata (the NT_AMDGPU_METADATA note, MessagePack): for each kernel,
 * where its arguments are in the kernel argument segment and what they are. The double
 * reads it itself, with elfutils and msgpack-c, rather than through devrt's reader, so that
 * what devrt's dispatch puts where is checked against the compiler's own record.
 */
#include <gelf.h>
#include <libelf.h>
#include <msgpack.h>
#include <stdio.h>
#include <string.h>

#include "hsasim.h"

#define NT_AMDGPU_METADATA 32

static const msgpack_object *field(const msgpack_object *map, const char *key)
{
    if (map->type != MSGPACK_OBJECT_MAP)
        return NULL;
    size_t n = strlen(key);
    for (uint32_t i = 0; i < map->via.map.size; ++i) {
        const msgpack_object_kv *kv = &map->via.map.ptr[i];
        if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == n &&
            !memcmp(kv->key.via.str.ptr, key, n))
            return &kv->val;
    }
    return NULL;
}

static bool number(const msgpack_object *o, uint32_t *out)
{
    if (!o || o->type != MSGPACK_OBJECT_POSITIVE_INTEGER || o->via.u64 > UINT32_MAX)
        return false;
    *out = (uint32_t)o->via.u64;
    return true;
}

static bool text(const msgpack_object *o, char *out, size_t size)
{
    if (!o || o->type != MSGPACK_OBJECT_STR || o->via.str.size >= size)
        return false;
    memcpy(out, o->via.str.ptr, o->via.str.size);
    out[o->via.str.size] = '\0';
    return true;
}

/* One kernel's map of amdhsa.kernels into the kernel of KERNELS with its .name. */
static int read_kernel(const msgpack_object *map, struct hsasim_kernel *kernels, size_t count,
                       char *why, size_t why_size)
{
    char name[256];
    if (!text(field(map, ".name"), name, sizeof name)) {
        snprintf(why, why_size, "a kernel without a .name");
        return -1;
    }
    struct hsasim_kernel *k = NULL;
    for (size_t i = 0; i < count && !k; ++i)
        if (!strcmp(kernels[i].name, name))
            k = &kernels[i];
    if (!k)
        return 0; /* described but not defined: nothing can dispatch it */
    if (!number(field(map, ".kernarg_segment_align"), &k->kernarg_align) || k->kernarg_align == 0 ||
        (k->kernarg_align & (k->kernarg_align - 1))) {
        snprintf(why, why_size, "kernel %s: no .kernarg_segment_align, a power of two", name);
        return -1;
    }
    const msgpack_object *args = field(map, ".args");
    if (!args)
        return 0;
    if (args->type != MSGPACK_OBJECT_ARRAY || args->via.array.size > 64) {
        snprintf(why, why_size, "kernel %s: .args is not an array of at most 64", name);
        return -1;
    }
    for (uint32_t i = 0; i < args->via.array.size; ++i) {
        struct hsasim_arg *a = &k->arg[i];
        const msgpack_object *arg = &args->via.array.ptr[i];
        if (!number(field(arg, ".offset"), &a->offset) || !number(field(arg, ".size"), &a->size) ||
            !text(field(arg, ".value_kind"), a->kind, sizeof a->kind)) {
            snprintf(why, why_size, "kernel %s: argument %u lacks .offset, .size or .value_kind",
                     name, i);
            return -1;
        }
    }
    k->arg_count = args->via.array.size;
    return 0;
}

int hsasim_read_metadata(const void *image, size_t size, struct hsasim_kernel *kernels,
                         size_t count, char *why, size_t why_size)
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory((char *)image, size);
    int result = -1;
    snprintf(why, why_size, "no NT_AMDGPU_METADATA note");
    Elf_Scn *section = NULL;
    while (elf && result && (section = elf_nextscn(elf, section))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(section, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *data = elf_getdata(section, NULL);
        GElf_Nhdr note;
        size_t offset = 0, name_at, desc_at;
        while (data && result &&
               (offset = gelf_getnote(data, offset, &note, &name_at, &desc_at)) > 0) {
            if (note.n_type != NT_AMDGPU_METADATA || note.n_namesz != 7 ||
                memcmp((char *)data->d_buf + name_at, "AMDGPU", 7))
                continue;
            msgpack_unpacked unpacked;
            msgpack_unpacked_init(&unpacked);
            size_t used = 0;
            if (msgpack_unpack_next(&unpacked, (const char *)data->d_buf + desc_at, note.n_descsz,
                                    &used) != MSGPACK_UNPACK_SUCCESS) {
                snprintf(why, why_size, "the note is not MessagePack");
            } else {
                const msgpack_object *list = field(&unpacked.data, "amdhsa.kernels");
                result = list && list->type == MSGPACK_OBJECT_ARRAY ? 0 : -1;
                if (result)
                    snprintf(why, why_size, "no amdhsa.kernels array");
                for (uint32_t i = 0; !result && i < list->via.array.size; ++i)
                    result = read_kernel(&list->via.array.ptr[i], kernels, count, why, why_size);
            }
            msgpack_unpacked_destroy(&unpacked);
        }
    }
    if (elf)
        elf_end(elf);
    return result;
}
