/* The device side of the RPC protocol: see include/devrt/rpc.h for the state machine. */
#include "rpc_client.h"

/* The first active lane acts for the wave where one atomic or one store is enough. */
static bool is_leader(void)
{
    return devrt_arch_rank_in(devrt_arch_active_mask()) == 0;
}

static bool try_lock(struct devrt_rpc_channel *channel, uint32_t index)
{
    uint32_t taken = 0;
    if (is_leader()) {
        uint32_t bit = 1u << (index % 32);
        uint32_t old = devrt_atomic_fetch_or(&channel->locks[index / 32], bit, __ATOMIC_ACQUIRE,
                                             DEVRT_SCOPE_DEVICE);
        taken = (old & bit) == 0;
    }
    return devrt_arch_read_first(taken) != 0;
}

static void wait_for_server(struct devrt_rpc_port *port)
{
    while (devrt_atomic_load(&port->channel->inbox[port->index], __ATOMIC_RELAXED,
                             DEVRT_SCOPE_SYSTEM) != port->outbox)
        devrt_arch_sleep();
    devrt_atomic_fence(__ATOMIC_ACQUIRE, DEVRT_SCOPE_SYSTEM);
}

struct devrt_rpc_port devrt_rpc_open(void)
{
    struct devrt_rpc_channel *channel = __devrt_state->rpc;
    /* Spread waves over the ports so that most find theirs free at the first try. */
    uint32_t index = devrt_arch_read_first(devrt_arch_workgroup_id(0) * 16 +
                                           devrt_arch_workitem_id(0) /
                                               devrt_arch_wavefront_size()) %
                     channel->port_count;
    while (!try_lock(channel, index)) {
        index = index + 1 == channel->port_count ? 0 : index + 1;
        devrt_arch_sleep();
    }
    struct devrt_rpc_port port = {
        .channel = channel,
        .buffer = &channel->buffers[index],
        .index = index,
        .outbox = devrt_atomic_load(&channel->outbox[index], __ATOMIC_RELAXED, DEVRT_SCOPE_SYSTEM),
    };
    wait_for_server(&port);
    return port;
}

static void flip(struct devrt_rpc_port *port)
{
    devrt_atomic_fence(__ATOMIC_RELEASE, DEVRT_SCOPE_SYSTEM);
    port->outbox ^= 1u;
    if (is_leader()) {
        devrt_atomic_store(&port->channel->outbox[port->index], port->outbox, __ATOMIC_RELAXED,
                           DEVRT_SCOPE_SYSTEM);
        devrt_arch_ring_doorbell(port->channel->doorbell);
    }
}

static void send_packet(struct devrt_rpc_port *port, uint32_t opcode, uint32_t flags,
                        const struct devrt_rpc_packet *packet)
{
    uint64_t mask = devrt_arch_active_mask();
    if (is_leader()) {
        port->buffer->header.opcode = opcode;
        port->buffer->header.flags = flags;
        port->buffer->header.lane_mask = mask;
    }
    port->buffer->packet[devrt_arch_lane_id()] = *packet;
    flip(port);
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

bool devrt_rpc_send(struct devrt_rpc_port *port, uint32_t opcode, uint32_t flags, uint32_t arg,
                    const void *data, uint32_t length)
{
    const char *bytes = data;
    struct devrt_rpc_packet packet = {0};
    struct devrt_rpc_first_packet first = {length, arg};
    __builtin_memcpy(&packet, &first, sizeof first);
    uint32_t sent = min_u32(length, DEVRT_RPC_FIRST_PAYLOAD);
    __builtin_memcpy((char *)&packet + sizeof first, bytes, sent);

    bool more = devrt_arch_ballot(sent < length) != 0;
    send_packet(port, opcode, more ? flags | DEVRT_RPC_MORE : flags, &packet);
    while (more) {
        wait_for_server(port);
        if (port->buffer->header.flags != DEVRT_RPC_OK)
            return false;
        uint32_t chunk = min_u32(length - sent, DEVRT_RPC_PACKET_BYTES);
        __builtin_memcpy(&packet, bytes + sent, chunk);
        sent += chunk;
        more = devrt_arch_ballot(sent < length) != 0;
        send_packet(port, opcode, more ? flags | DEVRT_RPC_MORE : flags, &packet);
    }
    return true;
}

uint32_t devrt_rpc_receive(struct devrt_rpc_port *port, struct devrt_rpc_packet *reply)
{
    wait_for_server(port);
    *reply = port->buffer->packet[devrt_arch_lane_id()];
    return port->buffer->header.flags;
}

void devrt_rpc_close(struct devrt_rpc_port *port)
{
    if (is_leader()) {
        uint32_t bit = 1u << (port->index % 32);
        devrt_atomic_fetch_and(&port->channel->locks[port->index / 32], ~bit, __ATOMIC_RELEASE,
                               DEVRT_SCOPE_DEVICE);
    }
}
