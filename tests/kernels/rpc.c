/*
 * Kernels that exercise the RPC protocol; built for every backend. Each lane checks its
 * own round trips and counts failures, so the host asserts on one number per test.
 */
#include <devrt/devrt.h>
#include <devrt/rpc.h>

static uint64_t flat_id(void)
{
    return devrt_global_id(DEVRT_X) +
           devrt_grid_size(DEVRT_X) *
               (devrt_global_id(DEVRT_Y) + devrt_grid_size(DEVRT_Y) * devrt_global_id(DEVRT_Z));
}

/* Each lane echoes `rounds` messages of up to max_length bytes with its own pattern. */
DEVRT_KERNEL4(echo, uint32_t *, failures, uint32_t *, done, uint32_t, max_length, uint32_t, rounds)
{
    uint8_t message[4096];
    uint64_t id = flat_id();
    for (uint32_t round = 0; round < rounds; ++round) {
        uint32_t length = (uint32_t)((id * 7919 + round * 104729) % (max_length + 1));
        if (length > sizeof message)
            length = sizeof message;
        for (uint32_t i = 0; i < length; ++i)
            message[i] = (uint8_t)(id * 31 + round * 17 + i);
        if (devrt_rpc_echo(message, length) != devrt_rpc_checksum(message, length))
            __atomic_fetch_add(failures, 1u, __ATOMIC_RELAXED);
    }
    __atomic_fetch_add(done, 1u, __ATOMIC_RELAXED);
}

/* out[id] = the host's answer for (id, id * 3). */
DEVRT_KERNEL2(hostcall, uint64_t *, out, uint32_t, service)
{
    uint64_t id = flat_id();
    out[id] = devrt_hostcall(service, id, id * 3, 0, 0);
}

/* The lane at `victim` raises; every other lane keeps talking to the host meanwhile. */
DEVRT_KERNEL3(raise_mid_request, uint32_t *, done, uint64_t, victim, uint32_t, rounds)
{
    uint8_t message[1000];
    uint64_t id = flat_id();
    for (uint32_t i = 0; i < sizeof message; ++i)
        message[i] = (uint8_t)(id + i);
    if (id == victim)
        DEVRT_THROW(DEVRT_EXCEPTION_BOUNDS, "index out of range");
    for (uint32_t round = 0; round < rounds; ++round)
        devrt_rpc_echo(message, sizeof message);
    __atomic_fetch_add(done, 1u, __ATOMIC_RELAXED);
}

/* Raise `code` at one lane, without a message when code is 0 (devrt_signal_exception). */
DEVRT_KERNEL2(raise_at, uint64_t, victim, uint32_t, code)
{
    if (flat_id() != victim)
        return;
    if (code == 0)
        devrt_signal_exception();
    devrt_signal_exception_code(code, "raised on purpose");
}

/* The barrier holds every lane of a workgroup, even after some lanes have ended. */
DEVRT_KERNEL2(barrier_sum, uint32_t *, slots, uint32_t *, sums)
{
    uint32_t lane = devrt_workitem_id(DEVRT_X);
    uint32_t size = devrt_workgroup_size(DEVRT_X);
    uint32_t *mine = slots + devrt_workgroup_id(DEVRT_X) * size;
    mine[lane] = lane + 1;
    devrt_barrier();
    uint32_t sum = 0;
    for (uint32_t i = 0; i < size; ++i)
        sum += __atomic_load_n(&mine[i], __ATOMIC_RELAXED);
    sums[devrt_workgroup_id(DEVRT_X) * size + lane] = sum;
}

/*
 * Only some lanes of each wave call: lanes whose id passes a test that splits every wave
 * unevenly (on a 32- or 64-lane wave, between one and all but one of its lanes), with
 * messages of different lengths, while the other lanes do something else. On a GPU that
 * schedules lanes independently (nvptx) the callers need not run together.
 * out[id] = the echo's checksum (callers) or ~id (the rest); the host checks both.
 */
DEVRT_KERNEL3(divergent_echo, uint64_t *, out, uint32_t *, failures, uint32_t, rounds)
{
    uint8_t message[200];
    uint64_t id = flat_id();
    uint64_t wave = id / 32;
    bool calls = (id % 32) % (wave % 5 + 2) == 0 || (id % 32) == 31 - wave % 32;
    if (calls) {
        uint64_t sum = 0;
        for (uint32_t round = 0; round < rounds; ++round) {
            uint32_t length = (uint32_t)((id * 13 + round * 29) % sizeof message);
            for (uint32_t i = 0; i < length; ++i)
                message[i] = (uint8_t)(id ^ (round + i));
            uint64_t got = devrt_rpc_echo(message, length);
            if (got != devrt_rpc_checksum(message, length))
                __atomic_fetch_add(failures, 1u, __ATOMIC_RELAXED);
            sum += got;
        }
        out[id] = sum;
    } else {
        out[id] = ~id;
    }
}

/* Odd lanes call the host; even lanes of the same waves do not. out[id] as in hostcall. */
DEVRT_KERNEL2(divergent_hostcall, uint64_t *, out, uint32_t, service)
{
    uint64_t id = flat_id();
    if (id & 1)
        out[id] = devrt_hostcall(service, id, id * 3, 0, 0);
    else
        out[id] = ~id;
}

/*
 * The only lane takes a port for a printf and raises before it ends the printf, so its
 * wave ends holding the port. A long format is streamed: its first packet has flipped the
 * port's outbox word before the raise, which the port's next holder must know.
 */
DEVRT_KERNEL1(raise_holding_port, uint32_t, long_format)
{
    struct devrt_printf_state state = {0};
    devrt_printf_begin(&state, devrt_printf_output_context(),
                       long_format ? "a format longer than one packet, so that the port's first "
                                     "packet is sent before the raise: %d\n"
                                   : "short %d\n");
    DEVRT_THROW(DEVRT_EXCEPTION_BOUNDS, "raised holding a port");
}

static uint32_t locked_ports(const struct devrt_rpc_channel *channel)
{
    uint32_t locked = 0;
    for (uint32_t i = 0; i < channel->port_count; ++i)
        locked +=
            devrt_rpc_port_state_locked(__atomic_load_n(&channel->state[i], __ATOMIC_RELAXED));
    return locked;
}

/* out[0] = how many ports are locked, out[1] = how many the channel has. Run by one lane. */
DEVRT_KERNEL1(count_locked_ports, uint32_t *, out)
{
    const struct devrt_rpc_channel *channel = devrt_kernel_state()->rpc;
    out[0] = locked_ports(channel);
    out[1] = channel->port_count;
}

/*
 * Waits until the server has slept on its doorbell once, its sleeping flag seen set and
 * then cleared, then echoes, and raises if the echo is wrong. A kernel that requests at
 * once may keep the server busy to its end, so that whether it ever sleeps depends on the
 * machine's pace; here the sleep comes first whatever the pace. With nothing sent before
 * it, the server's rescan before the sleep finds nothing, so the sleep is traced; and the
 * server, the one thread that serves, records it before it serves the echo, so the
 * launch cannot end before the record.
 */
DEVRT_KERNEL0(echo_after_server_sleeps)
{
    static const uint8_t message[] = "sent after the server slept";
    const struct devrt_rpc_doorbell *doorbell = devrt_kernel_state()->rpc->doorbell;
    while (!__atomic_load_n(&doorbell->sleeping, __ATOMIC_RELAXED))
        ;
    while (__atomic_load_n(&doorbell->sleeping, __ATOMIC_RELAXED))
        ;
    if (devrt_rpc_echo(message, sizeof message) != devrt_rpc_checksum(message, sizeof message))
        DEVRT_THROW(DEVRT_EXCEPTION_DEVICE_ERROR,
                    "the echo after the server's sleep came back wrong");
}

/*
 * Holds a port while the host concludes another launch (rpc_test's reclaim_while_held): the
 * format is longer than a packet, so begin takes the port and sends its first packet;
 * flags[0] = 1 says so. Once the host sets flags[1], out[0] = the ports locked then (this
 * one's among them), and the line ends.
 */
DEVRT_KERNEL2(hold_port_and_count, uint32_t *, flags, uint32_t *, out)
{
    struct devrt_printf_state state = {0};
    struct devrt_printf_state *held =
        devrt_printf_begin(&state, devrt_printf_output_context(),
                           "a format longer than one packet, so that the port is taken and its "
                           "first packet sent at the begin, held across another launch's end\n");
    /* Relaxed, as timeout.c's spin: NVPTX's LLVM 19 selects no release store. */
    __atomic_store_n(&flags[0], 1u, __ATOMIC_RELAXED);
    while (!__atomic_load_n(&flags[1], __ATOMIC_RELAXED))
        ;
    out[0] = locked_ports(devrt_kernel_state()->rpc);
    devrt_printf_end(held);
}

/* Raise with a message at `message`, a device address that may be anything. */
DEVRT_KERNEL1(raise_with_string, uint64_t, message)
{
    devrt_signal_exception_at(DEVRT_EXCEPTION_BOUNDS, (const char *)(uintptr_t)message, __FILE__, 7,
                              0);
}
