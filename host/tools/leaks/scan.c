/*
 * Reads the symbols (and, in relocatable objects, the relocations) of an ELF file through
 * elfutils' libelf. Everything in the file is untrusted: counts come from data sizes, not
 * from header fields, and every index is checked before it is used.
 */
#include <ar.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaks.h"

struct scan {
    const struct devrt_leaks_visitor *visitor;
    char *error;
    size_t error_size;
};

static int fail(struct scan *s, const char *member, const char *format, ...)
{
    char reason[256];
    va_list ap;

    va_start(ap, format);
    vsnprintf(reason, sizeof reason, format, ap);
    va_end(ap);
    if (member)
        snprintf(s->error, s->error_size, "member %s: %s", member, reason);
    else
        snprintf(s->error, s->error_size, "%s", reason);
    return -1;
}

/* A symbol table with what it takes to read it. */
struct symtab {
    Elf *elf;
    size_t index;  /* its section index */
    size_t strtab; /* section index of its names */
    Elf_Data *data;
    Elf_Data *xindex; /* SHT_SYMTAB_SHNDX data, for section indexes past 0xff00 */
    size_t count;
};

static Elf_Scn *find_section(Elf *elf, GElf_Word type, GElf_Shdr *shdr)
{
    Elf_Scn *scn = NULL;

    while ((scn = elf_nextscn(elf, scn)) != NULL)
        if (gelf_getshdr(scn, shdr) && shdr->sh_type == type)
            return scn;
    return NULL;
}

static int open_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, struct symtab *t)
{
    size_t entry = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
    Elf_Scn *x = NULL;
    GElf_Shdr xshdr;

    t->elf = elf;
    t->index = elf_ndxscn(scn);
    t->strtab = shdr->sh_link;
    t->data = elf_getdata(scn, NULL);
    t->xindex = NULL;
    if (!t->data || entry == 0)
        return -1;
    t->count = t->data->d_size / entry;
    while ((x = elf_nextscn(elf, x)) != NULL)
        if (gelf_getshdr(x, &xshdr) && xshdr.sh_type == SHT_SYMTAB_SHNDX &&
            xshdr.sh_link == t->index)
            t->xindex = elf_getdata(x, NULL);
    return 0;
}

/* Symbol i, its name and its real section index; NULL when the entry cannot be read. */
static GElf_Sym *read_symbol(const struct symtab *t, size_t i, GElf_Sym *sym, const char **name,
                             size_t *shndx)
{
    GElf_Word x = 0;

    if (!gelf_getsymshndx(t->data, t->xindex, (int)i, sym, &x))
        return NULL;
    *shndx = sym->st_shndx == SHN_XINDEX ? x : sym->st_shndx;
    *name = elf_strptr(t->elf, t->strtab, sym->st_name);
    if (!*name)
        return NULL;
    return sym;
}

static bool is_global(const GElf_Sym *sym)
{
    int bind = GELF_ST_BIND(sym->st_info);

    return bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE;
}

/* The function or data object in section shndx that holds offset, or NULL. */
static const char *containing_symbol(const struct symtab *t, size_t shndx, GElf_Addr offset)
{
    const char *best = NULL;
    size_t i;

    for (i = 1; i < t->count; i++) {
        GElf_Sym sym;
        const char *name;
        size_t sec;
        int type;

        if (!read_symbol(t, i, &sym, &name, &sec) || sec != shndx || !*name)
            continue;
        type = GELF_ST_TYPE(sym.st_info);
        if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC)
            continue;
        if (offset < sym.st_value || offset - sym.st_value >= sym.st_size)
            continue;
        /* A function wins over a data object that overlaps it. */
        if (!best || type == STT_FUNC)
            best = name;
    }
    return best;
}

/* One (symbol, function) pair reported so far, so that each is reported once. */
struct seen {
    size_t symbol;
    const char *function;
};

struct seen_set {
    struct seen *items;
    size_t count, capacity;
};

static bool seen_before(struct seen_set *set, size_t symbol, const char *function)
{
    struct seen *grown;
    size_t i;

    for (i = 0; i < set->count; i++) {
        const char *f = set->items[i].function;
        if (set->items[i].symbol == symbol &&
            (f == function || (f && function && strcmp(f, function) == 0)))
            return true;
    }
    if (set->count == set->capacity) {
        size_t capacity = set->capacity ? 2 * set->capacity : 16;
        grown = realloc(set->items, capacity * sizeof *grown);
        if (!grown)
            return false; /* reporting twice beats not reporting */
        set->items = grown;
        set->capacity = capacity;
    }
    set->items[set->count++] = (struct seen){symbol, function};
    return false;
}

static void report(struct scan *s, const char *member, const char *symbol, const char *function,
                   bool weak)
{
    struct devrt_leak leak = {member, symbol, function, weak};

    if (s->visitor->leak)
        s->visitor->leak(s->visitor->context, &leak);
}

/*
 * In a relocatable object, the relocations name the place of each reference: the
 * function whose code (or the data object whose initializer) holds it.
 */
static int report_references(struct scan *s, const char *member, const struct symtab *t,
                             const bool *leaking)
{
    Elf *elf = t->elf;
    size_t rel_size = gelf_fsize(elf, ELF_T_REL, 1, EV_CURRENT);
    size_t rela_size = gelf_fsize(elf, ELF_T_RELA, 1, EV_CURRENT);
    struct seen_set seen = {0};
    bool *found = calloc(t->count, sizeof *found);
    Elf_Scn *scn = NULL;
    GElf_Shdr shdr;
    size_t i;

    if (!found)
        return fail(s, member, "out of memory");
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        Elf_Data *data;
        size_t n;

        if (!gelf_getshdr(scn, &shdr) || shdr.sh_link != t->index)
            continue;
        if (shdr.sh_type != SHT_REL && shdr.sh_type != SHT_RELA)
            continue;
        data = elf_getdata(scn, NULL);
        if (!data || rel_size == 0 || rela_size == 0) {
            free(seen.items);
            free(found);
            return fail(s, member, "unreadable relocations: %s", elf_errmsg(-1));
        }
        n = data->d_size / (shdr.sh_type == SHT_RELA ? rela_size : rel_size);
        for (i = 0; i < n; i++) {
            GElf_Rela rela;
            GElf_Rel rel;
            size_t sym;
            GElf_Addr offset;
            const char *function, *name;
            GElf_Sym symbol;
            size_t shndx;

            if (shdr.sh_type == SHT_RELA) {
                if (!gelf_getrela(data, (int)i, &rela))
                    break;
                sym = GELF_R_SYM(rela.r_info);
                offset = rela.r_offset;
            } else {
                if (!gelf_getrel(data, (int)i, &rel))
                    break;
                sym = GELF_R_SYM(rel.r_info);
                offset = rel.r_offset;
            }
            if (sym == 0 || sym >= t->count || !leaking[sym])
                continue;
            if (!read_symbol(t, sym, &symbol, &name, &shndx))
                continue;
            found[sym] = true;
            function = containing_symbol(t, shdr.sh_info, offset);
            if (!seen_before(&seen, sym, function))
                report(s, member, name, function, GELF_ST_BIND(symbol.st_info) == STB_WEAK);
        }
    }
    /* A reference without a relocation still needs the symbol at link time. */
    for (i = 1; i < t->count; i++) {
        GElf_Sym symbol;
        const char *name;
        size_t shndx;

        if (leaking[i] && !found[i] && read_symbol(t, i, &symbol, &name, &shndx))
            report(s, member, name, NULL, GELF_ST_BIND(symbol.st_info) == STB_WEAK);
    }
    free(seen.items);
    free(found);
    return 0;
}

static int scan_object(struct scan *s, Elf *elf, const char *member)
{
    GElf_Ehdr ehdr;
    GElf_Shdr shdr;
    Elf_Scn *scn;
    struct symtab t;
    bool *leaking;
    bool any = false;
    size_t i, size, count;
    int err;

    (void)elf_errno(); /* errors that earlier reads let pass are not this file's */
    if (!gelf_getehdr(elf, &ehdr))
        return fail(s, member, "malformed ELF header: %s", elf_errmsg(-1));
    if (ehdr.e_type != ET_REL && ehdr.e_type != ET_DYN && ehdr.e_type != ET_EXEC)
        return fail(s, member, "ELF type %u is not an object, shared object or executable",
                    (unsigned)ehdr.e_type);
    /*
     * libelf reads a file whose section headers lie past its end as one without sections;
     * a truncated file must not pass for one that references nothing.
     */
    if (!elf_rawfile(elf, &size) || elf_getshdrnum(elf, &count) != 0)
        return fail(s, member, "malformed ELF header: %s", elf_errmsg(-1));
    if (ehdr.e_shoff > size || (count && ehdr.e_shentsize == 0) ||
        (ehdr.e_shentsize && count > (size - ehdr.e_shoff) / ehdr.e_shentsize))
        return fail(s, member, "truncated: the section headers lie past the end of the file");
    /* A linked image is loaded by its dynamic symbols; a static one has only .symtab. */
    scn = NULL;
    if (ehdr.e_type != ET_REL)
        scn = find_section(elf, SHT_DYNSYM, &shdr);
    if (!scn)
        scn = find_section(elf, SHT_SYMTAB, &shdr);
    if ((err = elf_errno()) != 0)
        return fail(s, member, "unreadable section headers: %s", elf_errmsg(err));
    if (!scn)
        return 0; /* nothing defined, nothing referenced */
    if (open_symtab(elf, scn, &shdr, &t) != 0)
        return fail(s, member, "unreadable symbol table: %s", elf_errmsg(-1));

    leaking = calloc(t.count ? t.count : 1, sizeof *leaking);
    if (!leaking)
        return fail(s, member, "out of memory");
    for (i = 1; i < t.count; i++) {
        GElf_Sym sym;
        const char *name;
        size_t shndx;

        if (!read_symbol(&t, i, &sym, &name, &shndx)) {
            err = elf_errno();
            free(leaking);
            return fail(s, member, "unreadable symbol %zu: %s", i,
                        err ? elf_errmsg(err) : "bad name");
        }
        if (!*name || !is_global(&sym))
            continue;
        if (shndx != SHN_UNDEF) {
            if (s->visitor->defined)
                s->visitor->defined(s->visitor->context, member, name);
        } else if (devrt_leaks_is_device_symbol(name)) {
            leaking[i] = true;
            any = true;
        }
    }
    if (any && ehdr.e_type == ET_REL) {
        int rc = report_references(s, member, &t, leaking);
        free(leaking);
        return rc;
    }
    for (i = 1; any && i < t.count; i++) {
        GElf_Sym sym;
        const char *name;
        size_t shndx;

        if (leaking[i] && read_symbol(&t, i, &sym, &name, &shndx))
            report(s, member, name, NULL, GELF_ST_BIND(sym.st_info) == STB_WEAK);
    }
    free(leaking);
    return 0;
}

static int scan_archive(struct scan *s, Elf *archive, size_t size)
{
    Elf_Cmd cmd = ELF_C_READ_MMAP;
    Elf *member;
    int rc = 0;

    /* libelf takes an archive with no members for one cut short; it is only empty. */
    if (size <= SARMAG)
        return 0;
    while (rc == 0) {
        Elf_Arhdr *header;
        const char *name;
        int err;

        (void)elf_errno();
        member = elf_begin(-1, cmd, archive);
        if (!member) {
            /* The end of the archive, or a member header that cannot be read. */
            if ((err = elf_errno()) != 0)
                rc = fail(s, NULL, "malformed archive: %s", elf_errmsg(err));
            break;
        }
        header = elf_getarhdr(member);
        name = header && header->ar_name ? header->ar_name : "?";

        switch (elf_kind(member)) {
        case ELF_K_ELF: rc = scan_object(s, member, name); break;
        case ELF_K_AR: rc = fail(s, name, "archives inside archives are not read"); break;
        default:
            /* The index ("/") and long-name ("//") members are the archive's own. */
            if (name[0] != '/' && s->visitor->skipped)
                s->visitor->skipped(s->visitor->context, name, "not an ELF object");
            break;
        }
        cmd = elf_next(member);
        elf_end(member);
    }
    return rc;
}

int devrt_leaks_scan(void *image, size_t size, const struct devrt_leaks_visitor *visitor,
                     char *error, size_t error_size)
{
    struct scan s = {visitor, error, error_size};
    Elf *elf;
    int rc;

    if (elf_version(EV_CURRENT) == EV_NONE)
        return fail(&s, NULL, "libelf is out of date: %s", elf_errmsg(-1));
    if (size == 0)
        return fail(&s, NULL, "empty file");
    (void)elf_errno(); /* start from no error */
    elf = elf_memory(image, size);
    if (!elf) {
        if (size >= SELFMAG && memcmp(image, ELFMAG, SELFMAG) == 0)
            return fail(&s, NULL, "truncated or malformed ELF file: %s", elf_errmsg(-1));
        return fail(&s, NULL, "cannot read: %s", elf_errmsg(-1));
    }
    switch (elf_kind(elf)) {
    case ELF_K_ELF: rc = scan_object(&s, elf, NULL); break;
    case ELF_K_AR: rc = scan_archive(&s, elf, size); break;
    default:
        if (size >= SELFMAG && memcmp(image, ELFMAG, SELFMAG) == 0)
            rc = fail(&s, NULL, "truncated or malformed ELF header");
        else if (size >= SARMAG && memcmp(image, "!<thin>\n", SARMAG) == 0)
            rc = fail(&s, NULL, "a thin archive, which libelf does not read; give its members");
        else
            rc = fail(&s, NULL, "not an ELF file or archive");
        break;
    }
    elf_end(elf);
    return rc;
}
