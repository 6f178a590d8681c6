/*
 * Where the server thread runs (host/runtime/placement.c, docs/runtime.md).
 *
 *   placement_test parse        cpulists, good and bad, and their formatting
 *   placement_test sysfs DIR    a PCI function's local CPUs from a made-up sysfs under DIR
 *   placement_test choose       option, then environment, then the GPU's node within the
 *                               CPUs allowed, then anywhere
 *   placement_test placed       an emulated device's server thread, as the kernel reports
 *                               its affinity, runs where devrt_device_get_info says; with
 *                               DEVRT_SERVER_CPUS or the option "0" that is CPU 0 alone
 *   placement_test open LIST    opens an emulated device with the option LIST; prints the
 *                               placement, or the error and exits 2
 *
 * Exit status: 0 every check held, 1 one failed (each failure printed), 2 the device did not
 * open.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <devrt/host.h>

#include "backend.h"
#include "placement.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* TEXT parses, and formats back as EXPECTED. */
static void good(const char *text, const char *expected)
{
    cpu_set_t set;
    char why[256] = "", back[256];
    int status = devrt_cpulist_parse(text, &set, why, sizeof why);
    CHECK(status == 0, "\"%s\" refused: %s", text, why);
    devrt_cpulist_format(&set, back, sizeof back);
    CHECK(!strcmp(back, expected), "\"%s\" formats as \"%s\", expected \"%s\"", text, back,
          expected);
}

/* TEXT is refused, with WHY containing EXPECTED. */
static void bad(const char *text, const char *expected)
{
    cpu_set_t set;
    char why[256] = "";
    int status = devrt_cpulist_parse(text, &set, why, sizeof why);
    CHECK(status == -1, "\"%s\" accepted", text ? text : "(null)");
    CHECK(strstr(why, expected) != NULL, "\"%s\": \"%s\" does not say \"%s\"",
          text ? text : "(null)", why, expected);
}

static void parse(void)
{
    good("0", "0");
    good("0-3,8,10-11", "0-3,8,10-11");
    good("3,2,1,0", "0-3");
    good("0-1,1-2", "0-2");
    good(" 4-5\n", "4-5"); /* as sysfs writes it */
    good("1023", "1023");
    bad(NULL, "no cpulist");
    bad("", "an empty cpulist names no CPU");
    bad(" \n", "an empty cpulist names no CPU");
    bad("a", "expected a CPU number at \"a\"");
    bad("-1", "expected a CPU number at \"-1\"");
    bad("1,", "expected a CPU number at \"\"");
    bad("1-", "expected a CPU number at \"\"");
    bad("3-1", "range 3-1 runs backwards");
    bad("1024", "CPU 1024 is past the last this runtime can place on (1023)");
    bad("0-99999999999999999999", "is past the last");
    bad("1;2", "unexpected \";2\"");
    bad("1 2", "unexpected \"2\"");
    bad("0-3:2", "unexpected \":2\"");

    /* A list cut by its buffer says so rather than passing for a whole one. */
    cpu_set_t set;
    char why[64], text[12];
    devrt_cpulist_parse("0,2,4,6,8,10,12", &set, why, sizeof why);
    devrt_cpulist_format(&set, text, sizeof text);
    CHECK(!strcmp(text, "0,2,4,6...") || !strcmp(text, "0,2,4,6,..."), "a cut list reads \"%s\"",
          text);
    CPU_ZERO(&set);
    devrt_cpulist_format(&set, text, sizeof text);
    CHECK(!strcmp(text, ""), "an empty set formats as \"%s\"", text);
}

static void sysfs(const char *root)
{
    char path[512];
    const char *dirs[] = {"bus", "bus/pci", "bus/pci/devices", "bus/pci/devices/0000:3b:00.0"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; ++i) {
        snprintf(path, sizeof path, "%s/%s", root, dirs[i]);
        mkdir(path, 0755);
    }
    snprintf(path, sizeof path, "%s/bus/pci/devices/0000:3b:00.0/local_cpulist", root);
    FILE *f = fopen(path, "w");
    if (!f) {
        printf("FAIL: cannot write %s\n", path);
        failures++;
        return;
    }
    fputs("16-31,48-63\n", f);
    fclose(f);
    char list[64] = "";
    CHECK(devrt_pci_local_cpus(root, 0, 0x3b, 0, 0, list, sizeof list) == 0, "0000:3b:00.0 unread");
    CHECK(!strcmp(list, "16-31,48-63"), "0000:3b:00.0 lists \"%s\"", list);
    CHECK(devrt_pci_local_cpus(root, 0, 0x3c, 0, 0, list, sizeof list) == -1,
          "0000:3c:00.0, which is not there, was read");
    CHECK(devrt_pci_local_cpus(root, 1, 0x3b, 0, 0, list, sizeof list) == -1,
          "0001:3b:00.0, which is not there, was read");
}

static void choose(void)
{
    cpu_set_t allowed;
    char why[256];
    devrt_cpulist_parse("0-7", &allowed, why, sizeof why);
    struct devrt_server_cpus out;
    int status;

    status = devrt_server_choose_cpus("1", "2", "3", &allowed, &out, why, sizeof why);
    CHECK(status == 0 && out.placement == DEVRT_SERVER_BY_OPTION && !strcmp(out.list, "1"),
          "the option does not win: %d %u \"%s\"", status, out.placement, out.list);
    /* Taken as given, even outside the CPUs the program runs on now. */
    status = devrt_server_choose_cpus("9", NULL, NULL, &allowed, &out, why, sizeof why);
    CHECK(status == 0 && !strcmp(out.list, "9"), "the option is cut to the allowed CPUs");
    status = devrt_server_choose_cpus(NULL, "2", "3", &allowed, &out, why, sizeof why);
    CHECK(status == 0 && out.placement == DEVRT_SERVER_BY_ENVIRONMENT && !strcmp(out.list, "2"),
          "the environment does not come next: %u \"%s\"", out.placement, out.list);
    status = devrt_server_choose_cpus(NULL, "", "4-11", &allowed, &out, why, sizeof why);
    CHECK(status == 0 && out.placement == DEVRT_SERVER_NEAR_GPU && !strcmp(out.list, "4-7"),
          "the GPU's node within the allowed CPUs: %u \"%s\"", out.placement, out.list);
    status = devrt_server_choose_cpus(NULL, NULL, "4-11", NULL, &out, why, sizeof why);
    CHECK(status == 0 && out.placement == DEVRT_SERVER_NEAR_GPU && !strcmp(out.list, "4-11"),
          "the GPU's node without a limit: %u \"%s\"", out.placement, out.list);
    status = devrt_server_choose_cpus(NULL, NULL, "8-11", &allowed, &out, why, sizeof why);
    CHECK(status == 0 && out.placement == DEVRT_SERVER_ANYWHERE && !strcmp(out.list, ""),
          "a node the program may not use is used: %u \"%s\"", out.placement, out.list);
    status = devrt_server_choose_cpus(NULL, NULL, "garbage", &allowed, &out, why, sizeof why);
    CHECK(status == 0 && out.placement == DEVRT_SERVER_ANYWHERE, "an unreadable node is used");
    status = devrt_server_choose_cpus(NULL, NULL, NULL, &allowed, &out, why, sizeof why);
    CHECK(status == 0 && out.placement == DEVRT_SERVER_ANYWHERE, "no node, yet placed");

    status = devrt_server_choose_cpus("0-", "1", NULL, NULL, &out, why, sizeof why);
    CHECK(status == -1 && !strcmp(why, "the device option server_cpus \"0-\": expected a CPU "
                                       "number at \"\""),
          "a bad option: %d \"%s\"", status, why);
    status = devrt_server_choose_cpus(NULL, "x", "1", NULL, &out, why, sizeof why);
    CHECK(status == -1 && !strcmp(why, "DEVRT_SERVER_CPUS \"x\": expected a CPU number at \"x\""),
          "a bad environment: %d \"%s\"", status, why);
}

/* The Cpus_allowed_list of the thread named devrt-server, from /proc; "" if none. */
static void server_affinity(char *list, size_t size)
{
    list[0] = '\0';
    DIR *dir = opendir("/proc/self/task");
    struct dirent *entry;
    while (dir && (entry = readdir(dir))) {
        char path[300], line[512] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        bool server = fgets(line, sizeof line, f) && !strncmp(line, "devrt-server", 12);
        fclose(f);
        if (!server)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/status", entry->d_name);
        f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "Cpus_allowed_list:", 18))
                snprintf(list, size, "%.*s", (int)strcspn(line + 19, "\n"),
                         line + 19 + strspn(line + 19, " \t"));
        if (f)
            fclose(f);
    }
    if (dir)
        closedir(dir);
}

static int open_emu(const char *cpus, devrt_device **device)
{
    struct devrt_device_options options = {.server_cpus = cpus};
    if (devrt_device_open(DEVRT_BACKEND_EMU, 0, &options, device) != DEVRT_SUCCESS) {
        printf("devrt_device_open: %s\n", devrt_last_error());
        return 2;
    }
    return 0;
}

static int placed(void)
{
    devrt_device *device;
    if (open_emu(NULL, &device))
        return 2;
    struct devrt_device_info info;
    devrt_device_get_info(device, &info);
    char actual[512];
    server_affinity(actual, sizeof actual);
    printf("placement: %s, CPUs \"%s\", the thread's \"%s\"\n",
           devrt_server_placement_name(info.server_placement), info.server_cpus, actual);
    CHECK(actual[0], "no devrt-server thread found");
    if (info.server_placement != DEVRT_SERVER_ANYWHERE)
        CHECK(!strcmp(actual, info.server_cpus), "placed on \"%s\", runs on \"%s\"",
              info.server_cpus, actual);
    /* The emulation knows no NUMA node: anywhere unless told. */
    CHECK(info.server_placement != DEVRT_SERVER_NEAR_GPU, "the emulation placed near a GPU");
    devrt_device_close(device);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "parse"))
        parse();
    else if (!strcmp(mode, "sysfs") && argc == 3)
        sysfs(argv[2]);
    else if (!strcmp(mode, "choose"))
        choose();
    else if (!strcmp(mode, "placed")) {
        if (placed())
            return 2;
    } else if (!strcmp(mode, "open") && argc == 3) {
        devrt_device *device;
        if (open_emu(argv[2], &device))
            return 2;
        struct devrt_device_info info;
        devrt_device_get_info(device, &info);
        printf("server on CPUs %s (%s)\n", info.server_cpus,
               devrt_server_placement_name(info.server_placement));
        devrt_device_close(device);
    } else {
        fprintf(stderr, "usage: placement_test parse|sysfs DIR|choose|placed|open LIST\n");
        return 2;
    }
    if (failures)
        printf("%d failure%s\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
