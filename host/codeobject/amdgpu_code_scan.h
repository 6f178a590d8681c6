/*
 * Which code of an amdgcn code object may read a hidden argument slot, found by reading the
 * code itself with ROCm's code object manager (comgr), which disassembles every amdgcn
 * processor its ROCm release supports.
 *
 * Why: LLVM lists ockl's hostcall buffer and heap among a kernel's hidden arguments whenever
 * it cannot prove them unused (-O0, a call it cannot see into), and devrt serves neither, so it
 * may write 0 there only when no code reads the slot. The symbol table cannot answer that:
 * ockl's functions are linked in as local symbols, which any stripping tool removes.
 *
 * The implicit arguments are uniform, so LLVM reads them with scalar loads (s_load_*) from the
 * kernarg segment pointer or the implicit argument pointer. A scalar load may read a slot when
 * its bytes overlap the slot at the slot's offset in either segment, or when its offset is
 * held in a register (ockl, built for several code object versions, picks the offset at run
 * time). Loads through vector registers are not considered.
 */
#ifndef DEVRT_AMDGPU_CODE_SCAN_H
#define DEVRT_AMDGPU_CODE_SCAN_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

/* A hidden argument slot of one kernel: 8 bytes at these offsets. */
struct devrt_amdgpu_slot {
    uint32_t kernarg_offset;  /* from the kernarg segment's start (the metadata's .offset) */
    uint32_t implicit_offset; /* from the first hidden argument, where the implicit pointer is */
};

enum { DEVRT_AMDGPU_SLOT_READ_SIZE = 512 };

/* One hidden argument's slots, one a kernel that lists it, and what the scan found. */
struct devrt_amdgpu_slot_reads {
    const struct devrt_amdgpu_slot *slots;
    size_t count;
    /* Out: the first scalar load that may read one of the slots (the instruction, its
       address and the function holding it where the symbol table names one), why the
       code could not be read (comgr missing, or not knowing the processor), or "". */
    char read[DEVRT_AMDGPU_SLOT_READ_SIZE];
};

/*
 * Scans every executable section of ELF, a code object for ISA (a target ID such as
 * amdgcn-amd-amdhsa--gfx90a:xnack-), once, for loads of each of the COUNT arguments' slots
 * in ARGS.
 */
void devrt_amdgpu_scan_slot_reads(Elf *elf, const char *isa, struct devrt_amdgpu_slot_reads *args,
                                  size_t count);

#endif
