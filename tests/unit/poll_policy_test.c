/*
 * The polled doorbell's sleeps (host/runtime/poll_policy.c), run over a simulated quiet
 * spell with no GPU and no clock: the server's wait as devrt_polled_wait_doorbell does it,
 * with its 100 ms timeout and the new wait that follows each.
 *
 *   poll_policy_test latency [control]  the longest the server leaves the doorbell unread
 *                                       in 10 s of quiet: at most 1 ms, so the first request
 *                                       after any quiet spell waits at most 1 ms for it.
 *                                       control: the policy before issue 29 (a ceiling
 *                                       growing to 8 ms), which must fail
 *   poll_policy_test wakes [control]    the wake-ups in the 10th second of quiet, each a
 *                                       cost to the idle thread: at most 1000 (+1%).
 *                                       control: a 0.5 ms ceiling, which must fail
 *
 * Exit status: 0 the bound held, 1 it did not.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "poll_policy.h"

#define TIMEOUT_NS 100000000ull /* DEVRT_SERVER_POLL_MS */
#define SPIN_STEP_NS 1000ull    /* a spinning look, generously slow */
#define HORIZON_NS 10000000000ull

/* The policy before issue 29: the ceiling grew with the quiet spell up to 8 ms. */
static const struct devrt_poll_policy before_issue_29 = {
    .spin_ns = 100000u,
    .min_sleep_ns = 2000u,
    .max_sleep_ns = 1000000u,
    .long_sleep_ns = 8000000u,
    .quiet_share = 16u,
};

struct spell {
    uint64_t longest_gap, gap_at; /* the longest time between two looks, and where it ended */
    uint64_t wakes_last_second;   /* sleeps that ended in the spell's last second */
};

/* Looks at the doorbell from the last packet (time 0) to HORIZON_NS, as the server takes them. */
static struct spell simulate(const struct devrt_poll_policy *policy)
{
    struct spell s = {0};
    uint64_t t = 0, last_look = 0;
    while (t < HORIZON_NS) {
        /* One wait (devrt_polled_wait_doorbell); server_main's passes look again at its end. */
        uint64_t start = t;
        uint64_t sleep = devrt_poll_first_sleep(policy, t);
        for (;;) {
            if (t - last_look > s.longest_gap) {
                s.longest_gap = t - last_look;
                s.gap_at = t;
            }
            last_look = t;
            if (t - start >= TIMEOUT_NS || t >= HORIZON_NS)
                break;
            sleep = devrt_poll_sleep(policy, t, sleep);
            if (!sleep) {
                t += SPIN_STEP_NS;
                sleep = devrt_poll_first_sleep(policy, 0);
                continue;
            }
            t += sleep;
            sleep *= 2;
            if (t >= HORIZON_NS - 1000000000ull && t < HORIZON_NS)
                s.wakes_last_second++;
        }
    }
    return s;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    bool control = argc > 2 && !strcmp(argv[2], "control");
    const char *name = control ? "control" : "policy";
    if (!strcmp(mode, "latency")) {
        struct spell s = simulate(control ? &before_issue_29 : &devrt_server_poll_policy);
        bool held = s.longest_gap <= 1000000u;
        printf("%s: the doorbell unread for at most %.3f ms (%.3f s into the quiet): %s\n", name,
               (double)s.longest_gap * 1e-6, (double)s.gap_at * 1e-9,
               held ? "within 1 ms" : "over 1 ms");
        return held ? 0 : 1;
    }
    if (!strcmp(mode, "wakes")) {
        struct devrt_poll_policy half = devrt_server_poll_policy;
        half.max_sleep_ns = half.long_sleep_ns = 500000u;
        struct spell s = simulate(control ? &half : &devrt_server_poll_policy);
        bool held = s.wakes_last_second <= 1010u;
        printf("%s: %llu wake-ups in the 10th second of quiet: %s\n", name,
               (unsigned long long)s.wakes_last_second, held ? "at most 1010" : "over 1010");
        return held ? 0 : 1;
    }
    fprintf(stderr, "usage: poll_policy_test latency|wakes [control]\n");
    return 2;
}
