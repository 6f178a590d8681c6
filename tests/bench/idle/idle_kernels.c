/* Kernels of the idle benchmark: silence, and a request after it. */
#include <devrt/devrt.h>

#include "rpc_client.h"

/* Run for `ticks` (nanoseconds on every backend) without a request. */
DEVRT_KERNEL1(idle, uint64_t, ticks)
{
    uint64_t start = devrt_clock();
    while (devrt_clock() - start < ticks)
        ;
}

/*
 * `rounds` times: send nothing for `quiet` ticks, then time one round trip. The first
 * request after a quiet spell is the one the server's back-off delays.
 */
DEVRT_KERNEL3(quiet_then_call, uint64_t *, samples, uint32_t, rounds, uint64_t, quiet)
{
    uint64_t payload[4] = {1, 2, 3, 4};
    for (uint32_t i = 0; i < rounds; ++i) {
        uint64_t start = devrt_clock();
        while (devrt_clock() - start < quiet)
            ;
        start = devrt_clock();
        devrt_rpc_echo(payload, sizeof payload);
        samples[i] = devrt_clock() - start;
    }
}
