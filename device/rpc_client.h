/* The device side of the RPC protocol (include/devrt/rpc.h), for the runtime's own use. */
#ifndef DEVRT_RPC_CLIENT_H
#define DEVRT_RPC_CLIENT_H

#include "arch/arch.h"

/*
 * A port held by the calling wave. Every field is the same in all of its lanes.
 *
 * lanes: the lanes that opened the port, taken once. Every later step names them, so no
 * step assumes that the lanes run in lock-step: on a GPU with independent thread
 * scheduling (nvptx) the active mask at a later point may be a part of them, and a step
 * that asked again could let the leader hand the port over before the others wrote.
 */
struct devrt_rpc_port {
    struct devrt_rpc_channel *channel;
    struct devrt_rpc_buffer *buffer;
    uint32_t index;
    uint32_t outbox; /* the value of our mailbox word after our last flip */
    bool settled;    /* the server has handed the port back since our last flip */
    uint64_t lanes;
};

/* Take a free port for the calling wave and wait until the server has handed it back. */
DEVRT_ARCH_INLINE struct devrt_rpc_port devrt_rpc_open(void);

/*
 * Send each active lane's message (length bytes at data; arg is opcode-specific),
 * streaming it over as many packets as it needs. Returns false if the server refused a
 * packet before the last.
 */
DEVRT_ARCH_INLINE bool devrt_rpc_send(struct devrt_rpc_port *port, uint32_t opcode, uint32_t flags,
                                      uint32_t arg, const void *data, uint32_t length);

/*
 * Wait for the server's one-word reply to the last message, sent with DEVRT_RPC_WANT_WORD;
 * returns its status and stores this lane's word.
 */
DEVRT_ARCH_INLINE uint32_t devrt_rpc_receive(struct devrt_rpc_port *port, uint64_t *result);

/*
 * Give the port up. After a request without a reply the server may still be reading it,
 * and the next owner waits for the hand-back; after a word reply it is settled, since the
 * server writes nothing into the buffer after the reply slots.
 */
DEVRT_ARCH_INLINE void devrt_rpc_close(struct devrt_rpc_port *port);

/*
 * The protocol's steps, always inlined: a path that must cost a kernel no call (output,
 * whose budget is a few VGPRs and no scratch) composes them itself. The functions above
 * are built from them.
 */

/*
 * Each step after the port is taken names the lanes that take part (a mask the caller
 * took once, such as port.lanes): the active mask read later is exact only where lanes run
 * together, which independently scheduled NVPTX lanes do not.
 */

/* The first lane of `lanes` acts for the wave where one atomic or one store is enough. */
static inline DEVRT_ARCH_INLINE bool devrt_rpc_leader_in(uint64_t lanes)
{
    return devrt_arch_rank_in(lanes) == 0;
}

/*
 * Try to take port `index`: the port's state word from before our lock, the same in every
 * lane of `lanes`; DEVRT_RPC_PORT_LOCKED is set in it if another wave holds the port.
 */
static inline DEVRT_ARCH_INLINE uint32_t devrt_rpc_try_lock_in(struct devrt_rpc_channel *channel,
                                                               uint32_t index, uint64_t lanes)
{
    uint32_t old = DEVRT_RPC_PORT_LOCKED;
    if (devrt_rpc_leader_in(lanes))
        old = devrt_atomic_fetch_or(&DEVRT_ARCH_READ_ONLY(channel)->state[index],
                                    DEVRT_RPC_PORT_LOCKED, __ATOMIC_ACQUIRE, DEVRT_SCOPE_DEVICE);
    return devrt_arch_read_first_sync(lanes, old);
}

/*
 * The acquire of the server's release after a poll of ORDER saw it: a relaxed poll leaves it
 * to one fence after the poll that succeeded; an acquire poll did it (arch.h's
 * DEVRT_ARCH_POLL_ORDER and DEVRT_ARCH_REPLY_POLL_ORDER choose, by what each costs there).
 */
static inline DEVRT_ARCH_INLINE void devrt_rpc_poll_acquired(int order)
{
    if (order == __ATOMIC_RELAXED)
        devrt_atomic_fence(__ATOMIC_ACQUIRE, DEVRT_SCOPE_SYSTEM);
}

/*
 * Wait until the server has handed the port back; returns the status of the request
 * (devrt_rpc_status), which the hand-back carries.
 */
static inline DEVRT_ARCH_INLINE uint32_t devrt_rpc_wait(struct devrt_rpc_channel *channel,
                                                        uint32_t index, uint32_t outbox)
{
    uint32_t *inbox = &DEVRT_ARCH_READ_ONLY(channel)->inbox[index];
    uint32_t seen;
    /*
     * The poll that sees the hand-back acquires the server's release of the port
     * (devrt_rpc_poll_acquired): no second load (another read of host memory, a bus round
     * trip of a microsecond or more on a discrete GPU).
     */
#if defined(DEVRT_CONTROL_PLAIN_POLL)
    /*
     * A control build for the memory-model test (tests/codegen/memory_model.py), never
     * shipped: a plain load, kept in the loop only by a compiler barrier, may read a cached
     * inbox forever. The test must refuse it.
     */
    while (!devrt_rpc_owns(DEVRT_RPC_CLIENT, seen = *inbox, outbox)) {
        __asm__ volatile("" ::: "memory");
        devrt_arch_sleep();
    }
#else
    while (!devrt_rpc_owns(
        DEVRT_RPC_CLIENT,
        seen = devrt_atomic_load(inbox, DEVRT_ARCH_POLL_ORDER, DEVRT_SCOPE_SYSTEM), outbox))
        devrt_arch_sleep();
#endif
    devrt_rpc_poll_acquired(DEVRT_ARCH_POLL_ORDER);
    return devrt_rpc_tag_status(seen);
}

/*
 * Clear this lane's reply slot before a request that asks for a word (DEVRT_RPC_WANT_WORD):
 * tag 0 answers no request. The hand-over's release orders the clearing before the flip,
 * so the server's reply lands after it, and the lane's own polls see one or the other.
 */
static inline DEVRT_ARCH_INLINE void devrt_rpc_clear_reply(struct devrt_rpc_buffer *buffer)
{
    struct devrt_rpc_reply *slot = &buffer->reply[devrt_arch_lane_id()];
    slot->half[0] = 0;
    slot->half[1] = 0;
}

/*
 * Wait for this lane's one-word reply to request `count` (the outbox value its post left)
 * and return its status, the word in *word. The reply is its own hand-back: the server
 * writes the slots last, so the port is the client's once every lane has its reply.
 */
static inline DEVRT_ARCH_INLINE uint32_t devrt_rpc_wait_word(struct devrt_rpc_buffer *buffer,
                                                             uint32_t count, uint64_t *word)
{
    uint64_t *half = buffer->reply[devrt_arch_lane_id()].half;
    uint64_t low, high;
    /*
     * Both halves are loaded before either is looked at: the two loads of a poll cross the
     * bus together, one round trip. Each half carries the tag, so the loads need no order
     * between them, and only the second has the poll's order: an acquire load holds back
     * the loads after it, and a first one would make the poll two round trips. The
     * server's release of the second half, written after the first, is what it acquires.
     */
#if defined(DEVRT_CONTROL_PLAIN_POLL)
    /* The control build of tests/codegen/memory_model.py (see devrt_rpc_wait). */
    for (;;) {
        low = half[0];
        high = half[1];
        if (devrt_rpc_reply_arrived(low, high, count))
            break;
        __asm__ volatile("" ::: "memory");
        devrt_arch_sleep();
    }
#else
    for (;;) {
        low = devrt_atomic_load(&half[0], __ATOMIC_RELAXED, DEVRT_SCOPE_SYSTEM);
        high = devrt_atomic_load(&half[1], DEVRT_ARCH_REPLY_POLL_ORDER, DEVRT_SCOPE_SYSTEM);
        if (devrt_rpc_reply_arrived(low, high, count))
            break;
        devrt_arch_sleep();
    }
#endif
    /* As in devrt_rpc_wait: the port's next use comes after the server's last write. */
    devrt_rpc_poll_acquired(DEVRT_ARCH_REPLY_POLL_ORDER);
    *word = devrt_rpc_reply_word(low, high);
    return devrt_rpc_reply_status(low);
}

/*
 * Take a port for the calling wave as a wave at hardware place SLOT would (rpc.h, "Home
 * ports"): its home port, else the first free one from its place in the overflow pool on.
 * Tests name the place to make two waves share a home.
 */
static inline DEVRT_ARCH_INLINE struct devrt_rpc_port devrt_rpc_acquire_from(uint32_t slot)
{
    struct devrt_rpc_channel *channel = DEVRT_ARCH_READ_ONLY(__devrt_state)->rpc;
    uint64_t lanes = devrt_arch_active_mask();
    uint32_t count = DEVRT_ARCH_READ_ONLY(channel)->port_count;
    uint32_t homes = devrt_rpc_home_ports(count);
    uint32_t place = devrt_arch_read_first_sync(lanes, slot) & (homes - 1u);
    uint32_t index = place;
    uint32_t state = devrt_rpc_try_lock_in(channel, index, lanes);
    if (devrt_rpc_port_state_locked(state)) {
        /* Masks, no division: count and homes are powers of two (one port: its own pool). */
        index = (homes | place) & (count - 1u);
        while (devrt_rpc_port_state_locked(state = devrt_rpc_try_lock_in(channel, index, lanes))) {
            index = (index + 1u) & (count - 1u);
            devrt_arch_sleep();
        }
    }
    struct devrt_rpc_port port = {
        .channel = channel,
        .buffer = &DEVRT_ARCH_READ_ONLY(channel)->buffers[index],
        .index = index,
        .outbox = devrt_rpc_port_state_outbox(state),
        .settled = true,
        .lanes = lanes,
    };
    /* A holder that did not wait for its last packet to be taken leaves that to us. */
    if (!devrt_rpc_port_state_settled(state))
        devrt_rpc_wait(channel, index, port.outbox);
    return port;
}

static inline DEVRT_ARCH_INLINE struct devrt_rpc_port devrt_rpc_acquire(void)
{
    return devrt_rpc_acquire_from(devrt_arch_wave_slot());
}

/*
 * Hand the port to the server: the header (every lane's packet is already written), then
 * the outbox flip; returns the new outbox value. The leader flips only once every lane of
 * `lanes` has written its packet (the lane sync), and its system-scope release orders what
 * they wrote before the flip.
 */
static inline DEVRT_ARCH_INLINE uint32_t devrt_rpc_hand_over_in(struct devrt_rpc_channel *channel,
                                                                struct devrt_rpc_buffer *buffer,
                                                                uint32_t index, uint32_t outbox,
                                                                uint64_t lanes, uint32_t opcode,
                                                                uint32_t flags)
{
    bool leader = devrt_rpc_leader_in(lanes);
    if (leader) {
        buffer->header.opcode = opcode;
        buffer->header.flags = flags;
        buffer->header.lane_mask = lanes;
        buffer->header.record = (uint64_t)(uintptr_t)DEVRT_ARCH_READ_ONLY(__devrt_state)->exception;
    }
    /* Every lane's packet is written before the leader's release store publishes them. */
    devrt_arch_sync_lanes(lanes);
    /* We own the port (the counts agree): the flip needs no read of the inbox. */
    outbox = devrt_rpc_flip(DEVRT_RPC_CLIENT, outbox, DEVRT_RPC_OK);
    if (leader)
        devrt_atomic_store(&DEVRT_ARCH_READ_ONLY(channel)->outbox[index], outbox,
                           DEVRT_ARCH_FLIP_ORDER, DEVRT_SCOPE_SYSTEM);
    return outbox;
}

/*
 * Announce the flip of port `index` to `outbox` in the ready ring (include/devrt/rpc.h): the
 * wave's leader alone. Relaxed both: the entry carries everything the server needs to find the
 * flip, and a server that sees it before the flip looks again.
 */
static inline DEVRT_ARCH_INLINE void devrt_rpc_announce(struct devrt_rpc_channel *channel,
                                                        uint32_t index, uint32_t outbox)
{
    uint64_t *ring = DEVRT_ARCH_READ_ONLY(channel)->ring;
    if (!ring)
        return;
    uint32_t size = DEVRT_ARCH_READ_ONLY(channel)->ring_size;
    uint32_t position = devrt_arch_leader_value(devrt_atomic_fetch_add(
        DEVRT_ARCH_READ_ONLY(channel)->ring_next, 1u, __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE));
    devrt_atomic_store(&ring[position & (size - 1u)],
                       devrt_rpc_ring_entry(position, size, index, outbox), __ATOMIC_RELAXED,
                       DEVRT_SCOPE_SYSTEM);
}

/* Hand the port over (devrt_rpc_hand_over_in), announce it and wake the server. */
static inline DEVRT_ARCH_INLINE uint32_t devrt_rpc_post_in(struct devrt_rpc_channel *channel,
                                                           struct devrt_rpc_buffer *buffer,
                                                           uint32_t index, uint32_t outbox,
                                                           uint64_t lanes, uint32_t opcode,
                                                           uint32_t flags)
{
    outbox = devrt_rpc_hand_over_in(channel, buffer, index, outbox, lanes, opcode, flags);
    if (devrt_rpc_leader_in(lanes)) {
        devrt_rpc_announce(channel, index, outbox);
        devrt_arch_ring_doorbell(DEVRT_ARCH_READ_ONLY(channel)->doorbell);
    }
    return outbox;
}

/*
 * Every lane of `lanes` is done with the buffer (read its reply) before the port is freed.
 * The state word keeps the outbox value for the next holder, and whether the server has
 * handed the port back (settled: the caller waited after its last post).
 */
static inline DEVRT_ARCH_INLINE void devrt_rpc_release_in(struct devrt_rpc_channel *channel,
                                                          uint32_t index, uint64_t lanes,
                                                          uint32_t outbox, bool settled)
{
    devrt_arch_sync_lanes(lanes);
    if (devrt_rpc_leader_in(lanes)) {
        uint32_t state = devrt_rpc_port_state_of(outbox, settled);
        /* Other waves only try to set LOCKED, which is set: a store loses none of theirs. */
        devrt_atomic_store(&DEVRT_ARCH_READ_ONLY(channel)->state[index], state, __ATOMIC_RELEASE,
                           DEVRT_SCOPE_DEVICE);
    }
}

#endif
