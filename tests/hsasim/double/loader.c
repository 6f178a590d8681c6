/*
 * The code object loader. A code object is read for real (libelf): its target is checked
 * against the GPU's as ROCr's loader does, its kernels found as NAME.kd with their
 * descriptors, its metadata read. What runs for a kernel is the emulation build of the
 * same sources: the image of $DEVRT_HSASIM_IMAGES (a colon-separated list) that defines
 * every kernel of the code object, loaded privately for each executable, whose own
 * __devrt_state is the variable's address. The code object's buffer stays the caller's,
 * and is read again on every symbol lookup, as ROCr's loaded code objects keep pointing
 * into it (LoadedCodeObjectImpl::ElfData): a buffer freed early shows.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hsasim.h"

#define EM_AMDGPU_MACHINE 224
#define MACH_MASK 0x0ffu
#define XNACK_MASK 0x300u /* EF_AMDGPU_FEATURE_XNACK_V4: unsupported, any, off, on */
#define SRAMECC_MASK 0xc00u

struct reader {
    const unsigned char *image; /* the caller's: kept, not copied, as ROCr keeps it */
    size_t size;
    uint64_t checksum;
};

enum symbol_kind { SYMBOL_KERNEL, SYMBOL_VARIABLE };
struct symbol {
    enum symbol_kind kind;
    struct hsasim_kernel *kernel;
    uint64_t address;
    uint32_t size;
};

struct hsasim_executable {
    struct hsasim_executable *next;
    struct reader *reader;
    bool loaded, frozen;
    struct hsasim_agent *gpu; /* the GPU it was loaded for */
    void *image;              /* the emulation image's private copy */
    int copy;                 /* its anonymous file */
    void *enter;              /* its __devrt_emu_enter */
    void *segment[8];
    size_t segments;
    struct hsasim_kernel *kernels;
    size_t kernel_count;
    struct symbol *symbols; /* a kernel's, then the state variable's */
    size_t symbol_count;
    uint32_t running; /* dispatches of its kernels under way; under hsasim_lock */
};

static struct hsasim_executable *executables; /* under hsasim_lock */

static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; ++i)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

hsa_status_t hsa_code_object_reader_create_from_memory(const void *image, size_t size,
                                                       hsa_code_object_reader_t *out)
{
    if (!image || !size || !out)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    struct reader *r = malloc(sizeof *r);
    if (!r)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    *r = (struct reader){image, size, checksum(image, size)};
    out->handle = (uint64_t)(uintptr_t)r;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t reader)
{
    free((void *)(uintptr_t)reader.handle);
    return HSA_STATUS_SUCCESS;
}

/* The code object is read again where ROCr reads it: its bytes must be as they were. */
static void check_buffer(const struct reader *r)
{
    if (checksum(r->image, r->size) != r->checksum) {
        hsasim_say("the code object's buffer at %p changed while its executable uses it: it was "
                   "freed or reused, and the HSA runtime still reads it",
                   (const void *)r->image);
        abort();
    }
}

hsa_status_t hsa_executable_create_alt(hsa_profile_t profile,
                                       hsa_default_float_rounding_mode_t rounding,
                                       const char *options, hsa_executable_t *out)
{
    (void)rounding;
    (void)options;
    if (!out || profile != HSA_PROFILE_FULL)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    struct hsasim_executable *e = calloc(1, sizeof *e);
    if (!e)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    e->copy = -1;
    out->handle = (uint64_t)(uintptr_t)e;
    return HSA_STATUS_SUCCESS;
}

/* ROCr's isa compatibility (Isa::IsCompatible): a feature the code object requires on or
   off must be the GPU's; "any" runs on either. */
static bool feature_fits(uint32_t flags, uint32_t mask, bool gpu_on)
{
    uint32_t v = flags & mask, any = mask & (mask >> 1), off = mask & ~(mask >> 1);
    return v == 0 || v == any || (v == off && !gpu_on) || (v == mask && gpu_on);
}

/* The kernels (NAME.kd) of the code object, their descriptors and the metadata's arguments. */
static hsa_status_t read_code_object(struct hsasim_executable *e, const struct reader *r)
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory((char *)r->image, r->size);
    GElf_Ehdr header;
    if (!elf || !gelf_getehdr(elf, &header) || header.e_machine != EM_AMDGPU_MACHINE) {
        if (elf)
            elf_end(elf);
        hsasim_say("not an amdgcn code object");
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    }
    uint32_t flags = (uint32_t)header.e_flags;
    if ((flags & MACH_MASK) != e->gpu->mach || !feature_fits(flags, XNACK_MASK, e->gpu->xnack) ||
        !feature_fits(flags, SRAMECC_MASK, e->gpu->sramecc)) {
        elf_end(elf);
        hsasim_say("the code object (e_flags 0x%x) is not for %s", flags, e->gpu->isa);
        return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
    }
    size_t count = 0, capacity = 0;
    Elf_Scn *section = NULL;
    while ((section = elf_nextscn(elf, section))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(section, &sh) || sh.sh_type != SHT_SYMTAB)
            continue;
        Elf_Data *data = elf_getdata(section, NULL);
        size_t n = data && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; ++i) {
            GElf_Sym sym;
            const char *name =
                gelf_getsym(data, (int)i, &sym) ? elf_strptr(elf, sh.sh_link, sym.st_name) : NULL;
            size_t length = name ? strlen(name) : 0;
            if (length < 4 || strcmp(name + length - 3, ".kd") || sym.st_size != 64 ||
                length - 3 >= sizeof e->kernels->name)
                continue;
            Elf_Scn *home = elf_getscn(elf, sym.st_shndx);
            GElf_Shdr hs;
            if (!home || !gelf_getshdr(home, &hs) || sym.st_value < hs.sh_addr ||
                sym.st_value - hs.sh_addr + 64 > hs.sh_size ||
                hs.sh_offset + (sym.st_value - hs.sh_addr) + 64 > r->size)
                continue;
            if (count == capacity) {
                capacity = capacity ? 2 * capacity : 8;
                struct hsasim_kernel *more = realloc(e->kernels, capacity * sizeof *more);
                if (!more) {
                    elf_end(elf);
                    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
                }
                e->kernels = more;
            }
            struct hsasim_kernel *k = &e->kernels[count++];
            memset(k, 0, sizeof *k);
            memcpy(k->descriptor, r->image + hs.sh_offset + (sym.st_value - hs.sh_addr), 64);
            memcpy(k->name, name, length - 3);
            /* amd_kernel_descriptor_t: group, private and kernarg sizes in its first words. */
            memcpy(&k->group_segment_size, k->descriptor, 4);
            memcpy(&k->private_segment_size, k->descriptor + 4, 4);
            memcpy(&k->kernarg_size, k->descriptor + 8, 4);
        }
    }
    elf_end(elf);
    e->kernel_count = count;
    char why[256];
    if (hsasim_read_metadata(r->image, r->size, e->kernels, count, why, sizeof why) != 0) {
        hsasim_say("the code object's metadata: %s", why);
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    }
    return HSA_STATUS_SUCCESS;
}

/* dlopen a private copy of PATH: every executable has a state of its own. */
static void *open_copy(const char *path, int *copy)
{
    int in = open(path, O_RDONLY | O_CLOEXEC);
    int out = memfd_create("hsasim-image", MFD_CLOEXEC);
    char buffer[65536], name[64];
    ssize_t n = 0;
    if (in >= 0 && out >= 0)
        while ((n = read(in, buffer, sizeof buffer)) > 0)
            if (write(out, buffer, (size_t)n) != n) {
                n = -1;
                break;
            }
    if (in >= 0)
        close(in);
    void *handle = NULL;
    if (in >= 0 && out >= 0 && n == 0) {
        snprintf(name, sizeof name, "/proc/self/fd/%d", out);
        handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    }
    if (!handle && out >= 0)
        close(out);
    *copy = handle ? out : -1;
    return handle;
}

/* The image of $DEVRT_HSASIM_IMAGES with every kernel of E; NULL, saying so, when none. */
static void *find_image(struct hsasim_executable *e)
{
    const char *list = getenv("DEVRT_HSASIM_IMAGES");
    char path[4096];
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ":");
        if (n && n < sizeof path) {
            memcpy(path, p, n);
            path[n] = '\0';
            void *handle = open_copy(path, &e->copy);
            bool all = handle != NULL;
            for (size_t i = 0; all && i < e->kernel_count; ++i)
                all = dlsym(handle, e->kernels[i].name) != NULL;
            if (all)
                return handle;
            if (handle) {
                dlclose(handle);
                close(e->copy);
                e->copy = -1;
            }
        }
        p += n + (p[n] == ':');
    }
    hsasim_say("no emulation image in $DEVRT_HSASIM_IMAGES (%s) defines the code object's kernels "
               "(%s...)",
               list ? list : "unset", e->kernel_count ? e->kernels[0].name : "none");
    return NULL;
}

/*
 * The image's loaded segments are the code object's memory: the GPU's, for pointer info.
 * Read from the program headers the loader mapped with the image (its first segment holds
 * the ELF header), not through dl_iterate_phdr: ThreadSanitizer's interceptor of that
 * reopens each library inside the walk, which deadlocks against a dlopen on another thread.
 */
static void add_segments(struct hsasim_executable *e, const struct link_map *map)
{
    const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)map->l_addr;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG))
        return;
    const ElfW(Phdr) *phdr = (const ElfW(Phdr) *)(map->l_addr + header->e_phoff);
    for (int i = 0; i < header->e_phnum && e->segments < 8; ++i)
        if (phdr[i].p_type == PT_LOAD) {
            void *at = (void *)(map->l_addr + phdr[i].p_vaddr);
            if (hsasim_add_segment(at, phdr[i].p_memsz, e->gpu) == 0)
                e->segment[e->segments++] = at;
        }
}

hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                                   hsa_code_object_reader_t code_object_reader,
                                                   const char *options,
                                                   hsa_loaded_code_object_t *loaded)
{
    (void)options;
    struct hsasim_executable *e = (struct hsasim_executable *)(uintptr_t)executable.handle;
    struct reader *r = (struct reader *)(uintptr_t)code_object_reader.handle;
    if (!e || !r || !hsasim_is_gpu(hsasim_agent(agent)))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (e->frozen || e->loaded)
        return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
    e->gpu = hsasim_agent(agent);
    if (hsasim_injected(DEVRT_HSASIM_LOADER))
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    hsa_status_t status = read_code_object(e, r);
    if (status != HSA_STATUS_SUCCESS)
        return status;
    e->image = find_image(e);
    if (!e->image)
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    e->enter = dlsym(e->image, "__devrt_emu_enter");
    void *state = dlsym(e->image, "__devrt_state");
    if (!e->enter || !state)
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    e->symbols = calloc(e->kernel_count + 1, sizeof *e->symbols);
    if (!e->symbols)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    for (size_t i = 0; i < e->kernel_count; ++i) {
        struct hsasim_kernel *k = &e->kernels[i];
        char caller[300];
        snprintf(caller, sizeof caller, "__devrt_call_%s", k->name);
        k->executable = e;
        *(void **)&k->entry = dlsym(e->image, k->name);
        k->caller = dlsym(e->image, caller);
        e->symbols[i] = (struct symbol){SYMBOL_KERNEL, k, (uint64_t)(uintptr_t)k, 64};
    }
    e->symbols[e->kernel_count] =
        (struct symbol){SYMBOL_VARIABLE, NULL, (uint64_t)(uintptr_t)state, sizeof(void *)};
    e->symbol_count = e->kernel_count + 1;
    struct link_map *map = NULL;
    if (dlinfo(e->image, RTLD_DI_LINKMAP, &map) == 0 && map)
        add_segments(e, map);
    e->reader = r;
    e->loaded = true;
    if (loaded)
        loaded->handle = (uint64_t)(uintptr_t)e;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char *options)
{
    (void)options;
    struct hsasim_executable *e = (struct hsasim_executable *)(uintptr_t)executable.handle;
    if (!e)
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    if (e->frozen)
        return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
    /* Its kernels can be dispatched from now on: the packet processor finds them here. */
    pthread_mutex_lock(&hsasim_lock);
    e->frozen = true;
    e->next = executables;
    executables = e;
    pthread_mutex_unlock(&hsasim_lock);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_destroy(hsa_executable_t executable)
{
    struct hsasim_executable *e = (struct hsasim_executable *)(uintptr_t)executable.handle;
    if (!e)
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    pthread_mutex_lock(&hsasim_lock);
    for (struct hsasim_executable **p = &executables; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            break;
        }
    bool running = e->running > 0;
    pthread_mutex_unlock(&hsasim_lock);
    if (running) {
        /*
         * A kernel of it still runs: on a GPU its code and its module's memory go from under
         * it, and it faults. The double keeps the image (the lanes run on in it) and faults.
         */
        hsasim_say("an executable was destroyed while one of its kernels ran: the kernel faults");
        hsasim_memory_fault(e->gpu, 0xdead1000ull);
        return HSA_STATUS_SUCCESS;
    }
    for (size_t i = 0; i < e->segments; ++i)
        hsasim_remove_segment(e->segment[i]);
    if (e->image)
        dlclose(e->image);
    if (e->copy >= 0)
        close(e->copy);
    free(e->symbols);
    free(e->kernels);
    free(e);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t executable, const char *name,
                                               const hsa_agent_t *agent,
                                               hsa_executable_symbol_t *symbol)
{
    struct hsasim_executable *e = (struct hsasim_executable *)(uintptr_t)executable.handle;
    if (!e || !name || !symbol)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (agent && hsasim_agent(*agent) != e->gpu)
        return HSA_STATUS_ERROR_INVALID_AGENT;
    if (e->reader)
        check_buffer(e->reader);
    for (size_t i = 0; i < e->symbol_count; ++i) {
        const struct symbol *s = &e->symbols[i];
        bool match = s->kind == SYMBOL_KERNEL
                         ? !strncmp(name, s->kernel->name, strlen(s->kernel->name)) &&
                               !strcmp(name + strlen(s->kernel->name), ".kd")
                         : !strcmp(name, "__devrt_state");
        if (match) {
            symbol->handle = (uint64_t)(uintptr_t)s;
            return HSA_STATUS_SUCCESS;
        }
    }
    return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
}

hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t handle,
                                            hsa_executable_symbol_info_t attribute, void *value)
{
    const struct symbol *s = (const struct symbol *)(uintptr_t)handle.handle;
    if (!s)
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL;
    switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
        *(hsa_symbol_kind_t *)value =
            s->kind == SYMBOL_KERNEL ? HSA_SYMBOL_KIND_KERNEL : HSA_SYMBOL_KIND_VARIABLE;
        return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
        if (s->kind != SYMBOL_KERNEL)
            break;
        *(uint64_t *)value = s->address;
        return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
        if (s->kind != SYMBOL_KERNEL)
            break;
        *(uint32_t *)value = s->kernel->kernarg_size;
        return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE:
        if (s->kind != SYMBOL_KERNEL)
            break;
        *(uint32_t *)value = s->kernel->group_segment_size;
        return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE:
        if (s->kind != SYMBOL_KERNEL)
            break;
        *(uint32_t *)value = s->kernel->private_segment_size;
        return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS:
        if (s->kind != SYMBOL_VARIABLE)
            break;
        *(uint64_t *)value = s->address;
        return HSA_STATUS_SUCCESS;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE:
        if (s->kind != SYMBOL_VARIABLE)
            break;
        *(uint32_t *)value = s->size;
        return HSA_STATUS_SUCCESS;
    default: break;
    }
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

struct hsasim_kernel *hsasim_kernel(uint64_t object)
{
    pthread_mutex_lock(&hsasim_lock);
    struct hsasim_kernel *found = NULL;
    for (struct hsasim_executable *e = executables; e && !found; e = e->next)
        for (size_t i = 0; i < e->kernel_count; ++i)
            if ((uint64_t)(uintptr_t)&e->kernels[i] == object) {
                found = &e->kernels[i];
                e->running++;
            }
    pthread_mutex_unlock(&hsasim_lock);
    return found;
}

void hsasim_kernel_done(struct hsasim_kernel *kernel)
{
    pthread_mutex_lock(&hsasim_lock);
    kernel->executable->running--;
    pthread_mutex_unlock(&hsasim_lock);
}

void *hsasim_kernel_enter(const struct hsasim_kernel *kernel)
{
    return kernel->executable->enter;
}
