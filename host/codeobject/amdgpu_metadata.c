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

#include "amdgpu_code_scan.h"
#include "amdgpu_metadata.h"
#include "codeobject.h"

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif
#define DEVRT_NT_AMDGPU_METADATA 32u

/* ELF header flags of amdgcn code objects (LLVM's AMDGPUUsage, "ELF Header"). */
#define DEVRT_EF_AMDGPU_MACH 0x0ffu
#define DEVRT_EF_AMDGPU_XNACK_V4 0x300u
#define DEVRT_EF_AMDGPU_SRAMECC_V4 0xc00u
#define DEVRT_EF_AMDGPU_XNACK_V3 0x100u
#define DEVRT_EF_AMDGPU_SRAMECC_V3 0x200u
/* e_ident[EI_ABIVERSION] of code object version 3; 4, 5 and 6 follow it. */
#define DEVRT_ELFABIVERSION_AMDGPU_HSA_V3 1u

/*
 * EF_AMDGPU_MACH values and their processors, as LLVM 19 writes them (checked against
 * llvm-readelf -h for every processor it knows). A value not here is named by its number.
 */
static const struct {
    uint8_t mach;
    const char *name;
} processors[] = {
    {0x20, "gfx600"},          {0x21, "gfx601"},        {0x3a, "gfx602"},
    {0x22, "gfx700"},          {0x23, "gfx701"},        {0x24, "gfx702"},
    {0x25, "gfx703"},          {0x26, "gfx704"},        {0x3b, "gfx705"},
    {0x28, "gfx801"},          {0x29, "gfx802"},        {0x2a, "gfx803"},
    {0x3c, "gfx805"},          {0x2b, "gfx810"},        {0x2c, "gfx900"},
    {0x2d, "gfx902"},          {0x2e, "gfx904"},        {0x2f, "gfx906"},
    {0x30, "gfx908"},          {0x31, "gfx909"},        {0x3f, "gfx90a"},
    {0x32, "gfx90c"},          {0x40, "gfx940"},        {0x4b, "gfx941"},
    {0x4c, "gfx942"},          {0x4f, "gfx950"},        {0x33, "gfx1010"},
    {0x34, "gfx1011"},         {0x35, "gfx1012"},       {0x42, "gfx1013"},
    {0x36, "gfx1030"},         {0x37, "gfx1031"},       {0x38, "gfx1032"},
    {0x39, "gfx1033"},         {0x3e, "gfx1034"},       {0x3d, "gfx1035"},
    {0x45, "gfx1036"},         {0x41, "gfx1100"},       {0x46, "gfx1101"},
    {0x47, "gfx1102"},         {0x44, "gfx1103"},       {0x43, "gfx1150"},
    {0x4a, "gfx1151"},         {0x55, "gfx1152"},       {0x48, "gfx1200"},
    {0x4e, "gfx1201"},         {0x51, "gfx9-generic"},  {0x52, "gfx10-1-generic"},
    {0x53, "gfx10-3-generic"}, {0x54, "gfx11-generic"}, {0x59, "gfx12-generic"},
    {0x5f, "gfx9-4-generic"},
};

/* gfx950 doubles and more the 64 KiB of LDS a workgroup has had since gfx7 (AMDGPUUsage). */
#define DEVRT_AMDGPU_GFX950_LDS 163840u

const char *devrt_amdgpu_processor_name(uint32_t mach)
{
    for (size_t i = 0; i < sizeof processors / sizeof processors[0]; ++i)
        if (processors[i].mach == mach)
            return processors[i].name;
    return NULL;
}

bool devrt_amdgpu_processor_known(const char *name)
{
    for (size_t i = 0; i < sizeof processors / sizeof processors[0]; ++i)
        if (!strcmp(processors[i].name, name))
            return true;
    return false;
}

uint32_t devrt_amdgpu_processor_lds(const char *name)
{
    return strcmp(name, "gfx950") ? 65536u : DEVRT_AMDGPU_GFX950_LDS;
}

void devrt_amdgpu_processor_list(char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (size_t i = 0; i < sizeof processors / sizeof processors[0] && used < size; ++i) {
        int n = snprintf(text + used, size - used, "%s%s", i ? ", " : "", processors[i].name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

static enum devrt_amdgpu_feature feature_v4(uint32_t bits, uint32_t mask)
{
    /* Each field is two bits: unsupported, any, off, on, in that order. */
    uint32_t value = (bits & mask) / (mask & -mask);
    return (enum devrt_amdgpu_feature)value;
}

/* The processor and its features, from the ELF header, as a target ID (gfx90a:xnack-). */
static void read_isa(const GElf_Ehdr *header, struct devrt_amdgpu_metadata *m)
{
    uint32_t flags = (uint32_t)header->e_flags;
    m->e_flags = flags;
    m->os_abi = header->e_ident[EI_OSABI];
    m->code_object_version = header->e_ident[EI_ABIVERSION] + 3 - DEVRT_ELFABIVERSION_AMDGPU_HSA_V3;
    const char *name = devrt_amdgpu_processor_name(flags & DEVRT_EF_AMDGPU_MACH);
    if (name)
        snprintf(m->processor, sizeof m->processor, "%s", name);
    else
        snprintf(m->processor, sizeof m->processor, "unknown machine 0x%02x",
                 flags & DEVRT_EF_AMDGPU_MACH);
    if (m->code_object_version >= 4) {
        m->xnack = feature_v4(flags, DEVRT_EF_AMDGPU_XNACK_V4);
        m->sramecc = feature_v4(flags, DEVRT_EF_AMDGPU_SRAMECC_V4);
    } else {
        /* Version 3 has one bit each: set is on; clear is off or, on processors without the
           feature, unsupported, which it cannot tell apart; any is the safe reading. */
        m->xnack =
            flags & DEVRT_EF_AMDGPU_XNACK_V3 ? DEVRT_AMDGPU_FEATURE_ON : DEVRT_AMDGPU_FEATURE_ANY;
        m->sramecc =
            flags & DEVRT_EF_AMDGPU_SRAMECC_V3 ? DEVRT_AMDGPU_FEATURE_ON : DEVRT_AMDGPU_FEATURE_ANY;
    }
    /* A target ID lists its features in alphabetical order, and only those set one way. */
    int n = snprintf(m->isa, sizeof m->isa, "%s", m->processor);
    if (m->sramecc >= DEVRT_AMDGPU_FEATURE_OFF && n > 0 && (size_t)n < sizeof m->isa)
        n += snprintf(m->isa + n, sizeof m->isa - (size_t)n, ":sramecc%c",
                      m->sramecc == DEVRT_AMDGPU_FEATURE_ON ? '+' : '-');
    if (m->xnack >= DEVRT_AMDGPU_FEATURE_OFF && n > 0 && (size_t)n < sizeof m->isa)
        snprintf(m->isa + n, sizeof m->isa - (size_t)n, ":xnack%c",
                 m->xnack == DEVRT_AMDGPU_FEATURE_ON ? '+' : '-');
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Each kernel's descriptor, found through the symbol tables. An image without one keeps
 * has_descriptor false rather than failing here: the metadata alone still serves argument
 * checks, and the dispatch refuses a kernel whose descriptor is missing.
 */
static void read_descriptors(Elf *elf, struct devrt_amdgpu_metadata *m)
{
    enum { descriptor_size = 64 };
    Elf_Scn *section = NULL;
    while ((section = elf_nextscn(elf, section))) {
        GElf_Shdr header;
        if (!gelf_getshdr(section, &header) ||
            (header.sh_type != SHT_SYMTAB && header.sh_type != SHT_DYNSYM) || !header.sh_entsize)
            continue;
        Elf_Data *symbols = elf_getdata(section, NULL);
        if (!symbols)
            continue;
        size_t count = symbols->d_size / header.sh_entsize;
        for (size_t i = 0; i < count; ++i) {
            GElf_Sym symbol;
            if (!gelf_getsym(symbols, (int)i, &symbol))
                break;
            const char *name = elf_strptr(elf, header.sh_link, symbol.st_name);
            if (!name)
                continue;
            struct devrt_amdgpu_kernel *k = NULL;
            for (size_t j = 0; j < m->kernel_count && !k; ++j)
                if (!m->kernels[j].has_descriptor && !strcmp(m->kernels[j].symbol, name))
                    k = &m->kernels[j];
            Elf_Scn *home = k ? elf_getscn(elf, symbol.st_shndx) : NULL;
            GElf_Shdr home_header;
            if (!home || !gelf_getshdr(home, &home_header) || home_header.sh_type == SHT_NOBITS ||
                symbol.st_value < home_header.sh_addr)
                continue;
            Elf_Data *data = elf_getdata(home, NULL);
            uint64_t offset = symbol.st_value - home_header.sh_addr;
            if (!data || !data->d_buf || offset > data->d_size ||
                data->d_size - offset < descriptor_size)
                continue;
            const unsigned char *d = (const unsigned char *)data->d_buf + offset;
            k->has_descriptor = true;
            k->descriptor_group_segment_fixed_size = le32(d + 0);
            k->descriptor_private_segment_fixed_size = le32(d + 4);
            k->descriptor_kernarg_size = le32(d + 8);
            k->descriptor_kernel_code_properties = (uint16_t)(d[56] | d[57] << 8);
        }
    }
}

/* The hidden arguments only ockl's code reads (hostcall_read and heap_read say of them). */
static const char *const ockl_kinds[] = {"hidden_hostcall_buffer", "hidden_heap_v1"};

/*
 * Scans the code, once, for reads of ockl's hidden arguments where a kernel lists them, into
 * the metadata's hostcall_read and heap_read.
 */
static void scan_ockl_reads(Elf *elf, struct devrt_amdgpu_metadata *m)
{
    enum { KINDS = sizeof ockl_kinds / sizeof ockl_kinds[0] };
    char *found[KINDS] = {m->hostcall_read, m->heap_read};
    /* As many slots of a kind as arguments in all: malformed metadata may repeat one. */
    size_t most = 1;
    for (size_t i = 0; i < m->kernel_count; ++i)
        most += m->kernels[i].arg_count;
    struct devrt_amdgpu_slot *slots = calloc(KINDS * most, sizeof *slots);
    struct devrt_amdgpu_slot_reads *args = calloc(KINDS, sizeof *args);
    if (!slots || !args) {
        for (size_t k = 0; k < KINDS; ++k)
            snprintf(found[k], DEVRT_AMDGPU_SLOT_READ_SIZE, "devrt had no memory to read the code");
        free(slots);
        free(args);
        return;
    }
    for (size_t k = 0; k < KINDS; ++k)
        args[k].slots = slots + k * most;
    for (size_t i = 0; i < m->kernel_count; ++i) {
        const struct devrt_amdgpu_kernel *kernel = &m->kernels[i];
        uint32_t implicit = UINT32_MAX;
        for (size_t j = 0; j < kernel->arg_count; ++j)
            if (kernel->args[j].hidden && kernel->args[j].offset < implicit)
                implicit = kernel->args[j].offset;
        for (size_t j = 0; j < kernel->arg_count; ++j)
            for (size_t k = 0; k < KINDS; ++k)
                if (!strcmp(kernel->args[j].value_kind, ockl_kinds[k]))
                    slots[k * most + args[k].count++] = (struct devrt_amdgpu_slot){
                        kernel->args[j].offset, kernel->args[j].offset - implicit};
    }
    char isa[96];
    snprintf(isa, sizeof isa, "amdgcn-amd-amdhsa--%s", m->isa);
    devrt_amdgpu_scan_slot_reads(elf, isa, args, KINDS);
    for (size_t k = 0; k < KINDS; ++k)
        snprintf(found[k], DEVRT_AMDGPU_SLOT_READ_SIZE, "%s", args[k].read);
    free(slots);
    free(args);
}

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
    if (status == DEVRT_SUCCESS)
        status = get_string(r, map, ".name", false, &arg->name);
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
    size_t slots = k->explicit_count ? k->explicit_count : 1;
    k->explicit_sizes = calloc(slots, sizeof *k->explicit_sizes);
    k->explicit_kinds = calloc(slots, sizeof *k->explicit_kinds);
    k->explicit_names = calloc(slots, sizeof *k->explicit_names);
    if (!k->explicit_sizes || !k->explicit_kinds || !k->explicit_names)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for AMDGPU metadata");
    for (size_t i = 0, n = 0; i < k->arg_count; ++i) {
        const struct devrt_amdgpu_arg *a = &k->args[i];
        if (a->hidden)
            continue;
        k->explicit_sizes[n] = a->size;
        /* LLVM calls every pointer global_buffer but those to LDS; every other type by_value. */
        k->explicit_kinds[n] = !strcmp(a->value_kind, "global_buffer") ? DEVRT_PARAM_POINTER
                               : !strcmp(a->value_kind, "by_value")    ? DEVRT_PARAM_VALUE
                                                                       : DEVRT_PARAM_UNKNOWN;
        k->explicit_names[n++] = a->name;
    }
    return DEVRT_SUCCESS;
}

/*
 * One metadata note into M. ld.lld keeps one note per object it links, so a code object
 * made of several holds several: their kernels are appended to those of the notes before,
 * and their versions and targets must agree (FIRST: this is the first note).
 */
static int read_map(struct reader *r, const msgpack_object *root, struct devrt_amdgpu_metadata *m,
                    bool first)
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
    uint32_t minor = version->via.array.ptr[1].via.u64 > UINT32_MAX
                         ? UINT32_MAX
                         : (uint32_t)version->via.array.ptr[1].via.u64;
    if (!first && minor != m->version[1])
        return malformed(r, "its notes give metadata versions 1.%u and 1.%u", m->version[1], minor);
    m->version[0] = 1;
    m->version[1] = minor;
    char *target;
    int status = get_string(r, root, "amdhsa.target", false, &target);
    if (status != DEVRT_SUCCESS)
        return status;
    if (first) {
        m->target = target;
    } else {
        bool same = target && m->target ? !strcmp(target, m->target) : target == m->target;
        if (!same)
            status = malformed(r, "its notes name the targets %.100s and %.100s",
                               m->target ? m->target : "(none)", target ? target : "(none)");
        free(target);
        if (status != DEVRT_SUCCESS)
            return status;
    }

    const msgpack_object *kernels = lookup(root, "amdhsa.kernels");
    if (!kernels || kernels->type != MSGPACK_OBJECT_ARRAY)
        return malformed(r, "amdhsa.kernels is not an array");
    size_t count = m->kernel_count, more = kernels->via.array.size;
    if (more > SIZE_MAX / sizeof *m->kernels - count - 1)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for AMDGPU metadata");
    struct devrt_amdgpu_kernel *grown =
        realloc(m->kernels, (count + more ? count + more : 1) * sizeof *m->kernels);
    if (!grown)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for AMDGPU metadata");
    m->kernels = grown;
    memset(m->kernels + count, 0, more * sizeof *m->kernels);
    for (size_t i = 0; i < more; ++i) {
        m->kernel_count = count + i + 1;
        status = read_kernel(r, &kernels->via.array.ptr[i], count + i, &m->kernels[count + i]);
        if (status != DEVRT_SUCCESS)
            return status;
    }
    return DEVRT_SUCCESS;
}

/* Every NT_AMDGPU_METADATA note of ELF, read into M. */
static int read_notes(Elf *elf, const char *path, struct devrt_amdgpu_metadata *m)
{
    static const char owner[] = "AMDGPU";
    size_t notes = 0;
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
            if (note.n_type != DEVRT_NT_AMDGPU_METADATA || note.n_namesz != sizeof owner ||
                memcmp((const char *)data->d_buf + name_offset, owner, sizeof owner) != 0)
                continue;
            struct reader r = {.path = path, .where = ""};
            msgpack_unpacked root;
            msgpack_unpacked_init(&root);
            size_t position = 0;
            int status;
            if (msgpack_unpack_next(&root, (const char *)data->d_buf + desc_offset, note.n_descsz,
                                    &position) != MSGPACK_UNPACK_SUCCESS)
                status = malformed(&r, "not MessagePack");
            else
                status = read_map(&r, &root.data, m, notes == 0);
            msgpack_unpacked_destroy(&root);
            if (status != DEVRT_SUCCESS)
                return status;
            notes++;
        }
    }
    if (!notes)
        return devrt_fail(DEVRT_ERROR_IMAGE,
                          "%s: no AMDGPU metadata note (code object version 2 and older are not "
                          "supported)",
                          path);
    return DEVRT_SUCCESS;
}

/* Parse the notes of the ELF image COPY, which libelf may rewrite in place. */
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
    if (status == DEVRT_SUCCESS) {
        read_isa(&header, m);
        status = read_notes(elf, path, m);
    }
    if (status == DEVRT_SUCCESS) {
        read_descriptors(elf, m);
        scan_ockl_reads(elf, m);
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
        for (size_t j = 0; j < k->arg_count; ++j) {
            free(k->args[j].value_kind);
            free(k->args[j].name);
        }
        free(k->args);
        free(k->explicit_sizes);
        free(k->explicit_kinds);
        free(k->explicit_names);
        free(k->name);
        free(k->symbol);
    }
    free(m->kernels);
    free(m->target);
    free(m);
}

uint32_t devrt_amdgpu_rpc_lanes(const struct devrt_amdgpu_metadata *m, uint32_t device_wave)
{
    uint32_t widest = 0;
    for (size_t i = 0; i < m->kernel_count; ++i)
        if (m->kernels[i].wavefront_size > widest)
            widest = m->kernels[i].wavefront_size;
    return widest ? widest : device_wave;
}

const struct devrt_amdgpu_kernel *
devrt_amdgpu_metadata_kernel(const struct devrt_amdgpu_metadata *m, const char *name)
{
    for (size_t i = 0; i < m->kernel_count; ++i)
        if (strcmp(m->kernels[i].name, name) == 0)
            return &m->kernels[i];
    return NULL;
}
