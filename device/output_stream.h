/*
 * Streaming an output message (include/devrt/output.h) straight into the lanes' packets of
 * an RPC port. Nothing is staged in private memory: a word is stored into this lane's
 * packet in the port buffer as soon as it is known, and the wave sends the packet when it
 * fills. The word index within the packet (slot) is the same in every lane, because every
 * lane writes the same number of words per record (shorter ones pad with zeros), so the
 * packets of a wave fill together and the send is one collective step.
 *
 * Everything here is always inlined on GPUs: a call would cost the kernel the calling
 * convention's registers and a stack.
 */
#ifndef DEVRT_OUTPUT_STREAM_H
#define DEVRT_OUTPUT_STREAM_H

#include "rpc_client.h"

#define DEVRT_OUTPUT_SLOTS (DEVRT_RPC_PACKET_BYTES / 8u)

/*
 * The port's fields are the same in every lane, but the compiler cannot tell a value loaded
 * from memory is: saying so keeps them in scalar registers, and the slot counter with them.
 */
static inline DEVRT_ARCH_INLINE void *devrt_output_uniform_pointer(uint64_t lanes, void *pointer)
{
    uint64_t bits = (uint64_t)(uintptr_t)pointer;
    bits = (uint64_t)devrt_arch_read_first_sync(lanes, (uint32_t)bits) |
           (uint64_t)devrt_arch_read_first_sync(lanes, (uint32_t)(bits >> 32)) << 32;
    return (void *)(uintptr_t)bits;
}

static inline DEVRT_ARCH_INLINE void devrt_output_open(struct devrt_printf_state *s,
                                                       uint32_t opcode, uint32_t context)
{
    struct devrt_rpc_port port = devrt_rpc_acquire();
    s->lanes = port.lanes;
    s->channel = devrt_output_uniform_pointer(s->lanes, port.channel);
    s->buffer = devrt_output_uniform_pointer(s->lanes, port.buffer);
    s->port = devrt_arch_read_first_sync(s->lanes, port.index);
    s->outbox = devrt_arch_read_first_sync(s->lanes, port.outbox);
    s->opcode = opcode;
    s->status = DEVRT_RPC_OK;
    struct devrt_rpc_first_packet first = {DEVRT_RPC_OPEN_LENGTH, context};
    uint64_t word;
    __builtin_memcpy(&word, &first, sizeof word);
    s->buffer->packet[devrt_arch_lane_id()].word[0] = word;
    s->slot = 1;
}

/* Append one word; send the packet when it is full and wait for the port to come back. */
static inline DEVRT_ARCH_INLINE void devrt_output_put(struct devrt_printf_state *s, uint64_t word)
{
    if (s->status != DEVRT_RPC_OK)
        return;
    s->buffer->packet[devrt_arch_lane_id()].word[s->slot] = word;
    if (++s->slot < DEVRT_OUTPUT_SLOTS)
        return;
    s->outbox = devrt_rpc_post_in(s->channel, s->buffer, s->port, s->outbox, s->lanes, s->opcode,
                                  DEVRT_RPC_MORE);
    /*
     * A refusal means the server dropped the message: the rest of it must not be sent. The
     * hand-back carries the status, the same in every lane; read from the first, it stays
     * one scalar.
     */
    s->status =
        devrt_arch_read_first_sync(s->lanes, devrt_rpc_wait(s->channel, s->port, s->outbox));
    s->slot = 0;
}

/*
 * LENGTH bytes at DATA as data words. The loop runs as long as any lane has bytes left,
 * so its trip count, and with it the slot, stays the same in every lane.
 */
static inline DEVRT_ARCH_INLINE void devrt_output_put_bytes(struct devrt_printf_state *s,
                                                            const char *data, uint32_t length)
{
    for (uint32_t offset = 0; devrt_arch_ballot_sync(s->lanes, offset < length) != 0; offset += 8) {
        uint64_t word = 0;
        if (offset < length) {
            uint32_t n = length - offset < 8 ? length - offset : 8;
            /* One byte at a time: eight loads in flight would cost eight VGPRs. */
#ifdef __clang__
#pragma clang loop unroll(disable)
#endif
            for (uint32_t i = 0; i < n; ++i)
                word |= (uint64_t)(uint8_t)data[offset + i] << (8 * i);
        }
        devrt_output_put(s, word);
    }
}

/* A record: TAG (0 pads: the lane has no record here), VALUE, and LENGTH bytes of DATA. */
static inline DEVRT_ARCH_INLINE void devrt_output_put_record(struct devrt_printf_state *s,
                                                             uint32_t tag, uint32_t flags,
                                                             uint64_t value, const char *data,
                                                             uint32_t length)
{
    devrt_output_put(s, tag ? DEVRT_OUTPUT_TAG_WORD(tag, flags, length) : 0);
    devrt_output_put(s, tag ? value : 0);
    devrt_output_put_bytes(s, data, tag ? length : 0);
}

/* The bytes of a NUL-terminated string that the device copies, at most the limit. */
static inline DEVRT_ARCH_INLINE uint32_t devrt_output_measure(const char *string, uint32_t *flags)
{
    uint32_t length = 0;
    if (!string) {
        *flags = DEVRT_OUTPUT_NULL;
        return 0;
    }
    while (length < DEVRT_PRINTF_MAX_STRING && string[length] != '\0')
        ++length;
    *flags = length == DEVRT_PRINTF_MAX_STRING ? DEVRT_OUTPUT_TRUNCATED : 0;
    return length;
}

static inline DEVRT_ARCH_INLINE void devrt_output_put_string(struct devrt_printf_state *s,
                                                             uint32_t tag, const char *string)
{
    uint32_t flags;
    uint32_t length = devrt_output_measure(string, &flags);
    devrt_output_put_record(s, tag, flags, (uint64_t)(uintptr_t)string, string, length);
}

/*
 * End the message and give the port up. Unless WAIT (some lane's bytes are still to be
 * copied from where they lie), the last packet goes without waiting: no reply is wanted,
 * and the next owner of the port waits for the server instead.
 */
static inline DEVRT_ARCH_INLINE int devrt_output_close(struct devrt_printf_state *s, bool wait)
{
    bool sent = s->status == DEVRT_RPC_OK;
    if (sent) {
        s->buffer->packet[devrt_arch_lane_id()].word[s->slot] =
            DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_END, 0, 0);
        s->outbox = devrt_rpc_post_in(s->channel, s->buffer, s->port, s->outbox, s->lanes,
                                      s->opcode, wait ? DEVRT_RPC_WANT_REPLY : 0);
        if (wait)
            sent = devrt_arch_read_first_sync(
                       s->lanes, devrt_rpc_wait(s->channel, s->port, s->outbox)) == DEVRT_RPC_OK;
    }
    /* A refused message ended with a wait, which saw the port handed back. */
    devrt_rpc_release_in(s->channel, s->port, s->lanes, s->outbox,
                         s->status != DEVRT_RPC_OK || wait);
    return sent ? 0 : -1;
}

#endif
