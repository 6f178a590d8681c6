/*
 * Kernels for the server's faults and floods (tests/emu/faults_test.c, docs/reliability.md):
 * a lane that echoes once, lanes that print far more than the host takes at once, and a
 * fuzzer that writes random bytes into ports while other lanes make honest requests.
 * The fuzzer works below the public API, through the device's RPC client.
 */
#include <devrt/devrt.h>
#include <devrt/rpc.h>

#include "rpc_client.h"

static uint64_t flat_id(void)
{
    return devrt_global_id(DEVRT_X) + devrt_grid_size(DEVRT_X) * devrt_global_id(DEVRT_Y);
}

/* splitmix64: a lane's own stream of random words. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* out[0]: 1 if the echo came back right. */
DEVRT_KERNEL1(echo_once, uint32_t *, out)
{
    static const uint8_t message[] = "a request whose doorbell is lost";
    *out = devrt_rpc_echo(message, sizeof message) == devrt_rpc_checksum(message, sizeof message);
}

static void put_hex(char *at, uint64_t value)
{
    for (int i = 7; i >= 0; --i, value >>= 4)
        at[i] = "0123456789abcdef"[value & 15];
}

/*
 * Each lane writes `rounds` lines of `bytes` bytes to the raw context: its id and the round
 * in hex, then letters that depend on both, then a newline, so that the host can check
 * each line whole and in its lane's order. slices: `bytes` bytes per lane.
 */
DEVRT_KERNEL4(flood, char *, slices, uint32_t, bytes, uint32_t, rounds, uint32_t *, refused)
{
    uint64_t id = flat_id();
    char *line = slices + id * bytes;
    for (uint32_t round = 0; round < rounds; ++round) {
        put_hex(line, id);
        line[8] = ' ';
        put_hex(line + 9, round);
        line[17] = ' ';
        for (uint32_t i = 18; i + 1 < bytes; ++i)
            line[i] = (char)('a' + (id + round * 7 + i) % 26);
        line[bytes - 1] = '\n';
        if (devrt_output_write(devrt_output_context(), line, bytes) != 0)
            __atomic_fetch_add(refused, 1u, __ATOMIC_RELAXED);
    }
}

/* One raw write of BYTES bytes at DATA, as it is: counted in *refused if the call fails. */
DEVRT_KERNEL3(write_at, const char *, data, uint32_t, bytes, uint32_t *, refused)
{
    if (devrt_output_write(devrt_output_context(), data, bytes) != 0)
        __atomic_fetch_add(refused, 1u, __ATOMIC_RELAXED);
}

/*
 * Random contents for a port's header and packets: a quarter entirely random, the rest
 * near a valid request (an opcode that exists or is one past, flags the protocol knows,
 * lanes of the wave, first packets with lengths around a packet or open), so that the
 * server accepts some packets and streams, and must still refuse what follows.
 */
static void scribble(struct devrt_rpc_buffer *buffer, uint64_t *random, uint32_t wave_size)
{
    uint64_t valid = wave_size >= 64 ? ~0ull : (1ull << wave_size) - 1;
    bool raw = next_random(random) % 4 == 0;
    buffer->header.opcode = (uint32_t)(raw ? next_random(random) : 1 + next_random(random) % 6);
    buffer->header.flags = (uint32_t)(raw ? next_random(random) : next_random(random) % 8);
    buffer->header.lane_mask = next_random(random) & (raw ? ~0ull : valid);
    for (uint32_t lane = 0; lane < DEVRT_RPC_MAX_LANES; ++lane) {
        struct devrt_rpc_packet *packet = &buffer->packet[lane];
        for (uint32_t w = 0; w < DEVRT_RPC_PACKET_BYTES / 8; ++w)
            packet->word[w] = next_random(random);
        if (!raw) {
            uint64_t pick = next_random(random) % 4;
            uint64_t length = pick == 0   ? DEVRT_RPC_OPEN_LENGTH
                              : pick == 1 ? next_random(random) % (DEVRT_RPC_MAX_MESSAGE + 2)
                                          : next_random(random) % 300;
            packet->word[0] = length | (next_random(random) % 8) << 32;
        }
    }
}

/* Hand the port over with outbox = value, and wait until the server hands it back. */
static void flip_and_wait(struct devrt_rpc_channel *channel, uint32_t index, uint32_t value)
{
    devrt_atomic_store(&channel->outbox[index], value, DEVRT_ARCH_FLIP_ORDER, DEVRT_SCOPE_SYSTEM);
    devrt_arch_ring_doorbell(channel->doorbell);
    devrt_rpc_wait(channel, index, value);
}

/*
 * One lane takes a port as the protocol says, then breaks it: for a few steps, random
 * header and packets, now and then a random inbox word (the host's), and a random outbox
 * value; the server must refuse what is malformed and hand the port back each time. The
 * round ends with a header the server always refuses (opcode 0), so that no message the
 * steps began is left for the port's next holder, and with the mailboxes back at 0 or 1.
 */
static void fuzz_round(struct devrt_rpc_channel *channel, uint64_t *random, bool inbox_too)
{
    uint64_t lanes = devrt_arch_active_mask();
    uint32_t last = channel->port_count - 1;
    uint32_t index = (uint32_t)next_random(random) & last;
    uint32_t state;
    while (devrt_rpc_port_state_locked(state = devrt_rpc_try_lock_in(channel, index, lanes))) {
        index = (index + 1) & last;
        devrt_arch_sleep();
    }
    uint32_t outbox = devrt_rpc_port_state_outbox(state);
    if (!devrt_rpc_port_state_settled(state))
        devrt_rpc_wait(channel, index, outbox);
    struct devrt_rpc_buffer *buffer = &channel->buffers[index];
    uint32_t steps = 1 + (uint32_t)(next_random(random) % 3);
    for (uint32_t step = 0; step < steps; ++step) {
        scribble(buffer, random, channel->wave_size);
        if (inbox_too && next_random(random) % 8 == 0)
            devrt_atomic_store(&channel->inbox[index], (uint32_t)next_random(random),
                               __ATOMIC_RELAXED, DEVRT_SCOPE_SYSTEM);
        uint32_t inbox =
            devrt_atomic_load(&channel->inbox[index], __ATOMIC_RELAXED, DEVRT_SCOPE_SYSTEM);
        uint32_t value = next_random(random) % 2 ? (uint32_t)next_random(random) : inbox ^ 1u;
        flip_and_wait(channel, index, value == inbox ? inbox ^ 1u : value);
    }
    buffer->header.opcode = 0;
    buffer->header.flags = 0;
    buffer->header.lane_mask = 1;
    uint32_t inbox =
        devrt_atomic_load(&channel->inbox[index], __ATOMIC_RELAXED, DEVRT_SCOPE_SYSTEM);
    uint32_t value = inbox == 0 ? 1u : 0u;
    flip_and_wait(channel, index, value);
    devrt_rpc_release_in(channel, index, lanes, value, true);
}

/*
 * Workgroups whose id is a multiple of fuzz_every send one fuzzing lane each (its first);
 * every lane of the others echoes `echo_rounds` messages and checks the checksums.
 * counts: [0] honest echoes that came back wrong, [1] honest lanes done, [2] fuzzing lanes
 * done. inbox_too: the fuzzer also writes the host's mailbox word, which races with the
 * server's reads by design (off under ThreadSanitizer).
 */
DEVRT_KERNEL6(fuzz_server, uint32_t, rounds, uint64_t, seed, uint32_t, fuzz_every, uint32_t,
              echo_rounds, uint32_t *, counts, uint32_t, inbox_too)
{
    uint64_t id = flat_id();
    uint64_t random = seed ^ (id * 0x9e3779b97f4a7c15ull);
    if (devrt_workgroup_id(DEVRT_X) % fuzz_every == 0) {
        if (devrt_workitem_id(DEVRT_X) != 0)
            return;
        struct devrt_rpc_channel *channel = devrt_kernel_state()->rpc;
        for (uint32_t round = 0; round < rounds; ++round)
            fuzz_round(channel, &random, inbox_too != 0);
        __atomic_fetch_add(&counts[2], 1u, __ATOMIC_RELAXED);
        return;
    }
    uint8_t message[200];
    for (uint32_t round = 0; round < echo_rounds; ++round) {
        uint32_t length = (uint32_t)(next_random(&random) % sizeof message);
        for (uint32_t i = 0; i < length; ++i)
            message[i] = (uint8_t)(id * 31 + round * 17 + i);
        if (devrt_rpc_echo(message, length) != devrt_rpc_checksum(message, length))
            __atomic_fetch_add(&counts[0], 1u, __ATOMIC_RELAXED);
    }
    __atomic_fetch_add(&counts[1], 1u, __ATOMIC_RELAXED);
}

/* Write this lane's one-packet echo of MESSAGE into BUFFER, its reply slot cleared. */
static void write_echo(struct devrt_rpc_buffer *buffer, const uint8_t *message, uint32_t length)
{
    struct devrt_rpc_first_packet *first =
        (struct devrt_rpc_first_packet *)&buffer->packet[devrt_arch_lane_id()];
    devrt_rpc_clear_reply(buffer);
    first->length = length;
    first->arg = 0;
    __builtin_memcpy(first + 1, message, length);
}

/* Whether this lane's echo of MESSAGE, posted as request OUTBOX, came back right. */
static bool echoed(struct devrt_rpc_buffer *buffer, uint32_t outbox, const uint8_t *message,
                   uint32_t length)
{
    uint64_t word = 0;
    return devrt_rpc_wait_word(buffer, outbox, &word) == DEVRT_RPC_OK &&
           word == devrt_rpc_checksum(message, length);
}

/*
 * One lane echoes `rounds` times through port `index` (the last of many, for the ready
 * ring's test), with the protocol's steps; ok[0] counts the echoes that came back right.
 * With `bogus` set, the lane first announces a flip of the port to outbox + bogus, which
 * never comes, before each real one: a rogue announcement the server must outlive.
 */
DEVRT_KERNEL4(echo_on_port, uint32_t, index, uint32_t, rounds, uint32_t *, ok, uint32_t, bogus)
{
    static const uint8_t message[] = "through one chosen port"; /* one packet */
    struct devrt_rpc_channel *channel = devrt_kernel_state()->rpc;
    struct devrt_rpc_buffer *buffer = &channel->buffers[index];
    uint64_t lanes = devrt_arch_active_mask();
    for (uint32_t round = 0; round < rounds; ++round) {
        uint32_t state;
        while (devrt_rpc_port_state_locked(state = devrt_rpc_try_lock_in(channel, index, lanes)))
            devrt_arch_sleep();
        uint32_t outbox = devrt_rpc_port_state_outbox(state);
        if (!devrt_rpc_port_state_settled(state))
            devrt_rpc_wait(channel, index, outbox);
        write_echo(buffer, message, sizeof message);
        if (bogus)
            devrt_rpc_announce(channel, index, devrt_rpc_flip(DEVRT_RPC_CLIENT, outbox + bogus, 0));
        outbox = devrt_rpc_post_in(channel, buffer, index, outbox, lanes, DEVRT_RPC_ECHO,
                                   DEVRT_RPC_WANT_WORD);
        if (echoed(buffer, outbox, message, sizeof message))
            __atomic_fetch_add(ok, 1u, __ATOMIC_RELAXED);
        devrt_rpc_release_in(channel, index, lanes, outbox, true);
    }
}

/*
 * Waves that hold ports at once (include/devrt/rpc.h, "Home ports"): each wave of the one
 * workgroup takes a port as a wave at hardware place `slot` would, or at its own place
 * when slot is ~0. Each group of lanes that took one (a whole wave, unless the emulation's
 * random schedule split it) appends the port's number to taken[1..], counted in taken[0].
 * Once all `lanes` hold theirs, each lane echoes through its port and counts a right
 * answer in counts[1]; counts[0] counts the lanes that arrived.
 */
DEVRT_KERNEL4(hold_ports_at, uint32_t *, taken, uint32_t *, counts, uint32_t, lanes, uint32_t, slot)
{
    static const uint8_t message[] = "from a wave that holds its port";
    struct devrt_rpc_port port = slot == ~0u ? devrt_rpc_acquire() : devrt_rpc_acquire_from(slot);
    if (devrt_rpc_leader_in(port.lanes))
        taken[1 + __atomic_fetch_add(&taken[0], 1u, __ATOMIC_RELAXED)] = port.index;
    __atomic_fetch_add(&counts[0], 1u, __ATOMIC_RELAXED);
    while (__atomic_load_n(&counts[0], __ATOMIC_RELAXED) < lanes)
        devrt_arch_sleep();
    write_echo(port.buffer, message, sizeof message);
    uint32_t outbox = devrt_rpc_post_in(port.channel, port.buffer, port.index, port.outbox,
                                        port.lanes, DEVRT_RPC_ECHO, DEVRT_RPC_WANT_WORD);
    bool right = echoed(port.buffer, outbox, message, sizeof message);
    devrt_rpc_release_in(port.channel, port.index, port.lanes, outbox, true);
    if (right)
        __atomic_fetch_add(&counts[1], 1u, __ATOMIC_RELAXED);
}
