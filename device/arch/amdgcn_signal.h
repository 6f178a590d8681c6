/*
 * The part of the HSA runtime's amd_signal_t (hsa/amd_hsa_signal.h) that device code uses
 * to ring a signal, copied because device code cannot include the runtime's headers. Kept
 * apart from amdgcn.h so that a host unit test (tests/unit/amdgcn_signal_test.c) can hold
 * it against the installed runtime's definition.
 */
#ifndef DEVRT_ARCH_AMDGCN_SIGNAL_H
#define DEVRT_ARCH_AMDGCN_SIGNAL_H

#include <stdint.h>

#include <devrt/layout.h>

struct devrt_amdgcn_signal {
    int64_t kind;
    int64_t value;
    uint64_t *event_mailbox;
    uint32_t event_id;
};

/* As AMD documents amd_signal_t: value at byte 8, event mailbox at 16, event id at 24. */
DEVRT_LAYOUT(struct devrt_amdgcn_signal, kind, 0);
DEVRT_LAYOUT(struct devrt_amdgcn_signal, value, 8);
DEVRT_LAYOUT(struct devrt_amdgcn_signal, event_mailbox, 16);
DEVRT_LAYOUT(struct devrt_amdgcn_signal, event_id, 24);
DEVRT_LAYOUT_SIZE(struct devrt_amdgcn_signal, 32);

#endif
