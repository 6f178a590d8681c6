/*
 * Where a device's server thread runs. A request's round trip includes the server's reads
 * of the mailboxes and the buffers, which sit in host memory the GPU writes through its
 * PCIe link: a server on the GPU's own NUMA node reads them without crossing the
 * socket interconnect. The choice, first that applies: the device option, the environment
 * ($DEVRT_SERVER_CPUS), the CPUs of the GPU's NUMA node (the backend's local_cpus op, which
 * CUDA and HSA answer from the GPU's PCI address), else wherever the system puts it.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "placement.h"

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A CPU number at *text, moved past; -1 with WHY set if there is none or it is too large. */
static long cpu_number(const char **text, char *why, size_t why_size)
{
    const char *start = *text;
    if (*start < '0' || *start > '9') {
        snprintf(why, why_size, "expected a CPU number at \"%s\"", start);
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long value = strtoul(start, &end, 10);
    if (errno || value >= CPU_SETSIZE) {
        snprintf(why, why_size, "CPU %.*s is past the last this runtime can place on (%d)",
                 (int)(end - start), start, CPU_SETSIZE - 1);
        return -1;
    }
    *text = end;
    return (long)value;
}

int devrt_cpulist_parse(const char *text, cpu_set_t *set, char *why, size_t why_size)
{
    CPU_ZERO(set);
    if (!text) {
        snprintf(why, why_size, "no cpulist");
        return -1;
    }
    const char *p = text;
    while (is_space(*p))
        ++p;
    if (!*p) {
        snprintf(why, why_size, "an empty cpulist names no CPU");
        return -1;
    }
    for (;;) {
        long first = cpu_number(&p, why, why_size);
        if (first < 0)
            return -1;
        long last = first;
        if (*p == '-') {
            ++p;
            last = cpu_number(&p, why, why_size);
            if (last < 0)
                return -1;
            if (last < first) {
                snprintf(why, why_size, "range %ld-%ld runs backwards", first, last);
                return -1;
            }
        }
        for (long cpu = first; cpu <= last; ++cpu)
            CPU_SET((int)cpu, set);
        if (*p == ',') {
            ++p;
            continue;
        }
        while (is_space(*p))
            ++p;
        if (*p) {
            snprintf(why, why_size,
                     "unexpected \"%s\" (a cpulist is N or N-M, separated by commas)", p);
            return -1;
        }
        return 0;
    }
}

void devrt_cpulist_format(const cpu_set_t *set, char *text, size_t size)
{
    size_t used = 0;
    if (size)
        text[0] = '\0';
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, set))
            continue;
        int last = cpu;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            ++last;
        char piece[32];
        int n = last == cpu ? snprintf(piece, sizeof piece, "%s%d", used ? "," : "", cpu)
                            : snprintf(piece, sizeof piece, "%s%d-%d", used ? "," : "", cpu, last);
        if (used + (size_t)n + 1 > size) {
            /* Cut where a reader sees it was cut, rather than a list that looks whole. */
            if (size >= 4)
                snprintf(text + (used + 4 > size ? size - 4 : used), 4, "...");
            return;
        }
        memcpy(text + used, piece, (size_t)n + 1);
        used += (size_t)n;
        cpu = last;
    }
}

int devrt_pci_local_cpus(const char *sysfs, unsigned domain, unsigned bus, unsigned device,
                         unsigned function, char *list, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bus/pci/devices/%04x:%02x:%02x.%x/local_cpulist", sysfs, domain,
             bus, device, function);
    FILE *file = fopen(path, "r");
    if (!file)
        return -1;
    bool read = fgets(list, (int)size, file) != NULL;
    fclose(file);
    if (!read)
        return -1;
    list[strcspn(list, "\n")] = '\0';
    return 0;
}

const char *devrt_server_placement_name(enum devrt_server_placement placement)
{
    switch (placement) {
    case DEVRT_SERVER_ANYWHERE: return "anywhere";
    case DEVRT_SERVER_NEAR_GPU: return "the GPU's NUMA node";
    case DEVRT_SERVER_BY_OPTION: return "the device option";
    case DEVRT_SERVER_BY_ENVIRONMENT: return "DEVRT_SERVER_CPUS";
    }
    return "unknown";
}

int devrt_server_choose_cpus(const char *option, const char *environment, const char *gpu_local,
                             const cpu_set_t *allowed, struct devrt_server_cpus *out, char *why,
                             size_t why_size)
{
    memset(out, 0, sizeof *out);
    out->placement = DEVRT_SERVER_ANYWHERE;
    if (environment && !*environment)
        environment = NULL;
    const char *given = option ? option : environment;
    if (given) {
        char reason[200];
        if (devrt_cpulist_parse(given, &out->set, reason, sizeof reason) != 0) {
            snprintf(why, why_size, "%s \"%s\": %s",
                     option ? "the device option server_cpus" : "DEVRT_SERVER_CPUS", given, reason);
            return -1;
        }
        out->placement = option ? DEVRT_SERVER_BY_OPTION : DEVRT_SERVER_BY_ENVIRONMENT;
        devrt_cpulist_format(&out->set, out->list, sizeof out->list);
        return 0;
    }
    cpu_set_t near;
    char ignored[200];
    /*
     * The GPU's node, but only the part of it the program may use: a program started under
     * taskset or a cpuset keeps its server within them. A node it may not use at all, or a
     * list the backend could not read, leaves the server where the system puts it.
     */
    if (!gpu_local || devrt_cpulist_parse(gpu_local, &near, ignored, sizeof ignored) != 0)
        return 0;
    if (allowed)
        CPU_AND(&near, &near, allowed);
    if (CPU_COUNT(&near) == 0)
        return 0;
    out->set = near;
    out->placement = DEVRT_SERVER_NEAR_GPU;
    devrt_cpulist_format(&out->set, out->list, sizeof out->list);
    return 0;
}
