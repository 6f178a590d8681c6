/* Hidden argument reads found in an amdgcn code object's code (amdgpu_code_scan.h). */
#include "amdgpu_code_scan.h"

#include <amd_comgr.h>
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vendor_library.h"

static amd_comgr_status_t (*create_info)(const char *,
                                         uint64_t (*)(uint64_t, char *, uint64_t, void *),
                                         void (*)(const char *, void *), void (*)(uint64_t, void *),
                                         amd_comgr_disassembly_info_t *);
static amd_comgr_status_t (*destroy_info)(amd_comgr_disassembly_info_t);
static amd_comgr_status_t (*disassemble)(amd_comgr_disassembly_info_t, uint64_t, void *,
                                         uint64_t *);

static pthread_once_t comgr_once = PTHREAD_ONCE_INIT;
static void *comgr;
static char comgr_error[400];

static void open_comgr(void)
{
    static const char *const files[] = {"libamd_comgr.so.3", "libamd_comgr.so.2", NULL};
    static const struct devrt_vendor_library library = {
        .what = "ROCm's code object manager",
        .variable = "DEVRT_COMGR_LIBRARY",
        .files = files,
    };
    const struct devrt_vendor_symbol symbols[] = {
        {"amd_comgr_create_disassembly_info", &create_info, false},
        {"amd_comgr_destroy_disassembly_info", &destroy_info, false},
        {"amd_comgr_disassemble_instruction", &disassemble, false},
    };
    comgr = devrt_vendor_library_open(&library, symbols, sizeof symbols / sizeof symbols[0],
                                      comgr_error, sizeof comgr_error);
}

/* One executable section, which comgr reads through read_code, and the last instruction. */
struct code {
    const unsigned char *bytes;
    uint64_t address, size;
    char instruction[128];
};

static uint64_t read_code(uint64_t from, char *to, uint64_t size, void *user)
{
    const struct code *c = user;
    if (from < c->address || from - c->address >= c->size)
        return 0;
    uint64_t offset = from - c->address;
    uint64_t n = c->size - offset < size ? c->size - offset : size;
    memcpy(to, c->bytes + offset, n);
    return n;
}

static void keep_instruction(const char *instruction, void *user)
{
    struct code *c = user;
    while (isspace((unsigned char)*instruction))
        ++instruction;
    snprintf(c->instruction, sizeof c->instruction, "%s", instruction);
}

static void ignore_address(uint64_t address, void *user)
{
    (void)address;
    (void)user;
}

/*
 * The bytes the scalar load MNEMONIC reads: s_load_dword, s_load_dwordx2 to x16 (gfx9 to
 * gfx10), s_load_b32 to b512, s_load_u8 and the like (gfx11 and later).
 */
static uint32_t load_bytes(const char *mnemonic)
{
    const char *kind = mnemonic + strlen("s_load_");
    unsigned n;
    if (sscanf(kind, "dwordx%u", &n) == 1)
        return 4 * n;
    if (sscanf(kind, "%*1[biu]%u", &n) == 1 && n >= 8)
        return n / 8;
    return 4;
}

/* A scalar load as the disassembly writes it: what it reads. */
struct load {
    bool in_register; /* its offset is a register's: it may read any slot */
    uint64_t at, bytes;
};

/* Whether INSTRUCTION is a scalar load, and then what it reads, in *LOAD. */
static bool scalar_load(const char *instruction, struct load *load)
{
    /* s_load_dwordx2 s[4:5], s[6:7], 0x50 and s_load_b64 s[4:5], s[6:7], s8 offset:0x0 */
    char mnemonic[32], offset[24];
    if (sscanf(instruction, "%31s %*[^,], %*[^,], %23s", mnemonic, offset) != 2 ||
        strncmp(mnemonic, "s_load_", 7))
        return false;
    char *end;
    load->at = strtoull(offset, &end, 0);
    load->in_register = end == offset || *end != '\0';
    load->bytes = load_bytes(mnemonic);
    if (load->in_register && !strcmp(offset, "null")) {
        /* gfx12 writes a missing register offset as null, the immediate after it */
        const char *immediate = strstr(instruction, "offset:");
        if (!immediate)
            return false;
        load->at = strtoull(immediate + 7, NULL, 0);
        load->in_register = false;
    }
    return true;
}

/* Whether LOAD may read one of the COUNT SLOTS. */
static bool may_read(const struct load *load, const struct devrt_amdgpu_slot *slots, size_t count)
{
    if (load->in_register)
        return true;
    for (size_t i = 0; i < count; ++i)
        for (int j = 0; j < 2; ++j) {
            uint64_t slot = j ? slots[i].implicit_offset : slots[i].kernarg_offset;
            if (load->at < slot + 8 && slot < load->at + load->bytes)
                return true;
        }
    return false;
}

/* The function symbol of ELF holding ADDRESS, or "" where the symbol table names none. */
static const char *function_at(Elf *elf, uint64_t address)
{
    Elf_Scn *section = NULL;
    while ((section = elf_nextscn(elf, section))) {
        GElf_Shdr header;
        if (!gelf_getshdr(section, &header) || header.sh_type != SHT_SYMTAB || !header.sh_entsize)
            continue;
        Elf_Data *symbols = elf_getdata(section, NULL);
        size_t n = symbols ? symbols->d_size / header.sh_entsize : 0;
        for (size_t i = 0; i < n; ++i) {
            GElf_Sym s;
            if (gelf_getsym(symbols, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
                s.st_value <= address && address - s.st_value < s.st_size) {
                const char *name = elf_strptr(elf, header.sh_link, s.st_name);
                return name ? name : "";
            }
        }
    }
    return "";
}

/*
 * Scans one section C with INFO for loads of the arguments in ARGS (COUNT) not found yet;
 * returns how many are still to find.
 */
static size_t scan_section(Elf *elf, amd_comgr_disassembly_info_t info, struct code *c,
                           struct devrt_amdgpu_slot_reads *args, size_t count, size_t left)
{
    for (uint64_t at = c->address; left && at < c->address + c->size;) {
        uint64_t size = 0;
        c->instruction[0] = '\0';
        struct load load;
        if (disassemble(info, at, c, &size) == AMD_COMGR_STATUS_SUCCESS &&
            scalar_load(c->instruction, &load)) {
            for (size_t i = 0; i < count; ++i) {
                if (args[i].read[0] || !may_read(&load, args[i].slots, args[i].count))
                    continue;
                const char *function = function_at(elf, at);
                snprintf(args[i].read, sizeof args[i].read,
                         "its code may read it: %s at 0x%" PRIx64 "%s%s loads %s", c->instruction,
                         at, function[0] ? " in " : "", function,
                         load.in_register ? "from an offset held in a register"
                                          : "from its offset");
                left--;
            }
        }
        /* Data between functions (padding, s_code_end) decodes as nothing: step a word. */
        at += size >= 4 ? size : 4;
    }
    return left;
}

/* Each argument of ARGS (COUNT) with slots and nothing found yet is told WHY. */
static void cannot_read(struct devrt_amdgpu_slot_reads *args, size_t count, const char *why)
{
    for (size_t i = 0; i < count; ++i)
        if (args[i].count && !args[i].read[0])
            snprintf(args[i].read, sizeof args[i].read, "devrt cannot read its code to tell: %s",
                     why);
}

void devrt_amdgpu_scan_slot_reads(Elf *elf, const char *isa, struct devrt_amdgpu_slot_reads *args,
                                  size_t count)
{
    size_t left = 0;
    for (size_t i = 0; i < count; ++i) {
        args[i].read[0] = '\0';
        left += args[i].count != 0;
    }
    if (!left)
        return;
    pthread_once(&comgr_once, open_comgr);
    if (!comgr) {
        cannot_read(args, count, comgr_error);
        return;
    }
    amd_comgr_disassembly_info_t info;
    if (create_info(isa, read_code, keep_instruction, ignore_address, &info) !=
        AMD_COMGR_STATUS_SUCCESS) {
        char why[160];
        snprintf(why, sizeof why, "this comgr does not disassemble %s", isa);
        cannot_read(args, count, why);
        return;
    }
    struct code c = {0};
    Elf_Scn *section = NULL;
    while (left && (section = elf_nextscn(elf, section))) {
        GElf_Shdr header;
        Elf_Data *data;
        if (!gelf_getshdr(section, &header) || header.sh_type != SHT_PROGBITS ||
            !(header.sh_flags & SHF_EXECINSTR) || !(data = elf_getdata(section, NULL)) ||
            !data->d_buf)
            continue;
        c.bytes = data->d_buf;
        c.address = header.sh_addr;
        c.size = data->d_size;
        left = scan_section(elf, info, &c, args, count, left);
    }
    destroy_info(info);
}
