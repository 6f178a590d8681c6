/*
 * What one wake-up from a timed sleep costs the sleeping thread, by its own clock
 * (CLOCK_THREAD_CPUTIME_ID), for the sleeps a polling server could use: the price of each
 * look at the doorbell while the server idles (server.c, devrt_polled_wait_doorbell).
 *
 *   wake_bench [seconds per figure, default 0.5]
 *
 * No device: the figure belongs to the machine (its kernel, its timer, a virtual machine's
 * exits), which is why it is measured where the GPU is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

enum mode { RELATIVE, RELATIVE_CLOCK, ABSOLUTE, TIMERFD, MODES };
static const char *const mode_names[MODES] = {
    "nanosleep",
    "nanosleep, a clock read and a word's load each time (the server's loop)",
    "clock_nanosleep to absolute deadlines",
    "a periodic timerfd, read",
};

static volatile uint32_t word;

/* The thread's CPU time per wake-up, in ns, over SECONDS of sleeps of PERIOD ns. */
static double per_wake(enum mode mode, uint64_t period, double seconds, double *share)
{
    uint64_t wakes = 0, wall = clock_ns(CLOCK_MONOTONIC), cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t end = wall + (uint64_t)(seconds * 1e9), next = wall;
    int fd = -1;
    if (mode == TIMERFD) {
        fd = timerfd_create(CLOCK_MONOTONIC, 0);
        struct itimerspec spec = {{0, (long)period}, {0, (long)period}};
        timerfd_settime(fd, 0, &spec, NULL);
    }
    for (;;) {
        struct timespec pause = {0, (long)period};
        uint64_t expirations;
        switch (mode) {
        case RELATIVE: nanosleep(&pause, NULL); break;
        case RELATIVE_CLOCK:
            nanosleep(&pause, NULL);
            (void)word;
            break;
        case ABSOLUTE:
            next += period;
            pause = (struct timespec){(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &pause, NULL);
            break;
        case TIMERFD:
            if (read(fd, &expirations, sizeof expirations) < 0) {
                *share = 0;
                return -1;
            }
            break;
        default: break;
        }
        ++wakes;
        /* Every mode but the server's own reads the clock once per 64 wake-ups only. */
        if ((mode == RELATIVE_CLOCK || wakes % 64 == 0) && clock_ns(CLOCK_MONOTONIC) >= end)
            break;
    }
    if (fd >= 0)
        close(fd);
    cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
    wall = clock_ns(CLOCK_MONOTONIC) - wall;
    *share = 100.0 * (double)cpu / (double)wall;
    return (double)cpu / (double)wakes;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    char source[64] = "unknown";
    FILE *file = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (file) {
        if (fgets(source, sizeof source, file))
            source[strcspn(source, "\n")] = '\0';
        fclose(file);
    }
    uint64_t start = clock_ns(CLOCK_MONOTONIC);
    for (int i = 0; i < 1000000; ++i)
        (void)clock_ns(CLOCK_MONOTONIC);
    printf("wake_bench: clock source %s, a CLOCK_MONOTONIC read %.1f ns\n\n", source,
           (double)(clock_ns(CLOCK_MONOTONIC) - start) / 1e6);
    static const uint64_t periods[] = {250000, 500000, 1000000, 2000000};
    printf(
        "| sleep | timer slack | wake-up, thread CPU us | share of a core |\n|---|---|---|---|\n");
    for (int slack = 0; slack < 2; ++slack) {
        prctl(PR_SET_TIMERSLACK, slack ? 50000ul : 1000ul, 0ul, 0ul, 0ul);
        for (int mode = 0; mode < MODES; ++mode)
            for (size_t p = 0; p < sizeof periods / sizeof periods[0]; ++p) {
                if (slack && periods[p] != 1000000)
                    continue;
                double share = 0;
                double ns = per_wake((enum mode)mode, periods[p], seconds, &share);
                printf("| %s, %.0f us | %s | %.2f | %.3f%% |\n", mode_names[mode],
                       (double)periods[p] * 1e-3, slack ? "50 us" : "1 us", ns * 1e-3, share);
            }
    }
    return 0;
}
