/* The checksum the server's echo replies with (host/runtime/server.c), for kernels to check. */
#ifndef DEVRT_TEST_CHECKSUM_H
#define DEVRT_TEST_CHECKSUM_H

#include <stdint.h>

static inline uint64_t fnv1a(const uint8_t *data, uint32_t size)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < size; ++i)
        hash = (hash ^ data[i]) * 0x100000001b3ull;
    return hash;
}

#endif
