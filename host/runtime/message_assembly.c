/*
 * Message assembly: the server's per-lane buffers, which the packets of a port's streamed
 * message fill until its last one (the open message takes packets until then too), and
 * the spares those buffers come back to. A packet that breaks the protocol is refused
 * here, before any handler sees the message (server.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message_assembly.h"
#include "runtime.h"

/*
 * A lane's buffer lives as long as its message. Buffers of the usual size, enough for a
 * message of four packets, go back to the server's spares when their message ends and
 * serve the next message of any port: the common request, a line from every lane of a
 * wave, then allocates nothing. The spares are as many as the lanes that were in flight
 * at once, up to 4 MiB of them, kept until the device closes.
 */
#define SPARE_BYTES (4 * DEVRT_RPC_PACKET_BYTES)
#define MAX_SPARES 16384u

struct devrt_spare {
    struct devrt_spare *next;
};

static void give_back_buffer(struct devrt_server *server, struct devrt_lane_message *m)
{
    devrt_backpressure_account(server, m->capacity, 0);
    if (m->capacity == SPARE_BYTES && server->spare_count < MAX_SPARES) {
        struct devrt_spare *spare = (struct devrt_spare *)m->data;
        spare->next = server->spares;
        server->spares = spare;
        server->spare_count++;
    } else {
        free(m->data);
    }
    m->data = NULL;
    m->capacity = 0;
}

void devrt_message_free_spares(struct devrt_server *server)
{
    while (server->spares) {
        struct devrt_spare *spare = server->spares;
        server->spares = spare->next;
        free(spare);
    }
    server->spare_count = 0;
}

/* The port is free for a new message; its lanes' buffers go back. */
void devrt_message_forget(struct devrt_server *server, struct devrt_port_state *port)
{
    for (uint64_t lanes = port->lane_mask; lanes; lanes &= lanes - 1) {
        struct devrt_lane_message *m = &port->lane[__builtin_ctzll(lanes)];
        if (m->data)
            give_back_buffer(server, m);
    }
    port->streaming = false;
    port->lane_mask = 0;
    devrt_backpressure_message_ended(server, port);
}

/*
 * Room for SIZE bytes at the lane's data, with the bytes it has received kept. An empty
 * message gets a buffer too: a handler may pass its data on.
 */
static bool reserve(struct devrt_server *server, struct devrt_lane_message *m, uint32_t size)
{
    if (m->data && size <= m->capacity)
        return true;
    if (!m->data && size <= SPARE_BYTES && server->spares) {
        struct devrt_spare *spare = server->spares;
        server->spares = spare->next;
        server->spare_count--;
        m->data = (uint8_t *)spare;
        m->capacity = SPARE_BYTES;
        devrt_backpressure_account(server, 0, SPARE_BYTES);
        return true;
    }
    uint32_t capacity = m->capacity ? m->capacity : SPARE_BYTES;
    while (capacity < size) /* size is at most DEVRT_RPC_MAX_MESSAGE: no overflow */
        capacity *= 2;
    uint8_t *grown = realloc(m->data, capacity);
    if (!grown)
        return false;
    devrt_backpressure_account(server, m->capacity, capacity);
    m->data = grown;
    m->capacity = capacity;
    return true;
}

/* Take one packet into the port's message; returns NULL or why the packet is malformed. */
const char *devrt_message_accept_packet(devrt_module *module, struct devrt_port_state *port,
                                        const struct devrt_rpc_header *header,
                                        const struct devrt_rpc_packet *packets, char *why,
                                        size_t why_size)
{
    struct devrt_server *server = &module->device->server;
    uint32_t wave_size = module->host_channel.wave_size;
    uint64_t valid_lanes = wave_size >= 64 ? ~0ull : (1ull << wave_size) - 1;
    if (!devrt_server_handles(header->opcode))
        return snprintf(why, why_size, "unknown opcode %u", header->opcode), why;
    if (header->flags & ~(uint32_t)(DEVRT_RPC_MORE | DEVRT_RPC_WANT_REPLY | DEVRT_RPC_WANT_WORD))
        return snprintf(why, why_size, "unknown flags 0x%x", header->flags), why;
    if ((header->flags & DEVRT_RPC_WANT_REPLY) && (header->flags & DEVRT_RPC_WANT_WORD))
        return snprintf(why, why_size, "a reply asked for as a packet and as a word"), why;
    if (header->lane_mask == 0 || (header->lane_mask & ~valid_lanes))
        return snprintf(why, why_size, "lane mask 0x%llx on a %u-lane wave",
                        (unsigned long long)header->lane_mask, wave_size),
               why;
    if (port->streaming && (header->opcode != port->opcode || header->lane_mask != port->lane_mask))
        return snprintf(why, why_size, "opcode or lanes changed in the middle of a message"), why;

    bool first = !port->streaming;
    /* Set before the lanes are read, so that devrt_message_forget sees them if one is refused. */
    port->streaming = true;
    port->opcode = header->opcode;
    port->lane_mask = header->lane_mask;
    bool outstanding = false, open = false;
    for (uint64_t lanes = header->lane_mask; lanes; lanes &= lanes - 1) {
        uint32_t lane = (uint32_t)__builtin_ctzll(lanes);
        struct devrt_lane_message *m = &port->lane[lane];
        const uint8_t *bytes = (const uint8_t *)&packets[lane];
        size_t payload = DEVRT_RPC_PACKET_BYTES;
        if (first) {
            struct devrt_rpc_first_packet head;
            memcpy(&head, bytes, sizeof head);
            m->open = head.length == DEVRT_RPC_OPEN_LENGTH;
            if (!m->open && head.length > DEVRT_RPC_MAX_MESSAGE)
                return snprintf(why, why_size, "lane %u: message of %u bytes, the limit is %u",
                                lane, head.length, DEVRT_RPC_MAX_MESSAGE),
                       why;
            m->length = m->open ? 0 : head.length;
            m->received = 0;
            m->arg = head.arg;
            uint32_t size = m->open ? (uint32_t)DEVRT_RPC_FIRST_PAYLOAD : head.length;
            if (!reserve(server, m, size))
                return snprintf(why, why_size, "no host memory for %u bytes", size), why;
            bytes += sizeof head;
            payload = DEVRT_RPC_FIRST_PAYLOAD;
        } else if (!m->open && m->received == m->length) {
            continue; /* this lane's message is complete; its packet is ignored */
        }
        if (m->open) {
            /* An open message takes every packet whole, up to the request's last. */
            open = true;
            if (m->received + payload > DEVRT_RPC_MAX_MESSAGE)
                return snprintf(why, why_size, "lane %u: open message over the limit of %u bytes",
                                lane, DEVRT_RPC_MAX_MESSAGE),
                       why;
            if (!reserve(server, m, m->received + (uint32_t)payload))
                return snprintf(why, why_size, "no host memory for %u bytes",
                                m->received + (uint32_t)payload),
                       why;
            /* Sizes the compiler knows: a few vector moves, not a call. */
            if (first)
                memcpy(m->data, bytes, DEVRT_RPC_FIRST_PAYLOAD);
            else
                memcpy(m->data + m->received, bytes, DEVRT_RPC_PACKET_BYTES);
            m->received += (uint32_t)payload;
            m->length = m->received;
            continue;
        }
        size_t take = m->length - m->received < payload ? m->length - m->received : payload;
        memcpy(m->data + m->received, bytes, take);
        m->received += (uint32_t)take;
        outstanding |= m->received < m->length;
    }
    bool more = header->flags & DEVRT_RPC_MORE;
    if (more && !outstanding && !open)
        return snprintf(why, why_size, "a packet past the end of every lane's message"), why;
    if (!more && outstanding)
        return snprintf(why, why_size, "message ends before its stated length"), why;
    return NULL;
}
