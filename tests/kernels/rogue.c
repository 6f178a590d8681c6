/*
 * A device that breaks the protocol on purpose: it writes a request by hand into a port
 * and flips the mailbox, as buggy or hostile device code could. The host must refuse it,
 * report it, hand the port back, and go on serving: the proper request that follows must
 * succeed.
 */
#include <devrt/devrt.h>
#include <devrt/rpc.h>

enum rogue_kind {
    ROGUE_NONE,      /* a well-formed request: the control */
    ROGUE_OPCODE,    /* an opcode nobody serves */
    ROGUE_LENGTH,    /* a message longer than the protocol allows */
    ROGUE_LANE_MASK, /* lanes the wave does not have */
    ROGUE_FLAGS,     /* flag bits that mean nothing */
    ROGUE_TRUNCATED, /* the last packet, before the stated length */
};

DEVRT_KERNEL3(rogue, uint32_t, kind, uint32_t *, status, uint32_t *, followed)
{
    struct devrt_rpc_channel *channel = devrt_kernel_state()->rpc;
    uint32_t port = 0;
    uint32_t state;
    while ((state =
                __atomic_fetch_or(&channel->state[port], DEVRT_RPC_PORT_LOCKED, __ATOMIC_ACQUIRE)) &
           DEVRT_RPC_PORT_LOCKED)
        ;
    uint32_t outbox = (state & DEVRT_RPC_PORT_OUTBOX) != 0;
    while (__atomic_load_n(&channel->inbox[port], __ATOMIC_ACQUIRE) != outbox)
        ;
    struct devrt_rpc_buffer *buffer = &channel->buffers[port];
    struct devrt_rpc_first_packet first = {8, 0};
    buffer->header.opcode = DEVRT_RPC_ECHO;
    buffer->header.flags = DEVRT_RPC_WANT_REPLY;
    buffer->header.lane_mask = 1;
    if (kind == ROGUE_OPCODE)
        buffer->header.opcode = 77;
    if (kind == ROGUE_LENGTH)
        first.length = DEVRT_RPC_MAX_MESSAGE + 1;
    if (kind == ROGUE_LANE_MASK)
        buffer->header.lane_mask = 1ull << 40;
    if (kind == ROGUE_FLAGS)
        buffer->header.flags |= 1u << 7;
    if (kind == ROGUE_TRUNCATED)
        first.length = 1000;
    __builtin_memcpy(&buffer->packet[0], &first, sizeof first);
    __atomic_store_n(&channel->outbox[port], outbox ^ 1u, __ATOMIC_RELEASE);
    __atomic_fetch_add(&channel->doorbell->count, 1u, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&channel->inbox[port], __ATOMIC_ACQUIRE) == outbox)
        ;
    *status = buffer->header.flags;
    /* Handed back, so the port is settled for the next holder. */
    __atomic_store_n(&channel->state[port],
                     (outbox ? 0 : DEVRT_RPC_PORT_OUTBOX) | DEVRT_RPC_PORT_SETTLED,
                     __ATOMIC_RELEASE);

    const char hello[] = "still served";
    *followed = devrt_rpc_echo(hello, sizeof hello) != 0;
}
