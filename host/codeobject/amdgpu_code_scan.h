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

/*
 * Scans every executable section of ELF, a code object for ISA (a target ID such as
 * amdgcn-amd-amdhsa--gfx90a:xnack-), for the first scalar load that may read one of SLOTS
 * (COUNT of them). Returns 1 and describes that load in READ (the instruction, its address and
 * the function holding it where the symbol table names one); 0 when no load may; -1 when the
 * code cannot be read, READ saying why (comgr missing, or not knowing the processor).
 */
int devrt_amdgpu_scan_slot_reads(Elf *elf, const char *isa, const struct devrt_amdgpu_slot *slots,
                                 size_t count, char read[DEVRT_AMDGPU_SLOT_READ_SIZE]);

#endif
