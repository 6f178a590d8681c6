/* Where a device's server thread runs (placement.c): cpulists and the choice. */
#ifndef DEVRT_PLACEMENT_H
#define DEVRT_PLACEMENT_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include <devrt/host.h>

/*
 * TEXT as a Linux cpulist ("0-3,8,10-11": CPU numbers and ranges separated by commas, with
 * white space around the whole allowed, as sysfs writes it) into SET. Returns 0, or -1
 * with WHY saying what is wrong: an empty list, a missing number, a range that runs
 * backwards, a CPU past CPU_SETSIZE, anything else in the text.
 */
int devrt_cpulist_parse(const char *text, cpu_set_t *set, char *why, size_t why_size);
/* SET as the shortest cpulist, "..." at the end if SIZE cut it; "" for an empty set. */
void devrt_cpulist_format(const cpu_set_t *set, char *text, size_t size);

struct devrt_server_cpus {
    enum devrt_server_placement placement;
    cpu_set_t set; /* empty when placement is DEVRT_SERVER_ANYWHERE */
    char list[256];
};

/*
 * Choose the server's CPUs: OPTION (the device option) if given, else ENVIRONMENT
 * ($DEVRT_SERVER_CPUS, "" as unset), each taken as it is; else GPU_LOCAL (the backend's
 * cpulist of the GPU's node; NULL: unknown) within ALLOWED (the CPUs the program may use;
 * NULL: no limit), if any is left; else anywhere. Returns 0, or -1 with WHY naming the
 * setting whose cpulist is malformed.
 */
int devrt_server_choose_cpus(const char *option, const char *environment, const char *gpu_local,
                             const cpu_set_t *allowed, struct devrt_server_cpus *out, char *why,
                             size_t why_size);

#endif
