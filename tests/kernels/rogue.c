/*
 * A device that breaks the protocol on purpose: it takes a port and posts requests by hand,
 * through the protocol's own steps (include/devrt/rpc.h), with one step done wrong, as buggy
 * or hostile device code could. The host must refuse a malformed request, report it, hand
 * the port back, and go on serving: the proper request that follows must succeed.
 */
#include <devrt/devrt.h>
#include <devrt/rpc.h>

enum rogue_kind {
    ROGUE_NONE,           /* a well-formed request: the control */
    ROGUE_OPCODE,         /* an opcode nobody serves */
    ROGUE_LENGTH,         /* a message longer than the protocol allows */
    ROGUE_LANE_MASK,      /* lanes the wave does not have */
    ROGUE_FLAGS,          /* flag bits that mean nothing */
    ROGUE_TRUNCATED,      /* the last packet, before the stated length */
    ROGUE_SWITCH,         /* a message's second packet under another opcode */
    ROGUE_PAST_END,       /* another packet announced after the message is complete */
    ROGUE_WORD,           /* a well-formed request for a word in the reply slot: a control */
    ROGUE_WORD_REFUSED,   /* an opcode nobody serves, its refusal read from the reply slot */
    ROGUE_BOTH_REPLIES,   /* a reply asked for as a packet and as a word at once */
    ROGUE_WORD_STREAMED,  /* two packets, the first handed back by the inbox, the second by
                             its reply in the slot: a control across both forms */
    ROGUE_WORD_LANE_MASK, /* a word asked for by a lane the wave does not have: refused, and
                             that lane's slot must say so */
};

#define ROGUE_PORT 0u

/* Wait for the hand-back; the status it carries. */
static uint32_t wait_until_owned(struct devrt_rpc_channel *channel, uint32_t outbox)
{
    uint32_t inbox;
    while (!devrt_rpc_owns(DEVRT_RPC_CLIENT,
                           inbox = __atomic_load_n(&channel->inbox[ROGUE_PORT], __ATOMIC_ACQUIRE),
                           outbox))
        ;
    return devrt_rpc_tag_status(inbox);
}

/* Flip the outbox of a port we own and ring; returns the new value. */
static uint32_t hand_over(struct devrt_rpc_channel *channel, uint32_t outbox)
{
    outbox = devrt_rpc_flip(DEVRT_RPC_CLIENT, outbox, DEVRT_RPC_OK);
    __atomic_store_n(&channel->outbox[ROGUE_PORT], outbox, __ATOMIC_RELEASE);
    __atomic_fetch_add(&channel->doorbell->count, 1u, __ATOMIC_SEQ_CST);
    return outbox;
}

/*
 * The reply in LANE's slot to request `count`, read once the inbox has handed the port
 * back: the server writes the slots before the inbox, so it must be there. The status, or
 * ROGUE_NO_WORD if it is not, or ROGUE_WRONG_WORD if an accepted echo came back with
 * another checksum than `expected`. (The client polls the slot alone; reading it after the
 * inbox shows that no lane the request names is left polling.)
 */
#define ROGUE_NO_WORD 98u
#define ROGUE_WRONG_WORD 99u
static uint32_t wait_for_word(struct devrt_rpc_channel *channel, uint32_t lane, uint32_t count,
                              uint64_t expected)
{
    wait_until_owned(channel, count);
    struct devrt_rpc_reply *slot = &channel->buffers[ROGUE_PORT].reply[lane];
    uint64_t low = __atomic_load_n(&slot->half[0], __ATOMIC_ACQUIRE);
    uint64_t high = __atomic_load_n(&slot->half[1], __ATOMIC_ACQUIRE);
    if (!devrt_rpc_reply_arrived(low, high, count))
        return ROGUE_NO_WORD;
    uint32_t status = devrt_rpc_reply_status(low);
    if (status == DEVRT_RPC_OK && devrt_rpc_reply_word(low, high) != expected)
        return ROGUE_WRONG_WORD;
    return status;
}

DEVRT_KERNEL3(rogue, uint32_t, kind, uint32_t *, status, uint32_t *, followed)
{
    struct devrt_rpc_channel *channel = devrt_kernel_state()->rpc;
    uint32_t state;
    while (devrt_rpc_port_state_locked(state = __atomic_fetch_or(&channel->state[ROGUE_PORT],
                                                                 DEVRT_RPC_PORT_LOCKED,
                                                                 __ATOMIC_ACQUIRE)))
        ;
    uint32_t outbox = devrt_rpc_port_state_outbox(state);
    wait_until_owned(channel, outbox);

    struct devrt_rpc_buffer *buffer = &channel->buffers[ROGUE_PORT];
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
    if (kind == ROGUE_SWITCH) {
        first.length = 100; /* two packets */
        buffer->header.flags |= DEVRT_RPC_MORE;
    }
    if (kind == ROGUE_PAST_END)
        buffer->header.flags |= DEVRT_RPC_MORE; /* 8 bytes fit the first packet */
    bool word = kind >= ROGUE_WORD;
    uint32_t lane = kind == ROGUE_WORD_LANE_MASK ? 40 : 0;
    if (word) {
        buffer->header.flags = DEVRT_RPC_WANT_WORD;
        buffer->header.lane_mask = 1ull << lane;
        buffer->reply[lane] = (struct devrt_rpc_reply){{0, 0}};
    }
    if (kind == ROGUE_WORD_REFUSED)
        buffer->header.opcode = 77;
    if (kind == ROGUE_BOTH_REPLIES)
        buffer->header.flags |= DEVRT_RPC_WANT_REPLY;
    char message[100];
    for (uint32_t i = 0; i < sizeof message; ++i)
        message[i] = (char)(i * 7 + 1);
    if (kind == ROGUE_WORD_STREAMED) {
        first.length = sizeof message;
        buffer->header.flags |= DEVRT_RPC_MORE;
    }
    __builtin_memcpy(&buffer->packet[lane], &first, sizeof first);
    __builtin_memcpy((char *)&buffer->packet[lane] + sizeof first, message,
                     DEVRT_RPC_FIRST_PAYLOAD);

    bool streamed = buffer->header.flags & DEVRT_RPC_MORE;
    outbox = hand_over(channel, outbox);
    if (word && !streamed) {
        *status = wait_for_word(channel, lane, outbox, devrt_rpc_checksum(message, first.length));
    } else {
        *status = wait_until_owned(channel, outbox);
    }

    if (kind == ROGUE_WORD_STREAMED && *status == DEVRT_RPC_OK) {
        __builtin_memcpy(&buffer->packet[0], message + DEVRT_RPC_FIRST_PAYLOAD,
                         sizeof message - DEVRT_RPC_FIRST_PAYLOAD);
        buffer->header.flags = DEVRT_RPC_WANT_WORD;
        outbox = hand_over(channel, outbox);
        *status = wait_for_word(channel, lane, outbox, devrt_rpc_checksum(message, sizeof message));
    }

    if (kind == ROGUE_SWITCH && *status == DEVRT_RPC_OK) {
        buffer->header.opcode = DEVRT_RPC_HOSTCALL;
        buffer->header.flags = DEVRT_RPC_WANT_REPLY;
        outbox = hand_over(channel, outbox);
        *status = wait_until_owned(channel, outbox);
    }
    /* Handed back, so the port is settled for the next holder. */
    __atomic_store_n(&channel->state[ROGUE_PORT], devrt_rpc_port_state_of(outbox, true),
                     __ATOMIC_RELEASE);

    const char hello[] = "still served";
    *followed = devrt_rpc_echo(hello, sizeof hello) == devrt_rpc_checksum(hello, sizeof hello);
}
