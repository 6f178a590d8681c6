/*
 * The registry: every backend kind devrt knows, with its name, the images it runs, how to
 * tell them from their first bytes, and its ops where it is built into this runtime. The
 * only file outside a backend's own that names a backend kind (tests/style/backend_kinds.py
 * checks that).
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "codeobject.h"

#ifdef DEVRT_HAVE_AMDGPU_METADATA
#include "amdgpu_image.h"
#endif

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif

/* Enough of an image to tell its kind: an ELF header, or the top of a PTX text. */
#define SNIFF_BYTES 64u

static bool elf64(const unsigned char *head, size_t size, Elf64_Ehdr *header)
{
    if (size < sizeof *header || memcmp(head, ELFMAG, SELFMAG) != 0 || head[EI_CLASS] != ELFCLASS64)
        return false;
    memcpy(header, head, sizeof *header);
    return true;
}

static bool amdgcn_code_object(const unsigned char *head, size_t size)
{
    Elf64_Ehdr header;
    return elf64(head, size, &header) && header.e_machine == EM_AMDGPU;
}

/* An emulation image is a host shared object. */
static bool host_shared_object(const unsigned char *head, size_t size)
{
    Elf64_Ehdr header;
    return elf64(head, size, &header) && header.e_machine != EM_AMDGPU && header.e_type == ET_DYN;
}

/* PTX is text and says so near its top. */
static bool ptx(const unsigned char *head, size_t size)
{
    if (size >= SELFMAG && memcmp(head, ELFMAG, SELFMAG) == 0)
        return false;
    return memmem(head, size, ".version", 8) || memmem(head, size, "//", 2);
}

static const struct devrt_image_format amdgcn_images = {
    .runs = "amdgcn code objects (.hsaco)",
    .what = "an amdgcn code object",
    .sniff = amdgcn_code_object,
#ifdef DEVRT_HAVE_AMDGPU_METADATA
    .check_image_args = devrt_amdgpu_check_image_args,
    .describe_image = devrt_amdgpu_describe_image,
#endif
};

static const struct devrt_image_format ptx_images = {
    .runs = "PTX (.ptx)",
    .what = "PTX",
    .sniff = ptx,
};

static const struct devrt_image_format emulation_images = {
    .runs = "emulation images (.so)",
    .what = "a host shared object",
    .sniff = host_shared_object,
};

/* In the order devrt-run --list shows them; devrt_image_backend takes the first that runs
   an image's format, so HSA runs an amdgcn code object before HIP. */
static const struct devrt_backend_entry entries[] = {
    {
        .kind = DEVRT_BACKEND_HSA,
        .name = "hsa",
        .image = &amdgcn_images,
#ifdef DEVRT_HAVE_HSA
        .ops = &devrt_hsa_backend,
#endif
    },
    {
        .kind = DEVRT_BACKEND_CUDA,
        .name = "cuda",
        .image = &ptx_images,
#ifdef DEVRT_HAVE_CUDA
        .ops = &devrt_cuda_backend,
#endif
    },
    {
        .kind = DEVRT_BACKEND_EMU,
        .name = "emu",
        .image = &emulation_images,
#ifdef DEVRT_HAVE_EMU
        .ops = &devrt_emu_backend,
#endif
    },
    {
        .kind = DEVRT_BACKEND_HIP,
        .name = "hip",
        .image = &amdgcn_images,
#ifdef DEVRT_HAVE_HIP
        .ops = &devrt_hip_backend,
#endif
    },
};
#define ENTRY_COUNT (sizeof entries / sizeof entries[0])

const struct devrt_backend_entry *devrt_backend_entry(enum devrt_backend kind)
{
    for (size_t i = 0; i < ENTRY_COUNT; ++i)
        if (entries[i].kind == kind)
            return &entries[i];
    return NULL;
}

const struct devrt_backend_entry *devrt_backend_sniff(const unsigned char *head, size_t size)
{
    for (size_t i = 0; i < ENTRY_COUNT; ++i)
        if (entries[i].image->sniff(head, size))
            return &entries[i];
    return NULL;
}

const char *devrt_backend_name(enum devrt_backend backend)
{
    if (backend == DEVRT_BACKEND_AUTO)
        return "auto";
    const struct devrt_backend_entry *entry = devrt_backend_entry(backend);
    return entry ? entry->name : "unknown";
}

int devrt_backend_parse(const char *name, enum devrt_backend *backend)
{
    if (!name || !backend)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_backend_parse: missing argument");
    if (!strcmp(name, "auto")) {
        *backend = DEVRT_BACKEND_AUTO;
        return DEVRT_SUCCESS;
    }
    char names[128] = "auto";
    for (size_t i = 0; i < ENTRY_COUNT; ++i) {
        if (!strcmp(name, entries[i].name)) {
            *backend = entries[i].kind;
            return DEVRT_SUCCESS;
        }
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", i + 1 == ENTRY_COUNT ? " or " : ", ",
                 entries[i].name);
    }
    return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "unknown backend '%s' (%s)", name, names);
}

enum devrt_backend devrt_backend_next(enum devrt_backend backend)
{
    size_t i = 0;
    if (backend != DEVRT_BACKEND_AUTO) {
        while (i < ENTRY_COUNT && entries[i].kind != backend)
            ++i;
        ++i;
    }
    for (; i < ENTRY_COUNT; ++i)
        if (entries[i].ops)
            return entries[i].kind;
    return DEVRT_BACKEND_AUTO;
}

/* The first bytes of PATH into HEAD; how many, 0 if it cannot be read. */
static size_t read_head(const char *path, unsigned char head[SNIFF_BYTES])
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return 0;
    size_t n = fread(head, 1, SNIFF_BYTES, file);
    fclose(file);
    return n;
}

enum devrt_backend devrt_image_backend(const char *path)
{
    unsigned char head[SNIFF_BYTES];
    const struct devrt_backend_entry *entry = devrt_backend_sniff(head, read_head(path, head));
    return entry ? entry->kind : DEVRT_BACKEND_AUTO;
}

/*
 * An image given to a backend that does not run its kind, refused with what the image is
 * and what the backend runs: the backend's own loader would fail with a message about
 * something else (dlopen says it "cannot open shared object file" of a file that exists).
 */
int devrt_image_check_kind(const void *image, size_t size, const char *path,
                           enum devrt_backend backend)
{
    const struct devrt_backend_entry *entry = devrt_backend_entry(backend);
    const struct devrt_backend_entry *kind =
        devrt_backend_sniff(image, size < SNIFF_BYTES ? size : SNIFF_BYTES);
    if (!entry || !kind || kind->image == entry->image)
        return DEVRT_SUCCESS;
    char what[128];
    snprintf(what, sizeof what, "%s", kind->image->what);
    if (kind->image->describe_image)
        kind->image->describe_image(image, size, path, what, sizeof what);
    return devrt_fail(DEVRT_ERROR_IMAGE, "%s is %s; the %s backend runs %s", path, what,
                      entry->name, entry->image->runs);
}
