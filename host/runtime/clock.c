/*
 * The runtime's clock: CLOCK_MONOTONIC in nanoseconds, the deadlines of timeouts on it,
 * and a sleep that signals do not cut short.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "runtime.h"

uint64_t devrt_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t devrt_deadline(uint64_t timeout_ns)
{
    if (!timeout_ns)
        return 0;
    uint64_t now = devrt_now_ns();
    /* A timeout too long to add is as good as none: the deadline saturates, never wraps. */
    return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

void devrt_sleep_ns(uint64_t ns)
{
    struct timespec left = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&left, &left) == -1 && errno == EINTR)
        ;
}
