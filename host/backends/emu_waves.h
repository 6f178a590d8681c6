/*
 * The emulation's wave scheduler: a grid of an emulation image's kernel run on lanes, each a
 * host thread (docs/runtime.md). The emulation backend (emu.c) is one user; a test double
 * of an HSA runtime that runs AQL dispatches of emulation images is to be another. It calls
 * nothing of the runtime (runtime.h) and reports through its result, so that a program
 * without libdevrt's state can link it.
 *
 * Two copies may live in one process (libdevrt.so's and one linked into another shared
 * object): each keeps its own lanes, and its stop signal handler passes a signal that is
 * not for one of its lanes to the handler installed before it. Its functions are hidden:
 * exported, the first copy loaded would take the calls of both.
 */
#ifndef DEVRT_EMU_WAVES_H
#define DEVRT_EMU_WAVES_H

#include <ffi.h>
#include <stdbool.h>
#include <stdint.h>

#include <devrt/emu.h>

/* One grid of an emulation image's kernel on lanes (host threads). */
struct devrt_emu_grid {
    devrt_emu_enter_fn *enter; /* the image's __devrt_emu_enter */
    void (*kernel)(void);      /* called through libffi with `cif` when `call` is NULL */
    devrt_emu_call_fn *call;   /* DEVRT_KERNELn's caller, or NULL */
    ffi_cif *cif;
    void **values;        /* each argument's bytes */
    uint32_t block[3];    /* lanes per workgroup */
    uint32_t grid[3];     /* workgroups */
    uint32_t wave_size;   /* 1..64 */
    uint64_t random_seed; /* 0: the converged schedule */
    uint64_t deadline;    /* CLOCK_MONOTONIC ns; 0: none */
    const bool *cancel;   /* optional: once *cancel reads true (atomic acquire) the lanes are
                             stopped as past a deadline, within about 10 ms */
};

enum devrt_emu_grid_result {
    DEVRT_EMU_GRID_DONE,
    DEVRT_EMU_GRID_STOPPED,   /* past the deadline, or cancelled */
    DEVRT_EMU_GRID_NO_MEMORY, /* for the lanes' bookkeeping; no lane ran */
    DEVRT_EMU_GRID_NO_THREAD, /* a lane thread did not start; those started ran to their end */
};

/* Runs every workgroup of GRID and returns once every lane thread has ended. */
__attribute__((visibility("hidden"))) enum devrt_emu_grid_result
devrt_emu_run_grid(const struct devrt_emu_grid *grid);

/* The random schedule's seed for a device's SEED and the number of its LAUNCH: never 0. */
__attribute__((visibility("hidden"))) uint64_t devrt_emu_random_seed(uint64_t seed,
                                                                     uint64_t launch);

#endif
