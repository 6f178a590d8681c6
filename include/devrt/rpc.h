/*
 * The RPC protocol between device code and its host server, included by both sides.
 *
 * A channel has a fixed set of ports. Each port has two mailbox words and one buffer:
 *
 *   outbox[port]  written only by the device (client), read by the host (server)
 *   inbox[port]   written only by the host, read by the device
 *   buffer[port]  a header line, one 64-byte packet per lane, one reply slot per lane
 *
 * The mailbox words count requests: the client owns the port while their counts agree, the
 * server while they differ. Whoever owns it may touch the buffer, then hands it over:
 *
 *   client: write header and packets; release fence; outbox = next count  -> server owns
 *   server: read; write the reply;     release fence; inbox  = outbox's    -> client owns
 *                                                      count and status
 *
 * The server's word also carries the request's status (DEVRT_RPC_TAG_REFUSED), so the
 * poll that sees the hand-back has the status too; ownership compares the counts alone.
 * The count, not a bit, because a request's number also tags its reply: a request that
 * asks for one word back (DEVRT_RPC_WANT_WORD) gets it in its lane's reply slot, two
 * 8-byte halves each tagged with the request's number, which the server writes after
 * everything else it writes to the buffer and before the inbox. Each lane polls its own
 * slot, so the poll that sees the hand-back reads the reply too: one read of host memory,
 * not two. Each half is one 8-byte store and one 8-byte load, which PCIe and both CPUs
 * carry whole; no access of 16 bytes is assumed to be atomic. A lane that asks for a word
 * clears its slot before it posts (tag 0, the number of no request), so what it polls is
 * never an earlier request's reply, even one written there by a module whose memory this
 * one reuses.
 *
 * Mailboxes and buffers live in host-visible memory and see only plain loads and stores.
 * Which wave may use a port is decided by a word per port in device memory (the port's
 * state, devrt_rpc_port_state), the only read-modify-write atomic of the protocol, so no
 * PCIe atomics are needed. The word also remembers what the last holder knew, so that the
 * next one need not ask host memory: on a discrete GPU every read of host memory is a bus
 * round trip of a microsecond or more.
 *
 * Home ports: the first half of the ports (devrt_rpc_home_ports) are homes, one for each
 * place a wave can run in the hardware modulo their number, so that waves running at once
 * find theirs free; the second half is an overflow pool. A wave tries its home port once;
 * held (two places sharing a home, a wave that moved, a holder that ended holding it), it
 * walks the ports from its place in the pool on, one try a port, round and round until one
 * is free, so that it never waits for one particular holder.
 *
 * Messages: each active lane sends one byte string. Its first packet starts with a
 * devrt_rpc_first_packet header (the lane's total length); the rest of that packet and
 * all following packets carry bytes. A message that fits one packet costs its lane one
 * line, and the server reads only the bytes it states. A longer one is streamed: the
 * client sends a packet with DEVRT_RPC_MORE set, waits until the server hands the port
 * back (the inbox, with the packet's status), and sends the next. A request without a reply
 * (output) does not wait after its last packet; the next client of the port waits for the
 * hand-back instead. A reply of more than a word (the heap's, DEVRT_RPC_WANT_REPLY)
 * overwrites the lane's packet and is handed back by the inbox.
 *
 * A lane that cannot know its length up front (output: its strings are measured while they
 * are copied) states DEVRT_RPC_OPEN_LENGTH: its message is every byte of every packet up to
 * the request's last one (the packet without DEVRT_RPC_MORE), and must describe its own end.
 *
 * The ready ring: so that the server finds a request without looking at every port, the
 * client announces each flip in a ring of host-visible 8-byte entries, after the flip: it
 * takes a position from a counter in device memory (an atomic of device scope, no PCIe
 * atomic) and stores there, in one store, the port, the outbox value it flipped to and the
 * lap of the ring the position is in (devrt_rpc_ring_entry). The server reads the entry at
 * its own position until the lap says it is written, and serves the port it names; the
 * entry may be seen before the flip it announces (they are two stores to different places),
 * and the server then looks at that port again until the flip is there. The entry only
 * speeds the finding up: the outbox flip remains the hand-over, the server still looks at
 * every port now and then (a client that does not announce, such as a test's fuzzer, is
 * served that way), and a channel without a ring (ring NULL) is served by such looks alone.
 */
#ifndef DEVRT_RPC_H
#define DEVRT_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

#define DEVRT_RPC_PACKET_BYTES 64u
#define DEVRT_RPC_MAX_LANES 64u
/* The longest message a lane may send; the server refuses longer ones. */
#define DEVRT_RPC_MAX_MESSAGE (1u << 20)
/* A first packet's length for a message that ends with the request's last packet. */
#define DEVRT_RPC_OPEN_LENGTH 0xffffffffu

enum devrt_rpc_opcode {
    DEVRT_RPC_ECHO = 1,     /* reply: the message's length and a checksum; tests and benches */
    DEVRT_RPC_HOSTCALL = 2, /* a service an embedding runtime registered by number */
    DEVRT_RPC_HEAP_GROW = 3,
    DEVRT_RPC_OUTPUT = 4, /* raw bytes for the module's output */
    DEVRT_RPC_PRINTF = 5, /* a format string and its typed arguments */
    DEVRT_RPC_OPCODE_END
};

enum devrt_rpc_flags {
    DEVRT_RPC_MORE = 1u << 0,       /* another packet of this message follows */
    DEVRT_RPC_WANT_REPLY = 1u << 1, /* the client waits for a reply packet in its packet */
    DEVRT_RPC_WANT_WORD = 1u << 2   /* the client polls its reply slot for one word; only
                                       one of the two replies may be asked for */
};

enum devrt_rpc_status {
    DEVRT_RPC_OK = 0,
    DEVRT_RPC_REFUSED = 1 /* the server found the request malformed or could not serve it */
};

/*
 * A port's state word, kept by the device alone. A wave takes the port by setting LOCKED
 * (fetch-or: the old word tells it whether it won, and the rest), and gives it up by
 * storing the word without LOCKED. The bits above the two flags hold the outbox word's
 * value, which only the device writes, so a mailbox count has as many bits.
 */
enum devrt_rpc_port_state {
    DEVRT_RPC_PORT_LOCKED = 1u << 0,  /* a wave holds the port */
    DEVRT_RPC_PORT_SETTLED = 1u << 1, /* the last holder saw the server hand the port back */
    DEVRT_RPC_PORT_OUTBOX_SHIFT = 2
};
/* The mailbox words count from 1 to 2^30 - 1, then from 1 again. */
#define DEVRT_RPC_COUNT_MASK ((1u << 30) - 1)
/*
 * A tag is a request's count and its status: what the server stores into the inbox and
 * into each half of a reply slot. This bit is set when it refused the request.
 */
#define DEVRT_RPC_TAG_REFUSED (1u << 31)

struct devrt_rpc_header {
    uint32_t opcode;
    uint32_t flags;     /* devrt_rpc_flags */
    uint64_t lane_mask; /* lanes taking part; bit i is lane i's packet */
    /*
     * The sending launch's exception record (its state's `exception`, fixed while a kernel
     * runs): which launch of the module the request comes from, so that the host can drop
     * the output of a kernel that runs on past its timeout and no other launch's.
     */
    uint64_t record;
    uint64_t unused[5]; /* the header has its line, so every packet starts one */
};

struct devrt_rpc_packet {
    uint64_t word[DEVRT_RPC_PACKET_BYTES / 8];
};

/* The start of a lane's first packet. */
struct devrt_rpc_first_packet {
    uint32_t length; /* bytes in the whole message */
    uint32_t arg;    /* opcode-specific, such as a hostcall's service number */
};
#define DEVRT_RPC_FIRST_PAYLOAD (DEVRT_RPC_PACKET_BYTES - sizeof(struct devrt_rpc_first_packet))

/*
 * A lane's one-word reply (DEVRT_RPC_WANT_WORD): each half is the request's tag in its
 * high 32 bits and 32 bits of the word in its low ones, the word's low half first. Four
 * lanes share a line.
 */
struct devrt_rpc_reply {
    uint64_t half[2];
};

struct devrt_rpc_buffer {
    struct devrt_rpc_header header;
    struct devrt_rpc_packet packet[DEVRT_RPC_MAX_LANES];
    struct devrt_rpc_reply reply[DEVRT_RPC_MAX_LANES];
};

/*
 * How the device wakes a sleeping server. The host chooses the kind when it attaches the
 * channel; the architecture layer rings it.
 */
struct devrt_rpc_doorbell {
    uint32_t count;    /* emulation: bumped per request, a futex word */
    uint32_t sleeping; /* set by the server while it sleeps; the device rings only then */
    uint64_t signal;   /* amdgcn: an HSA signal (amd_signal_t *), or 0 */
};

struct devrt_rpc_channel {
    uint32_t port_count; /* a power of two */
    uint32_t wave_size;  /* the widest wave of the module's kernels, which may be wider than
                            the device's own; bounds lane_mask (at most DEVRT_RPC_MAX_LANES) */
    uint32_t *state;     /* device memory, a devrt_rpc_port_state per port */
    uint32_t *outbox;    /* host-visible, port_count words */
    uint32_t *inbox;     /* host-visible, port_count words */
    struct devrt_rpc_buffer *buffers;    /* host-visible, port_count buffers */
    struct devrt_rpc_doorbell *doorbell; /* host-visible */
    uint64_t *ring;       /* host-visible, ring_size entries (zeroed); NULL: no ready ring */
    uint32_t *ring_next;  /* device memory: the position the next announcement takes */
    uint32_t ring_size;   /* a power of two */
    uint32_t ring_unused; /* the channel's size a multiple of 8 */
};

DEVRT_LAYOUT(struct devrt_rpc_header, opcode, 0);
DEVRT_LAYOUT(struct devrt_rpc_header, flags, 4);
DEVRT_LAYOUT(struct devrt_rpc_header, lane_mask, 8);
DEVRT_LAYOUT(struct devrt_rpc_header, record, 16);
DEVRT_LAYOUT(struct devrt_rpc_header, unused, 24);
DEVRT_LAYOUT_SIZE(struct devrt_rpc_header, 64);
DEVRT_LAYOUT(struct devrt_rpc_packet, word, 0);
DEVRT_LAYOUT_SIZE(struct devrt_rpc_packet, 64);
DEVRT_LAYOUT(struct devrt_rpc_first_packet, length, 0);
DEVRT_LAYOUT(struct devrt_rpc_first_packet, arg, 4);
DEVRT_LAYOUT_SIZE(struct devrt_rpc_first_packet, 8);
DEVRT_LAYOUT(struct devrt_rpc_reply, half, 0);
DEVRT_LAYOUT_SIZE(struct devrt_rpc_reply, 16);
DEVRT_LAYOUT(struct devrt_rpc_buffer, header, 0);
DEVRT_LAYOUT(struct devrt_rpc_buffer, packet, 64);
DEVRT_LAYOUT(struct devrt_rpc_buffer, reply, 64 + 64 * 64);
DEVRT_LAYOUT_SIZE(struct devrt_rpc_buffer, 64 + 64 * 64 + 16 * 64);
DEVRT_LAYOUT(struct devrt_rpc_doorbell, count, 0);
DEVRT_LAYOUT(struct devrt_rpc_doorbell, sleeping, 4);
DEVRT_LAYOUT(struct devrt_rpc_doorbell, signal, 8);
DEVRT_LAYOUT_SIZE(struct devrt_rpc_doorbell, 16);
DEVRT_LAYOUT(struct devrt_rpc_channel, port_count, 0);
DEVRT_LAYOUT(struct devrt_rpc_channel, wave_size, 4);
DEVRT_LAYOUT(struct devrt_rpc_channel, state, 8);
DEVRT_LAYOUT(struct devrt_rpc_channel, outbox, 16);
DEVRT_LAYOUT(struct devrt_rpc_channel, inbox, 24);
DEVRT_LAYOUT(struct devrt_rpc_channel, buffers, 32);
DEVRT_LAYOUT(struct devrt_rpc_channel, doorbell, 40);
DEVRT_LAYOUT(struct devrt_rpc_channel, ring, 48);
DEVRT_LAYOUT(struct devrt_rpc_channel, ring_next, 56);
DEVRT_LAYOUT(struct devrt_rpc_channel, ring_size, 64);
DEVRT_LAYOUT_SIZE(struct devrt_rpc_channel, 72);

/*
 * The protocol's steps, written once for both sides: the device's client
 * (device/rpc_client.h), the host's server (host/runtime/server.c) and the tests that play
 * either side call them. They are pure computations on values already read, so they
 * compile unchanged for amdgcn, nvptx, the emulation and host C; the loads and stores
 * around them are each side's own, because their atomics differ: the device's go through
 * its architecture layer (scoped, ordered by fences on nvptx), the host's are plain C11
 * atomics. What a step leaves to its caller is said with it.
 */

/* The two ends of a port. */
enum devrt_rpc_side {
    DEVRT_RPC_CLIENT, /* the device: writes the outbox */
    DEVRT_RPC_SERVER  /* the host: writes the inbox */
};

/*
 * Whether `side` owns the port, given the two mailbox words as it read them. The client
 * owns it while their counts agree, the server while they differ; each side reads its own
 * word from what it last wrote, the other's with an acquire (or a poll and an acquire
 * fence). The counts alone are compared: the inbox carries a status, and a rogue device
 * may write any outbox.
 */
static inline bool devrt_rpc_owns(enum devrt_rpc_side side, uint32_t inbox, uint32_t outbox)
{
    bool agree = (inbox & DEVRT_RPC_COUNT_MASK) == (outbox & DEVRT_RPC_COUNT_MASK);
    return side == DEVRT_RPC_CLIENT ? agree : !agree;
}

/*
 * The tag of request `count` (its outbox value) with its status: the inbox value that
 * hands the port back, and the high half of each half of a reply slot.
 */
static inline uint32_t devrt_rpc_tag(uint32_t count, uint32_t status)
{
    return (count & DEVRT_RPC_COUNT_MASK) | (status != DEVRT_RPC_OK ? DEVRT_RPC_TAG_REFUSED : 0u);
}

/* The status a tag carries. */
static inline uint32_t devrt_rpc_tag_status(uint32_t tag)
{
    return tag & DEVRT_RPC_TAG_REFUSED ? DEVRT_RPC_REFUSED : DEVRT_RPC_OK;
}

/*
 * The value `side`, owning the port, stores into its own mailbox word to hand the port to
 * the other side: the client counts one more request, the server tags the outbox's count
 * with `status`, its verdict on the request (devrt_rpc_tag; the client's flip carries
 * none: DEVRT_RPC_OK). The store must release what the side wrote to the buffer.
 */
static inline uint32_t devrt_rpc_flip(enum devrt_rpc_side side, uint32_t outbox, uint32_t status)
{
    if (side == DEVRT_RPC_SERVER)
        return devrt_rpc_tag(outbox, status);
    (void)status;
    uint32_t next = (outbox + 1u) & DEVRT_RPC_COUNT_MASK;
    return next ? next : 1u; /* 0 tags a cleared reply slot */
}

/*
 * The port state word a holder leaves when it gives the port up (LOCKED clear). An outbox
 * word wider than the count (only a rogue device writes one) keeps its count's bits.
 */
static inline uint32_t devrt_rpc_port_state_of(uint32_t outbox, bool settled)
{
    return (outbox & DEVRT_RPC_COUNT_MASK) << DEVRT_RPC_PORT_OUTBOX_SHIFT |
           (settled ? (uint32_t)DEVRT_RPC_PORT_SETTLED : 0u);
}

/*
 * How many of a channel's PORT_COUNT ports (a power of two) are home ports, the first ones;
 * the rest are the overflow pool. A power of two, so that a place picks its home by a mask.
 */
static inline uint32_t devrt_rpc_home_ports(uint32_t port_count)
{
    return port_count > 1 ? port_count / 2 : 1;
}

/* Whether a wave held the port when the state word was read (a try to lock it lost). */
static inline bool devrt_rpc_port_state_locked(uint32_t state)
{
    return (state & DEVRT_RPC_PORT_LOCKED) != 0;
}

/* The outbox value the last holder wrote, so the next one need not read host memory. */
static inline uint32_t devrt_rpc_port_state_outbox(uint32_t state)
{
    return state >> DEVRT_RPC_PORT_OUTBOX_SHIFT;
}

/* Whether the last holder saw the hand-back; if not, the next one waits for it. */
static inline bool devrt_rpc_port_state_settled(uint32_t state)
{
    return (state & DEVRT_RPC_PORT_SETTLED) != 0;
}

/* A reply slot's half as the server writes it: a tag and 32 bits of the word. */
static inline uint64_t devrt_rpc_reply_half(uint32_t tag, uint32_t bits)
{
    return (uint64_t)tag << 32 | bits;
}

/* Whether both halves of a slot, as the client read them, answer request `count`. */
static inline bool devrt_rpc_reply_arrived(uint64_t low, uint64_t high, uint32_t count)
{
    return ((uint32_t)(low >> 32) & DEVRT_RPC_COUNT_MASK) == count &&
           ((uint32_t)(high >> 32) & DEVRT_RPC_COUNT_MASK) == count;
}

/* The status an arrived reply carries (the low half's tag says it). */
static inline uint32_t devrt_rpc_reply_status(uint64_t low)
{
    return devrt_rpc_tag_status((uint32_t)(low >> 32));
}

/* The word of an arrived reply. */
static inline uint64_t devrt_rpc_reply_word(uint64_t low, uint64_t high)
{
    return (uint64_t)(uint32_t)high << 32 | (uint32_t)low;
}

/*
 * A ready ring entry: the lap in its top 14 bits, the port in the next 20, the outbox value
 * in the low 30 (DEVRT_RPC_COUNT_MASK). Laps count from 1 (a zeroed ring holds lap 0, the
 * lap before the first) and wrap at 2^14; positions count in 32 bits and wrap, and a ring of
 * at most 2^18 entries (DEVRT_RPC_RING_MAX) wraps its laps with them, so that each lap is
 * the one after the one before across the wrap.
 */
#define DEVRT_RPC_RING_LAP_BITS 14u
#define DEVRT_RPC_RING_PORT_BITS 20u
#define DEVRT_RPC_RING_MAX (1u << 18)

/* The lap of POSITION in a ring of SIZE entries (a power of two): what an entry there
   written carries; the lap of POSITION - SIZE is what it held before. */
static inline uint32_t devrt_rpc_ring_lap(uint32_t position, uint32_t size)
{
    return ((position >> __builtin_ctz(size)) + 1u) & ((1u << DEVRT_RPC_RING_LAP_BITS) - 1u);
}

/* The entry announcing that PORT's outbox is now OUTBOX, at POSITION of a ring of SIZE. */
static inline uint64_t devrt_rpc_ring_entry(uint32_t position, uint32_t size, uint32_t port,
                                            uint32_t outbox)
{
    return (uint64_t)devrt_rpc_ring_lap(position, size) << 50 |
           (uint64_t)(port & ((1u << DEVRT_RPC_RING_PORT_BITS) - 1u)) << 30 |
           (outbox & DEVRT_RPC_COUNT_MASK);
}

static inline uint32_t devrt_rpc_ring_entry_lap(uint64_t entry)
{
    return (uint32_t)(entry >> 50);
}

static inline uint32_t devrt_rpc_ring_entry_port(uint64_t entry)
{
    return (uint32_t)(entry >> 30) & ((1u << DEVRT_RPC_RING_PORT_BITS) - 1u);
}

static inline uint32_t devrt_rpc_ring_entry_outbox(uint64_t entry)
{
    return (uint32_t)entry & DEVRT_RPC_COUNT_MASK;
}

/*
 * The echo's checksum of a message, the server's reply and the tests' check: FNV-1a over its
 * 64-bit little-endian words, the last one padded with zeros, from a basis mixed with the
 * size. A word a step, so that the echo measures the runtime rather than its handler (a
 * byte a step cost the server 40 to 58 ns a lane of a 1 KiB message).
 */
static inline uint64_t devrt_rpc_checksum(const void *data, size_t size)
{
    const uint8_t *bytes = (const uint8_t *)data;
    uint64_t hash = 0xcbf29ce484222325ull ^ size;
    size_t whole = size & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t word;
        __builtin_memcpy(&word, bytes + i, sizeof word);
        hash = (hash ^ word) * 0x100000001b3ull;
    }
    if (whole < size) {
        uint64_t tail = 0;
        for (size_t i = whole; i < size; ++i)
            tail |= (uint64_t)bytes[i] << (8 * (i - whole));
        hash = (hash ^ tail) * 0x100000001b3ull;
    }
    return hash;
}

#endif
