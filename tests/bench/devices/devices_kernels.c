/* Kernels of the several-devices benchmark: one service of the runtime each. */
#include <devrt/devrt.h>

#include "rpc_client.h"

/* `rounds` one-packet round trips per lane. */
DEVRT_KERNEL1(calls, uint32_t, rounds)
{
    uint64_t payload[4] = {devrt_global_id(DEVRT_X), 1, 2, 3};
    for (uint32_t i = 0; i < rounds; ++i)
        devrt_rpc_echo(payload, sizeof payload);
}

/* `rounds` allocations and frees of 64 bytes per lane. */
DEVRT_KERNEL1(allocs, uint32_t, rounds)
{
    for (uint32_t i = 0; i < rounds; ++i) {
        uint64_t *p = devrt_malloc(64);
        if (p) {
            *p = i;
            devrt_free(p);
        }
    }
}

/* `rounds` printed lines per lane. */
DEVRT_KERNEL1(prints, uint32_t, rounds)
{
    uint32_t id = (uint32_t)devrt_global_id(DEVRT_X);
    for (uint32_t i = 0; i < rounds; ++i)
        devrt_printf("lane %u line %u\n", id, i);
}
