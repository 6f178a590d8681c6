/*
 * An exception storm (tests/kernels/storm.c): every lane of a grid that fills the device
 * raises at once. The launch must give exactly one report, the first writer's (its fields
 * all of one lane), write one report line, keep every line printed before the storm, and
 * leave the module clean for the next launch. The count of lanes that raised is the
 * control: the one report is the runtime's doing, not one lane's raise.
 * storm_test IMAGE storm [BACKEND]; exits 0 when it holds, 1 when not, 77 without a device.
 * It prints the storm's launch time, for docs/reliability.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/abi.h>
#include <devrt/host.h>

#include "harness.h"

/* A grid that fills the device: 132 SMs of 2048 threads on the H200, 104 CUs of 2560 on an
   MI210-class GPU; on the emulation a thousand lane threads. */
static void grid_for(enum devrt_backend backend, uint32_t *groups, uint32_t *block)
{
    bool host_lanes = harness_host_lanes(backend);
    *block = host_lanes ? 64 : 256;
    *groups = host_lanes ? 16 : backend == DEVRT_BACKEND_CUDA ? 1056 : 1040;
}

static void test_storm(devrt_device *device, devrt_module *module)
{
    uint32_t groups, block;
    grid_for(devrt_device_backend(device), &groups, &block);
    uint64_t lanes = (uint64_t)groups * block;
    uint32_t *counts = devrt_mem_alloc(device, 2 * sizeof *counts);
    FILE *reports = tmpfile();
    if (!counts || !reports) {
        CHECK(false, "no memory for the counts or no report file");
        return;
    }
    struct harness_sink sink = {0};
    devrt_module_set_output_callback(module, harness_sink_append, &sink);
    devrt_module_set_report_file(module, reports);

    const struct devrt_launch_config config = {.grid = {groups, 1, 1}, .block = {block, 1, 1}};
    struct devrt_arg storm_args[] = {DEVRT_ARG_PTR(&counts[0])};
    struct devrt_launch_report report;
    double start = harness_seconds();
    int status = devrt_launch(module, "storm", &config, storm_args, 1, &report);
    double seconds = harness_seconds() - start;
    printf("storm of %llu lanes: %.3f s to the report\n", (unsigned long long)lanes, seconds);

    CHECK(status == DEVRT_ERROR_EXCEPTION, "status %d (%s): %s", status,
          devrt_status_string(status), devrt_last_error());
    CHECK(counts[0] == lanes, "%u of %llu lanes raised", counts[0], (unsigned long long)lanes);
    CHECK(report.code == DEVRT_EXCEPTION_BOUNDS && !strcmp(report.message, "the storm"),
          "report: %s", report.text);
    /* One lane's fields: the value it raised with is its id, which its place gives too. */
    uint64_t id = (uint64_t)report.workgroup[0] * block + report.workitem[0];
    CHECK(report.value == id && id < lanes, "the report mixes lanes: value %llu from lane %llu",
          (unsigned long long)report.value, (unsigned long long)id);

    /* Exactly one report line, the report's own. */
    char line[2048];
    long count = 0;
    bool same = false;
    rewind(reports);
    while (fgets(line, sizeof line, reports)) {
        line[strcspn(line, "\n")] = '\0';
        same = !strcmp(line, report.text);
        count++;
    }
    CHECK(count == 1 && same, "%ld report lines, expected 1 (%s)", count, report.text);

    /* Every line printed before the storm, once. */
    CHECK(!sink.failed, "no memory for the output");
    for (uint64_t lane = 0; lane < lanes; lane += 64) {
        char expected[64];
        snprintf(expected, sizeof expected, "lane %llu before the storm\n",
                 (unsigned long long)lane);
        const char *at = sink.data ? strstr(sink.data, expected) : NULL;
        CHECK(at && !strstr(at + 1, expected), "line \"lane %llu before the storm\" %s",
              (unsigned long long)lane, at ? "twice" : "lost");
        if (failures > 8)
            break;
    }

    /* The next launch is clean. */
    struct devrt_arg calm_args[] = {DEVRT_ARG_PTR(&counts[1])};
    status = devrt_launch(module, "calm", &config, calm_args, 1, &report);
    CHECK(status == DEVRT_SUCCESS, "the launch after the storm: %s", devrt_last_error());
    CHECK(counts[1] == lanes, "after the storm %u of %llu lanes ran", counts[1],
          (unsigned long long)lanes);
    devrt_module_set_report_file(module, stderr);
    fclose(reports);
    free(sink.data);
    devrt_mem_free(device, counts);
}

int main(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[2], "storm")) {
        fprintf(stderr, "usage: storm_test IMAGE storm [emu|hsa|cuda]\n");
        return 2;
    }
    devrt_device *device;
    devrt_module *module;
    int exit_code =
        harness_open(harness_backend(argc > 3 ? argv[3] : NULL), NULL, argv[1], &device, &module);
    if (exit_code)
        return exit_code;
    test_storm(device, module);
    devrt_module_unload(module);
    devrt_device_close(device);
    return failures ? 1 : 0;
}
