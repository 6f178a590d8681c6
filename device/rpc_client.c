/* The device side of the RPC protocol: see include/devrt/rpc.h for the state machine. */
#include "rpc_client.h"

DEVRT_ARCH_INLINE struct devrt_rpc_port devrt_rpc_open(void)
{
    return devrt_rpc_acquire();
}

/* The status of the packet the server handed the port back after. */
static uint32_t wait_for_server(struct devrt_rpc_port *port)
{
    uint32_t status = devrt_rpc_wait(port->channel, port->index, port->outbox);
    port->settled = true;
    return status;
}

/* Every lane has written its own packet in place; hand the port over. */
static void send_packet(struct devrt_rpc_port *port, uint32_t opcode, uint32_t flags)
{
    port->outbox = devrt_rpc_post_in(port->channel, port->buffer, port->index, port->outbox,
                                     port->lanes, opcode, flags);
    port->settled = false;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/*
 * Bytes go straight into this lane's packet in the port buffer: a packet built in
 * registers first would cost a kernel 16 VGPRs.
 */
DEVRT_ARCH_INLINE bool devrt_rpc_send(struct devrt_rpc_port *port, uint32_t opcode, uint32_t flags,
                                      uint32_t arg, const void *data, uint32_t length)
{
    const char *bytes = data;
    struct devrt_rpc_first_packet *first =
        (struct devrt_rpc_first_packet *)&port->buffer->packet[devrt_arch_lane_id()];
    char *packet = (char *)first;
    if (flags & DEVRT_RPC_WANT_WORD)
        devrt_rpc_clear_reply(port->buffer);
    first->length = length;
    first->arg = arg;
    uint32_t sent = min_u32(length, DEVRT_RPC_FIRST_PAYLOAD);
    __builtin_memcpy(first + 1, bytes, sent);

    bool more = devrt_arch_ballot_sync(port->lanes, sent < length) != 0;
    send_packet(port, opcode, more ? flags | DEVRT_RPC_MORE : flags);
    while (more) {
        if (wait_for_server(port) != DEVRT_RPC_OK)
            return false;
        uint32_t chunk = min_u32(length - sent, DEVRT_RPC_PACKET_BYTES);
        __builtin_memcpy(packet, bytes + sent, chunk);
        sent += chunk;
        more = devrt_arch_ballot_sync(port->lanes, sent < length) != 0;
        send_packet(port, opcode, more ? flags | DEVRT_RPC_MORE : flags);
    }
    return true;
}

DEVRT_ARCH_INLINE uint32_t devrt_rpc_receive(struct devrt_rpc_port *port, uint64_t *result)
{
    uint32_t status = devrt_rpc_wait_word(port->buffer, port->outbox, result);
    port->settled = true;
    return status;
}

DEVRT_ARCH_INLINE void devrt_rpc_close(struct devrt_rpc_port *port)
{
    devrt_rpc_release_in(port->channel, port->index, port->lanes, port->outbox, port->settled);
}
