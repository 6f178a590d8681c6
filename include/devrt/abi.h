/*
 * The kernel state ABI: the one block of memory through which device code reaches its
 * runtime. Device code and the host runtime both include this header; it is the only
 * description of the layout. docs/abi.md explains the choices.
 */
#ifndef DEVRT_ABI_H
#define DEVRT_ABI_H

#include <stdint.h>

#include "layout.h"

#define DEVRT_STATE_MAGIC 0x54525644u /* "DVRT" read as little-endian bytes */

/* Bump on any change to a layout in this header or in rpc.h. */
#ifndef DEVRT_ABI_VERSION
/* 2: open-length RPC messages; 3: port state words, heap shards; 4: the device rings the
   doorbell only while the server's sleeping flag is set, and each launch has its own
   exception record in host-visible memory; 5: the heap's grow reply carries the slab's
   layout, which the device writes (devrt_heap_grow_reply); 6: RPC protocol v3, mailboxes
   that count requests, a line per packet, one-word replies in per-lane slots; 7: a request names
   its launch's exception record (devrt_rpc_header.record); 8: the client announces each flip
   in the channel's ready ring (devrt_rpc_channel.ring) */
#define DEVRT_ABI_VERSION 8u
#endif

/* Name of the device global the host looks up after loading a code object. */
#define DEVRT_STATE_SYMBOL "__devrt_state"

enum devrt_exception_code {
    DEVRT_EXCEPTION_NONE = 0,
    DEVRT_EXCEPTION_UNKNOWN = 1,
    DEVRT_EXCEPTION_BOUNDS,
    DEVRT_EXCEPTION_DOMAIN,
    DEVRT_EXCEPTION_OVERFLOW,
    DEVRT_EXCEPTION_INEXACT,
    DEVRT_EXCEPTION_ARGUMENT,
    DEVRT_EXCEPTION_DIVIDE,
    DEVRT_EXCEPTION_DIMENSION_MISMATCH,
    DEVRT_EXCEPTION_OUT_OF_MEMORY,
    DEVRT_EXCEPTION_DOUBLE_FREE,
    DEVRT_EXCEPTION_INVALID_POINTER,
    DEVRT_EXCEPTION_DEVICE_ERROR, /* the device broke the runtime's protocol */
    DEVRT_EXCEPTION_CODE_COUNT
};

/*
 * The first exception of a launch, as one word so that "first writer wins" is a single
 * compare-and-swap from zero:
 *   bits 63..56  exception code (never 0, so a raised word is never 0)
 *   bits 55..40  workitem, flattened within its workgroup
 *   bits 39..0   workgroup, flattened within the grid
 */
#define DEVRT_EXCEPTION_WORD(code, workitem, workgroup)                                            \
    (((uint64_t)(code) << 56) | (((uint64_t)(workitem) & 0xffffu) << 40) |                         \
     ((uint64_t)(workgroup) & 0xffffffffffull))
#define DEVRT_EXCEPTION_WORD_CODE(word) ((uint32_t)((word) >> 56))
#define DEVRT_EXCEPTION_WORD_WORKITEM(word) ((uint32_t)(((word) >> 40) & 0xffffu))
#define DEVRT_EXCEPTION_WORD_WORKGROUP(word) ((word) & 0xffffffffffull)

/*
 * The detail is written only by the lane that won the claim (see struct devrt_state), then
 * the word, then detail_ready = 1 with release order. The host knows the launch geometry,
 * so it recovers the three-dimensional ids from the word; the device stores nothing twice.
 * Strings stay in device memory: the record holds their addresses and the host reads them
 * with a bound. The record is in host-visible memory, one per launch in flight, so that
 * the host resets and reads it without a copy.
 */
struct devrt_exception_record {
    uint64_t word;
    uint32_t detail_ready;
    uint32_t line;
    uint64_t message; /* device address of a NUL-terminated string, or 0 */
    uint64_t file;    /* device address of a NUL-terminated string, or 0 */
    uint64_t value;   /* a value the exception is about, such as a bad pointer */
};

struct devrt_rpc_channel; /* rpc.h */
struct devrt_heap;        /* heap.h */

/*
 * Allocated by the host per loaded code object, in device memory. magic and abi_version
 * come first so that a mismatched reader can tell before it trusts anything else.
 *
 * exception points at the current launch's record; the host changes it between launches,
 * in the launch's stream order, only when the launch needs a record of its own (another
 * launch of the module is in flight, or the last one raised). exception_claim is the
 * "first writer wins" word, kept in device memory so that the compare-and-swap is never a
 * PCIe atomic: a lane wins by swapping in the address of its launch's record, which no
 * lane of the same launch can then do again. A new record address opens the claim anew.
 */
struct devrt_state {
    uint32_t magic;
    uint32_t abi_version;
    uint32_t size;  /* sizeof(struct devrt_state) as the host built it */
    uint32_t flags; /* DEVRT_STATE_*: what the host offers the device */
    uint64_t exception_claim;
    struct devrt_exception_record *exception;
    struct devrt_rpc_channel *rpc;
    struct devrt_heap *heap;
};

/*
 * The host's server can copy device memory while it serves a request (its backend copies
 * without the GPU's compute queues), so a long raw write may leave its bytes in place
 * (DEVRT_OUTPUT_AT_ADDRESS, <devrt/output.h>). A library that does not know the flag
 * ignores it; a host that does not set it gets every byte in the message.
 */
#define DEVRT_STATE_OUTPUT_BY_ADDRESS 1u

DEVRT_LAYOUT(struct devrt_exception_record, word, 0);
DEVRT_LAYOUT(struct devrt_exception_record, detail_ready, 8);
DEVRT_LAYOUT(struct devrt_exception_record, line, 12);
DEVRT_LAYOUT(struct devrt_exception_record, message, 16);
DEVRT_LAYOUT(struct devrt_exception_record, file, 24);
DEVRT_LAYOUT(struct devrt_exception_record, value, 32);
DEVRT_LAYOUT_SIZE(struct devrt_exception_record, 40);
DEVRT_LAYOUT(struct devrt_state, magic, 0);
DEVRT_LAYOUT(struct devrt_state, abi_version, 4);
DEVRT_LAYOUT(struct devrt_state, size, 8);
DEVRT_LAYOUT(struct devrt_state, flags, 12);
DEVRT_LAYOUT(struct devrt_state, exception_claim, 16);
DEVRT_LAYOUT(struct devrt_state, exception, 24);
DEVRT_LAYOUT(struct devrt_state, rpc, 32);
DEVRT_LAYOUT(struct devrt_state, heap, 40);
DEVRT_LAYOUT_SIZE(struct devrt_state, 48);

/*
 * Until the host attaches a state block, __devrt_state points at this record in the code
 * object's read-only data: the host reads it to check that the device library speaks its
 * ABI before it writes anything.
 */
struct devrt_library_id {
    uint32_t magic;
    uint32_t abi_version;
};
DEVRT_LAYOUT(struct devrt_library_id, magic, 0);
DEVRT_LAYOUT(struct devrt_library_id, abi_version, 4);
DEVRT_LAYOUT_SIZE(struct devrt_library_id, 8);

DEVRT_STATIC_ASSERT(sizeof(void *) == 8, "devrt supports 64-bit address spaces only");

#endif
