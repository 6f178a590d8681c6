/* Kernels of the RPC benchmark. */
#include <devrt/devrt.h>

/* Time `rounds` one-packet round trips per lane, in clock ticks. */
DEVRT_KERNEL void round_trips(uint64_t *samples, uint32_t rounds)
{
    uint64_t lane = devrt_global_id(DEVRT_X);
    uint64_t payload[4] = {lane, 1, 2, 3};
    for (uint32_t i = 0; i < rounds; ++i) {
        uint64_t start = devrt_clock();
        devrt_rpc_echo(payload, sizeof payload);
        samples[lane * rounds + i] = devrt_clock() - start;
    }
}

/* Run for `ticks` without a request. */
DEVRT_KERNEL void idle(uint64_t ticks)
{
    uint64_t start = devrt_clock();
    while (devrt_clock() - start < ticks)
        ;
}

/*
 * Time `rounds` reads of a word of host memory, one at a time: the floor under every
 * exchange with the host, since each poll of a mailbox is one such read.
 */
DEVRT_KERNEL void host_reads(const uint32_t *word, uint64_t *samples, uint32_t rounds)
{
    for (uint32_t i = 0; i < rounds; ++i) {
        uint64_t start = devrt_clock();
        /* The branch needs the value, so the clock below is read after it arrived. */
        if (__atomic_load_n(word, __ATOMIC_RELAXED) == 0xdead)
            return;
        samples[i] = devrt_clock() - start;
    }
}
