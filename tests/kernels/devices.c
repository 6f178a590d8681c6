/*
 * The kernel of the several-devices test (tests/emu/devices_test.c): each lane prints, calls
 * the host and allocates, so that one launch needs every part of its device's server.
 */
#include <devrt/devrt.h>

#define DEVICES_SERVICE 11u
#define DEVICES_BLOCK 64u

/*
 * out[lane]: the host call's answer. Each lane prints `lines` lines that name TAG, allocates
 * and frees blocks of several sizes, and keeps `keep` blocks of DEVICES_BLOCK bytes, so that
 * each device's heap ends with a footprint of its own.
 */
static void do_work(uint64_t *out, uint32_t tag, uint32_t lines, uint32_t keep)
{
    uint32_t id = (uint32_t)devrt_global_id(DEVRT_X);
    for (uint32_t i = 0; i < lines; ++i)
        devrt_printf("device %u lane %u line %u\n", tag, id, i);
    out[id] = devrt_hostcall(DEVICES_SERVICE, tag, id, 0, 0);
    for (uint32_t size = 16; size <= 4096; size *= 4) {
        uint8_t *p = devrt_malloc(size);
        if (p) {
            p[0] = (uint8_t)tag;
            devrt_free(p);
        }
    }
    for (uint32_t i = 0; i < keep; ++i) {
        uint64_t *p = devrt_malloc(DEVICES_BLOCK);
        if (p)
            *p = tag;
    }
}

DEVRT_KERNEL4(work, uint64_t *, out, uint32_t, tag, uint32_t, lines, uint32_t, keep)
{
    do_work(out, tag, lines, keep);
}

/* The work, then lane 0 raises with its device's tag: a launch that fails, on one
   device, while the others run theirs. */
DEVRT_KERNEL4(work_then_raise, uint64_t *, out, uint32_t, tag, uint32_t, lines, uint32_t, keep)
{
    do_work(out, tag, lines, keep);
    if (devrt_global_id(DEVRT_X) == 0)
        devrt_signal_exception_at(DEVRT_EXCEPTION_ARGUMENT, "the device's planned raise", __FILE__,
                                  __LINE__, tag);
}
