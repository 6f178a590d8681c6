/*
 * device/arch/amdgcn.h rings HSA signals through a copy of amd_signal_t's layout; this
 * holds the copy against the installed HSA runtime's own definition. With `control`, it
 * holds against it a copy with one field moved, which it must refuse.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <hsa/amd_hsa_signal.h>

#include "arch/amdgcn_signal.h"

/* The copy as it would be had a field been forgotten before the event mailbox. */
struct moved_signal {
    int64_t kind;
    int64_t value;
    uint64_t forgotten;
    uint64_t *event_mailbox;
    uint32_t event_id;
};

static int failures;

static void same(const char *field, size_t ours, size_t theirs)
{
    if (ours != theirs) {
        printf("%s: at byte %zu in the copy, %zu in amd_signal_t\n", field, ours, theirs);
        failures++;
    }
}

int main(int argc, char **argv)
{
    int control = argc > 1 && !strcmp(argv[1], "control");
    if (control) {
        same("kind", offsetof(struct moved_signal, kind), offsetof(amd_signal_t, kind));
        same("value", offsetof(struct moved_signal, value), offsetof(amd_signal_t, value));
        same("event_mailbox", offsetof(struct moved_signal, event_mailbox),
             offsetof(amd_signal_t, event_mailbox_ptr));
        same("event_id", offsetof(struct moved_signal, event_id), offsetof(amd_signal_t, event_id));
    } else {
        same("kind", offsetof(struct devrt_amdgcn_signal, kind), offsetof(amd_signal_t, kind));
        same("value", offsetof(struct devrt_amdgcn_signal, value), offsetof(amd_signal_t, value));
        same("event_mailbox", offsetof(struct devrt_amdgcn_signal, event_mailbox),
             offsetof(amd_signal_t, event_mailbox_ptr));
        same("event_id", offsetof(struct devrt_amdgcn_signal, event_id),
             offsetof(amd_signal_t, event_id));
        same("event_id's size", sizeof(((struct devrt_amdgcn_signal *)0)->event_id),
             sizeof(((amd_signal_t *)0)->event_id));
    }
    printf("%s: %d failures\n", control ? "control" : "layout", failures);
    return failures ? 1 : 0;
}
