/*
 * Message assembly (message_assembly.c): what the server (server.c) calls to build each
 * lane's message from the packets of a port, and to give the lanes' buffers back.
 */
#ifndef DEVRT_MESSAGE_ASSEMBLY_H
#define DEVRT_MESSAGE_ASSEMBLY_H

#include <stddef.h>

#include "runtime.h"

/* Take one packet into the port's message; returns NULL or why the packet is malformed. */
const char *devrt_message_accept_packet(devrt_module *module, struct devrt_port_state *port,
                                        const struct devrt_rpc_header *header,
                                        const struct devrt_rpc_packet *packets, char *why,
                                        size_t why_size);
/* The port is free for a new message; its lanes' buffers go back. */
void devrt_message_forget(struct devrt_server *server, struct devrt_port_state *port);
/* The server stops: the spare buffers are freed. */
void devrt_message_free_spares(struct devrt_server *server);

/* server.c: whether a request of OPCODE has a handler. */
bool devrt_server_handles(uint32_t opcode);

#endif
