/*
 * How long a server that polls its doorbell sleeps between looks (poll_policy.c), apart
 * from the loop that sleeps (devrt_polled_wait_doorbell, server.c) so that a test can run
 * the policy over quiet spells without a GPU or a clock.
 */
#ifndef DEVRT_POLL_POLICY_H
#define DEVRT_POLL_POLICY_H

#include <stdint.h>

struct devrt_poll_policy {
    uint64_t spin_ns;       /* within this of the last packet taken, spin */
    uint64_t min_sleep_ns;  /* then sleep, from this, doubling */
    uint64_t max_sleep_ns;  /* up to this */
    uint64_t long_sleep_ns; /* or, after quiet_share times it of quiet, up to this */
    uint32_t quiet_share;   /* the ceiling is this share of the quiet spell so far */
};

/* The server's. */
extern const struct devrt_poll_policy devrt_server_poll_policy;

/* The first sleep of a wait that begins QUIET_NS after the last packet taken. */
uint64_t devrt_poll_first_sleep(const struct devrt_poll_policy *policy, uint64_t quiet_ns);

/* The sleep to take now, QUIET_NS after the last packet, of WANTED_NS asked; 0: spin. */
uint64_t devrt_poll_sleep(const struct devrt_poll_policy *policy, uint64_t quiet_ns,
                          uint64_t wanted_ns);

#endif
