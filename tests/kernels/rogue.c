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

DEVRT_KERNEL void rogue(uint32_t kind, uint32_t *status, uint32_t *followed)
{
    struct devrt_rpc_channel *channel = devrt_kernel_state()->rpc;
    uint32_t port = 0;
    while (__atomic_fetch_or(&channel->locks[0], 1u, __ATOMIC_ACQUIRE) & 1u)
        ;
    uint32_t outbox = __atomic_load_n(&channel->outbox[port], __ATOMIC_RELAXED);
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
    __atomic_fetch_and(&channel->locks[0], ~1u, __ATOMIC_RELEASE);

    const char hello[] = "still served";
    *followed = devrt_rpc_echo(hello, sizeof hello) != 0;
}
