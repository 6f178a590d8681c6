/* The device side of the RPC protocol (include/devrt/rpc.h), for the runtime's own use. */
#ifndef DEVRT_RPC_CLIENT_H
#define DEVRT_RPC_CLIENT_H

#include "arch/arch.h"

/* A port held by the calling wave. Every field is the same in all of its lanes. */
struct devrt_rpc_port {
    struct devrt_rpc_channel *channel;
    struct devrt_rpc_buffer *buffer;
    uint32_t index;
    uint32_t outbox; /* the value of our mailbox word after our last flip */
};

/* Take a free port for the calling wave and wait until the server has handed it back. */
struct devrt_rpc_port devrt_rpc_open(void);

/*
 * Send each active lane's message (length bytes at data; arg is opcode-specific),
 * streaming it over as many packets as it needs. Returns false if the server refused a
 * packet before the last.
 */
bool devrt_rpc_send(struct devrt_rpc_port *port, uint32_t opcode, uint32_t flags, uint32_t arg,
                    const void *data, uint32_t length);

/* Wait for the server's reply to the last message and copy this lane's packet. */
uint32_t devrt_rpc_receive(struct devrt_rpc_port *port, struct devrt_rpc_packet *reply);

/* Give the port up. The server may still be reading it; the next owner waits for that. */
void devrt_rpc_close(struct devrt_rpc_port *port);

#endif
