/* Kernels of the RPC benchmark. */
#include <devrt/devrt.h>

#include "rpc_client.h"

/* This lane's first packet in BUFFER: a message of BYTES bytes from PAYLOAD. */
static void write_first_packet(struct devrt_rpc_buffer *buffer, const uint64_t *payload,
                               uint32_t bytes)
{
    struct devrt_rpc_first_packet *first =
        (struct devrt_rpc_first_packet *)&buffer->packet[devrt_arch_lane_id()];
    first->length = bytes;
    first->arg = 0;
    __builtin_memcpy(first + 1, payload, bytes);
}

/* Time `rounds` one-packet round trips per lane, in clock ticks. */
DEVRT_KERNEL2(round_trips, uint64_t *, samples, uint32_t, rounds)
{
    uint64_t lane = devrt_global_id(DEVRT_X);
    uint64_t payload[4] = {lane, 1, 2, 3};
    for (uint32_t i = 0; i < rounds; ++i) {
        uint64_t start = devrt_clock();
        devrt_rpc_echo(payload, sizeof payload);
        samples[lane * rounds + i] = devrt_clock() - start;
    }
}

/*
 * The same from one lane that takes its port as a wave at hardware place `slot` would
 * (devrt_rpc_acquire_from): its home port, slot modulo the home ports, is free.
 */
DEVRT_KERNEL3(round_trips_at, uint64_t *, samples, uint32_t, rounds, uint32_t, slot)
{
    uint64_t payload[4] = {slot, 1, 2, 3};
    for (uint32_t i = 0; i < rounds; ++i) {
        uint64_t start = devrt_clock();
        struct devrt_rpc_port port = devrt_rpc_acquire_from(slot);
        devrt_rpc_clear_reply(port.buffer);
        write_first_packet(port.buffer, payload, sizeof payload);
        uint32_t outbox = devrt_rpc_post_in(port.channel, port.buffer, port.index, port.outbox,
                                            port.lanes, DEVRT_RPC_ECHO, DEVRT_RPC_WANT_WORD);
        uint64_t word;
        devrt_rpc_wait_word(port.buffer, outbox, &word);
        devrt_rpc_release_in(port.channel, port.index, port.lanes, outbox, true);
        samples[i] = devrt_clock() - start;
    }
}

/* Run for `ticks` without a request. */
DEVRT_KERNEL1(idle, uint64_t, ticks)
{
    uint64_t start = devrt_clock();
    while (devrt_clock() - start < ticks)
        ;
}

/*
 * Time `rounds` reads of a word of host memory, one at a time: the floor under every
 * exchange with the host, since each poll of a mailbox is one such read.
 */
DEVRT_KERNEL3(host_reads, const uint32_t *, word, uint64_t *, samples, uint32_t, rounds)
{
    for (uint32_t i = 0; i < rounds; ++i) {
        uint64_t start = devrt_clock();
        /* The branch needs the value, so the clock below is read after it arrived. */
        if (__atomic_load_n(word, __ATOMIC_RELAXED) == 0xdead)
            return;
        samples[i] = devrt_clock() - start;
    }
}

/*
 * The ladder: one lane's round trips with a host thread that does nothing but answer (no
 * server), `rounds` times, each rung adding a piece of the protocol to the rung below, with
 * the RPC client's own steps where they run without a server:
 *   0  the floor: the count stored to host memory (words[0]) as a release, a fence, and
 *      relaxed polls of the answer (words[1]), the cheapest poll, with no acquire;
 *   1  + taking and giving up a port: its state word's fetch-or and store, in device
 *      memory (the module's last port, restored as found; no request uses it meanwhile);
 *   2  + the request's stores: the lane's first packet and the header, in `buffer`;
 *   3  + the doorbell (`doorbell`, whose flag says the server does not sleep), in place of
 *      the floor's fence: on NVIDIA a store and its fence, on AMD and the emulation the
 *      read of that flag;
 *   4  + the reply as the protocol gives it: the lane's slot in `buffer` cleared first, the
 *      tagged word polled there and acquired (devrt_rpc_wait_word: the second half's load
 *      an acquire on nvptx and the emulation, one fence after the last poll on amdgcn), in
 *      place of words[1].
 * The rung above them is the real round trip, through the server. It has one piece the
 * ladder lacks: the ready ring's announcement (a device-scope add and one store), which
 * here would take a position in the module's ring that no entry fills.
 */
DEVRT_KERNEL6(ladder, uint32_t *, words, struct devrt_rpc_buffer *, buffer,
              struct devrt_rpc_doorbell *, doorbell, uint64_t *, samples, uint32_t, rounds,
              uint32_t, rung)
{
    struct devrt_rpc_channel *channel = DEVRT_ARCH_READ_ONLY(__devrt_state)->rpc;
    uint32_t last = DEVRT_ARCH_READ_ONLY(channel)->port_count - 1;
    uint64_t lanes = devrt_arch_active_mask();
    uint64_t payload[4] = {devrt_global_id(DEVRT_X), 1, 2, 3};
    for (uint32_t i = 1; i <= rounds; ++i) {
        uint64_t start = devrt_clock();
        uint32_t state = 0;
        if (rung >= 1)
            state = devrt_rpc_try_lock_in(channel, last, lanes);
        if (rung >= 2) {
            write_first_packet(buffer, payload, sizeof payload);
            buffer->header.opcode = DEVRT_RPC_ECHO;
            buffer->header.flags = DEVRT_RPC_WANT_WORD;
            buffer->header.lane_mask = lanes;
        }
        if (rung >= 4)
            devrt_rpc_clear_reply(buffer);
        devrt_atomic_store(&words[0], i, __ATOMIC_RELEASE, DEVRT_SCOPE_SYSTEM);
        /* The client's post has no fence of its own: on NVIDIA the doorbell's pushes the
           stores out, as the floor's does. */
        if (rung >= 3)
            devrt_arch_ring_doorbell(doorbell);
        else
            devrt_atomic_fence(__ATOMIC_SEQ_CST, DEVRT_SCOPE_SYSTEM);
        if (rung >= 4) {
            uint64_t word;
            devrt_rpc_wait_word(buffer, i, &word);
        } else {
            while (devrt_atomic_load(&words[1], __ATOMIC_RELAXED, DEVRT_SCOPE_SYSTEM) != i)
                devrt_arch_sleep();
        }
        if (rung >= 1)
            devrt_rpc_release_in(channel, last, lanes, devrt_rpc_port_state_outbox(state),
                                 devrt_rpc_port_state_settled(state));
        samples[i - 1] = devrt_clock() - start;
    }
}

/*
 * Where one wave's round trip spends its time: the protocol's steps one by one, as
 * devrt_rpc_echo takes them (from rpc_client.h's inline steps, since the library keeps its
 * functions to itself), with lane 0's clock read after each. steps[round * 4 + k]: taking
 * a port, sending the request, waiting for the reply (which is the hand-back, one poll:
 * rpc.h), and giving the port up.
 */
DEVRT_KERNEL2(round_trip_steps, uint64_t *, steps, uint32_t, rounds)
{
    uint64_t payload[4] = {devrt_global_id(DEVRT_X), 1, 2, 3};
    for (uint32_t i = 0; i < rounds; ++i) {
        uint64_t t[5];
        t[0] = devrt_clock();
        struct devrt_rpc_port port = devrt_rpc_acquire();
        t[1] = devrt_clock();
        devrt_rpc_clear_reply(port.buffer);
        write_first_packet(port.buffer, payload, sizeof payload);
        port.outbox = devrt_rpc_post_in(port.channel, port.buffer, port.index, port.outbox,
                                        port.lanes, DEVRT_RPC_ECHO, DEVRT_RPC_WANT_WORD);
        t[2] = devrt_clock();
        uint64_t reply;
        uint32_t status = devrt_rpc_wait_word(port.buffer, port.outbox, &reply);
        /* The branch needs both values, so the clock below is read after they arrived. */
        if (reply == 0 && status == 0xdead)
            return;
        t[3] = devrt_clock();
        devrt_rpc_release_in(port.channel, port.index, port.lanes, port.outbox, true);
        t[4] = devrt_clock();
        if (devrt_lane_id() == 0)
            for (uint32_t k = 0; k < 4; ++k)
                steps[i * 4 + k] = t[k + 1] - t[k];
    }
}
