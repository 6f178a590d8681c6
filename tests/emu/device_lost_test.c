/*
 * A kernel that faults the GPU loses the device for the process (docs/runtime.md, "A device
 * lost"): its launch's report names the launch and the fault, every later call on the device
 * fails at once with DEVRT_ERROR_DEVICE_LOST, and the device closed and opened again says that
 * only a new process can use it (CUDA's sticky error; HSA's evicted queues). The control
 * runs the same steps with a pointer the kernel may write: every call succeeds, so the failures
 * come from the fault alone.
 *
 * second: a fault on GPU 0, then one on GPU 1 with GPU 0 still open. ROCr reports one memory
 * fault a process, so the second is found by devrt's probe of the GPU: the launch there ends
 * lost all the same, and GPU 1 opened again is refused.
 *
 * trap: a kernel that executes the trap instruction. ROCr reports it as an error of the queue,
 * which devrt replaces: the launch fails and the device runs the next kernel. CUDA keeps a
 * trap as a sticky error: the device is lost.
 *
 * device_lost_test IMAGE fault|control|second|trap BACKEND; tests/kernels/timeout.c's mark writes
 * through its pointer. Exits 0 when it holds, 1 when not, 77 without a device (second: without
 * two). A GPU test only: on the emulation the fault is the process's own (a signal).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <devrt/host.h>

#include "harness.h"

static const struct devrt_launch_config one_lane = {.grid = {1, 1, 1}, .block = {1, 1, 1}};

/* mark through PTR, waited for: the status, and the report in *REPORT. */
static int mark(devrt_device *device, devrt_module *module, uint32_t *ptr, uint64_t *id,
                struct devrt_launch_report *report)
{
    struct devrt_arg args[] = {DEVRT_ARG_PTR(ptr)};
    *id = 0;
    memset(report, 0, sizeof *report);
    int status = devrt_launch_async(module, "mark", &one_lane, args, 1, NULL, id);
    return status == DEVRT_SUCCESS ? devrt_launch_wait(device, *id, report) : status;
}

/* A call on a lost device fails with its status and says why, naming the fault. */
static void check_lost(int status, const char *call)
{
    if (status == DEVRT_ERROR_DEVICE_LOST)
        CHECK(strstr(devrt_last_error(), "device is lost") && strstr(devrt_last_error(), "faulted"),
              "%s's message: %s", call, devrt_last_error());
    else
        CHECK(false, "%s: status %d (%s), expected DEVRT_ERROR_DEVICE_LOST", call, status,
              devrt_status_string(status));
}

/* Opens device 0, loads IMAGE and allocates a word, zeroed; 0 or the exit status. */
static int open_with_word(enum devrt_backend backend, const char *image, devrt_device **device,
                          devrt_module **module, uint32_t **word)
{
    int opened = harness_open(backend, NULL, image, device, module);
    if (opened)
        return opened;
    *word = devrt_mem_alloc(*device, sizeof **word);
    CHECK(*word, "a word: %s", devrt_last_error());
    if (!*word) {
        devrt_device_close(*device);
        return 1;
    }
    **word = 0;
    return 0;
}

/* Opens GPU INDEX and loads IMAGE; 77 when there is no such GPU, 1 on another failure. */
static int open_gpu(enum devrt_backend backend, int index, const char *image, devrt_device **device,
                    devrt_module **module)
{
    int status = devrt_device_open(backend, index, NULL, device);
    if (status == DEVRT_ERROR_NO_DEVICE) {
        printf("skipped: no GPU %d: %s\n", index, devrt_last_error());
        return HARNESS_SKIP;
    }
    CHECK(status == DEVRT_SUCCESS, "open GPU %d: %s", index, devrt_last_error());
    if (status != DEVRT_SUCCESS)
        return 1;
    status = harness_load(*device, image, module);
    CHECK(status == DEVRT_SUCCESS, "load on GPU %d: %s", index, devrt_last_error());
    if (status != DEVRT_SUCCESS)
        devrt_device_close(*device);
    return status == DEVRT_SUCCESS ? 0 : 1;
}

static int second_gpu(enum devrt_backend backend, const char *image)
{
    devrt_device *device[2];
    devrt_module *module[2];
    int opened = open_gpu(backend, 0, image, &device[0], &module[0]);
    if (opened)
        return opened;
    opened = open_gpu(backend, 1, image, &device[1], &module[1]);
    if (opened) {
        devrt_device_close(device[0]);
        return opened;
    }
    for (int gpu = 0; gpu < 2; ++gpu) {
        uint64_t id;
        struct devrt_launch_report report;
        int status = mark(device[gpu], module[gpu], (uint32_t *)(uintptr_t)0x8, &id, &report);
        printf("the faulting launch on GPU %d: %s; report: %s\n", gpu, devrt_status_string(status),
               report.text[0] ? report.text : "(none)");
        check_lost(status, gpu ? "the faulting launch on GPU 1" : "the faulting launch on GPU 0");
    }
    devrt_device_close(device[1]);
    int status = devrt_device_open(backend, 1, NULL, &device[1]);
    printf("GPU 1 opened again: %s: %s\n", devrt_status_string(status),
           status ? devrt_last_error() : "");
    CHECK(status == DEVRT_ERROR_DEVICE_LOST && strstr(devrt_last_error(), "new process"),
          "the open of GPU 1 after its fault: status %d (%s): %s", status,
          devrt_status_string(status), devrt_last_error());
    if (status == DEVRT_SUCCESS)
        devrt_device_close(device[1]);
    devrt_device_close(device[0]);
    return failures ? 1 : 0;
}

static int trap(enum devrt_backend backend, const char *image)
{
    devrt_device *device;
    devrt_module *module;
    uint32_t *word;
    int opened = open_with_word(backend, image, &device, &module, &word);
    if (opened)
        return opened;
    struct devrt_arg args[] = {DEVRT_ARG_PTR(word)};
    struct devrt_launch_report report = {0};
    uint64_t id = 0;
    int status = devrt_launch_async(module, "trap", &one_lane, args, 1, NULL, &id);
    if (status == DEVRT_SUCCESS)
        status = devrt_launch_wait(device, id, &report);
    printf("the trapping launch: %s: %s; report: %s\n", devrt_status_string(status),
           devrt_last_error(), report.text[0] ? report.text : "(none)");
    CHECK(*word == 1, "the trapping kernel did not start (%u)", *word);
    if (backend == DEVRT_BACKEND_CUDA) {
        check_lost(status, "the trapping launch");
    } else {
        CHECK(status == DEVRT_ERROR_LAUNCH, "the trapping launch: %s, expected a failed launch",
              devrt_status_string(status));
        status = mark(device, module, word, &id, &report);
        CHECK(status == DEVRT_SUCCESS && *word == 2, "the launch after the trap: %s (%s), word %u",
              devrt_status_string(status), devrt_last_error(), *word);
    }
    devrt_mem_free(device, word);
    devrt_device_close(device);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[2], "fault") && strcmp(argv[2], "control") &&
                      strcmp(argv[2], "second") && strcmp(argv[2], "trap"))) {
        fprintf(stderr, "usage: device_lost_test IMAGE fault|control|second|trap BACKEND\n");
        return 2;
    }
    bool fault = !strcmp(argv[2], "fault");
    enum devrt_backend backend = harness_backend(argv[3]);
    if (!strcmp(argv[2], "second"))
        return second_gpu(backend, argv[1]);
    if (!strcmp(argv[2], "trap"))
        return trap(backend, argv[1]);
    devrt_device *device;
    devrt_module *module;
    uint32_t *word;
    int opened = open_with_word(backend, argv[1], &device, &module, &word);
    if (opened)
        return opened;

    /* An address no allocation is at: the store faults. */
    uint32_t *target = fault ? (uint32_t *)(uintptr_t)0x8 : word;
    uint64_t id;
    struct devrt_launch_report report;
    int status = mark(device, module, target, &id, &report);
    printf("the %s launch: %s; report: %s\n", fault ? "faulting" : "clean",
           devrt_status_string(status), report.text[0] ? report.text : "(none)");
    if (fault) {
        check_lost(status, "the faulting launch");
        char named[64];
        snprintf(named, sizeof named, "kernel mark (launch %" PRIu64 ") faulted", id);
        CHECK(report.launch == id && strstr(report.text, named),
              "the report names launch %" PRIu64 ": launch %" PRIu64 ", text %s", id, report.launch,
              report.text);
    } else {
        CHECK(status == DEVRT_SUCCESS && *word == 1, "the clean launch: %s, word %u",
              devrt_last_error(), *word);
    }

    /* Every later call on the device: at once, with the one status where it is lost. */
    status = mark(device, module, word, &id, &report);
    if (fault)
        check_lost(status, "a later launch");
    else
        CHECK(status == DEVRT_SUCCESS, "a later launch: %s", devrt_last_error());
    void *memory = devrt_mem_alloc(device, 64);
    if (fault) {
        CHECK(!memory, "devrt_mem_alloc gave memory on a lost device");
        check_lost(DEVRT_ERROR_DEVICE_LOST, "devrt_mem_alloc");
    } else {
        CHECK(memory, "devrt_mem_alloc: %s", devrt_last_error());
    }
    devrt_mem_free(device, memory);
    devrt_module *other = NULL;
    status = harness_load(device, argv[1], &other);
    if (fault)
        check_lost(status, "devrt_module_load");
    else
        CHECK(status == DEVRT_SUCCESS, "devrt_module_load: %s", devrt_last_error());
    devrt_module_unload(other);
    devrt_stream *stream = NULL;
    status = devrt_stream_create(device, &stream);
    if (fault)
        check_lost(status, "devrt_stream_create");
    else
        CHECK(status == DEVRT_SUCCESS, "devrt_stream_create: %s", devrt_last_error());
    devrt_stream_destroy(stream);

    /*
     * Closed and opened again, the device runs a kernel cleanly after no fault. After one
     * the open says that only a new process can use the GPU: CUDA's driver keeps a kernel's
     * fault for the process's lifetime (measured on driver 580, CUDA 13.0:
     * docs/results/2026-12-04-h200-timeouts.md), and amdkfd keeps the process's queues on the
     * GPU evicted. A new process (the next test) has the GPU.
     */
    devrt_mem_free(device, word);
    devrt_device_close(device);
    if (fault && (backend == DEVRT_BACKEND_CUDA || backend == DEVRT_BACKEND_HSA)) {
        status = devrt_device_open(backend, 0, NULL, &device);
        printf("opened again: %s: %s\n", devrt_status_string(status),
               status ? devrt_last_error() : "");
        CHECK(status == DEVRT_ERROR_DEVICE_LOST && strstr(devrt_last_error(), "new process"),
              "the open after a fault: status %d (%s): %s", status, devrt_status_string(status),
              devrt_last_error());
        if (status == DEVRT_SUCCESS)
            devrt_device_close(device);
        return failures ? 1 : 0;
    }
    opened = harness_open(backend, NULL, argv[1], &device, &module);
    CHECK(opened == 0, "the device opened again: %s", devrt_last_error());
    if (opened)
        return 1;
    word = devrt_mem_alloc(device, sizeof *word);
    CHECK(word, "a word after the reopen: %s", devrt_last_error());
    if (word) {
        *word = 0;
        status = mark(device, module, word, &id, &report);
        printf("after the reopen: %s, word %u\n", devrt_status_string(status), *word);
        CHECK(status == DEVRT_SUCCESS && *word == 1, "after the reopen: %s, word %u",
              devrt_last_error(), *word);
        devrt_mem_free(device, word);
    }
    devrt_device_close(device);
    return failures ? 1 : 0;
}
