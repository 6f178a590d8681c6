/*
 * The polled doorbell's sleeps (poll_policy.h). Within spin_ns of the last packet taken the
 * server spins, which covers the gap between the requests of a busy kernel; then it sleeps
 * for a time that doubles from min_sleep_ns up to a ceiling: max_sleep_ns, or a
 * quiet_share'th of the quiet spell so far once that is longer, up to long_sleep_ns.
 *
 * The server's ceiling stays at 1 ms however long the quiet (long_sleep_ns = max_sleep_ns),
 * so the first request after any quiet spell waits at most about 1 ms for the server. A
 * wake-up costs the thread 10 to 11 us of CPU on the H200's host at that period, all of it
 * the kernel's timer and scheduler (wake_bench: a nanosleep alone costs as much as the
 * server's look at the doorbell word), so an idle server costs about 1% of a core. A
 * ceiling growing to 8 ms after 128 ms of quiet cost 0.3%, but made the first request after
 * 100 ms of quiet wait 4 to 5 ms; a 2 ms ceiling cost 0.7 to 0.8% and still left medians
 * up to 1.3 ms (docs/performance.md, "Idle server"). Polling cannot have both at once here;
 * the GPU would have to wake the thread.
 */
#include "poll_policy.h"

const struct devrt_poll_policy devrt_server_poll_policy = {
    .spin_ns = 100000u,
    .min_sleep_ns = 2000u,
    .max_sleep_ns = 1000000u,
    .long_sleep_ns = 1000000u,
    .quiet_share = 16u,
};

static uint64_t ceiling(const struct devrt_poll_policy *policy, uint64_t quiet_ns)
{
    uint64_t share = quiet_ns / policy->quiet_share;
    return share < policy->max_sleep_ns    ? policy->max_sleep_ns
           : share > policy->long_sleep_ns ? policy->long_sleep_ns
                                           : share;
}

/*
 * A wait that begins well into a quiet spell (the last one timed out) starts at the spell's
 * share rather than at the minimum: ramping up again after each timeout would cost a dozen
 * wake-ups every time.
 */
uint64_t devrt_poll_first_sleep(const struct devrt_poll_policy *policy, uint64_t quiet_ns)
{
    uint64_t sleep = quiet_ns / policy->quiet_share;
    return sleep < policy->min_sleep_ns ? policy->min_sleep_ns : sleep;
}

uint64_t devrt_poll_sleep(const struct devrt_poll_policy *policy, uint64_t quiet_ns,
                          uint64_t wanted_ns)
{
    if (quiet_ns < policy->spin_ns)
        return 0;
    uint64_t most = ceiling(policy, quiet_ns);
    return wanted_ns < most ? wanted_ns : most;
}
