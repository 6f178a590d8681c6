/*
 * Memory faults on the HSA backend's GPUs. The runtime takes system-event handlers per
 * process and gives them no device, so one handler serves every GPU devrt has open and
 * finds the faulting one in a table of them; a fault it claims makes the device lost.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>

#include "hsa_backend.h"
#include "hsa_memory.h"

/*
 * The GPUs devrt has open, for the runtime's system event handler, which gets no device:
 * the runtime takes one handler per process and none can be removed, so one handler
 * serves every device and finds the faulting one here.
 */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hsa_backend *open_backends[DEVRT_HSA_MAX_OPEN];
static size_t open_count;
static bool handler_registered;

/* Whether B has a launch enqueued that has not ended: a fault on the GPU may be its. */
static bool running_on(struct hsa_backend *b)
{
    pthread_mutex_lock(&b->launches_lock);
    bool running = false;
    for (const struct hsa_launch *l = b->launches; l && !running; l = l->next)
        running = devrt_hsa.hsa_signal_load_scacquire(l->done) > 0;
    pthread_mutex_unlock(&b->launches_lock);
    return running;
}

/*
 * A memory fault on one of our GPUs while a launch of devrt's runs there is devrt's: the
 * device is lost, and returning success keeps ROCr from aborting the process. A fault on a
 * GPU where no launch of devrt's runs is another user's of the GPU: ROCr's default stands
 * (it ends the process). ROCr reports one fault only (VMFaultHandler's signal handler is
 * not kept after it): the first is final.
 */
static hsa_status_t on_system_event(const hsa_amd_event_t *event, void *data)
{
    (void)data;
    pthread_mutex_lock(&open_lock);
    uint64_t gpus[DEVRT_HSA_MAX_OPEN];
    for (size_t i = 0; i < DEVRT_HSA_MAX_OPEN; ++i)
        gpus[i] = open_backends[i] ? open_backends[i]->gpu.handle : 0;
    int owner = devrt_hsa_fault_owner(event, gpus, DEVRT_HSA_MAX_OPEN);
    if (owner >= 0 && !running_on(open_backends[owner]))
        owner = -1;
    if (owner >= 0) {
        struct hsa_backend *b = open_backends[owner];
        b->fault_address = event->memory_fault.virtual_address;
        b->fault_reasons = event->memory_fault.fault_reason_mask;
        /* Pairs with the acquire loads of every wait, which then stop waiting. */
        __atomic_store_n(&b->faulted, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&open_lock);
    return owner >= 0 ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR;
}

bool devrt_hsa_faulted(struct hsa_backend *b)
{
    return __atomic_load_n(&b->faulted, __ATOMIC_ACQUIRE);
}

/* Adds B to the open GPUs, and registers the handler with the first; false when full. */
bool devrt_hsa_track_open(struct hsa_backend *b)
{
    pthread_mutex_lock(&open_lock);
    size_t slot = 0;
    while (slot < DEVRT_HSA_MAX_OPEN && open_backends[slot])
        ++slot;
    if (slot < DEVRT_HSA_MAX_OPEN) {
        open_backends[slot] = b;
        open_count++;
        /*
         * HSA_STATUS_ERROR says a handler is registered already: ours, while the runtime
         * stayed up since the last device closed, or another user's, which then gets the
         * faults (docs/runtime.md).
         */
        if (!handler_registered) {
            hsa_status_t r = devrt_hsa.hsa_amd_register_system_event_handler(on_system_event, NULL);
            handler_registered = r == HSA_STATUS_SUCCESS || r == HSA_STATUS_ERROR;
        }
    }
    pthread_mutex_unlock(&open_lock);
    return slot < DEVRT_HSA_MAX_OPEN;
}

void devrt_hsa_track_close(struct hsa_backend *b)
{
    pthread_mutex_lock(&open_lock);
    for (size_t i = 0; i < DEVRT_HSA_MAX_OPEN; ++i)
        if (open_backends[i] == b) {
            open_backends[i] = NULL;
            open_count--;
        }
    /* hsa_shut_down may take the runtime, and our registration with it, down. */
    if (open_count == 0)
        handler_registered = false;
    pthread_mutex_unlock(&open_lock);
}

/*
 * A memory fault lost the device. The kernel driver evicted every queue the process has on
 * this GPU, and queues made later start evicted (amdkfd's memory-violation path): the
 * device is lost, as HIP treats it, until it is closed and opened again. The first to see
 * it marks it lost with the fault; every launch then reports that.
 */
int devrt_hsa_fault_lost(devrt_module *module, struct hsa_backend *b)
{
    char text[512], reasons[160];
    pthread_mutex_lock(&open_lock);
    devrt_hsa_fault_reasons(b->fault_reasons, reasons, sizeof reasons);
    snprintf(text, sizeof text, "GPU memory fault at address 0x%" PRIx64 " (%s)", b->fault_address,
             reasons);
    pthread_mutex_unlock(&open_lock);
    devrt_device *device = devrt_module_device(module);
    if (devrt_device_check_lost(device) != DEVRT_SUCCESS)
        return DEVRT_ERROR_DEVICE_LOST;
    FILE *report = devrt_module_report_file(module);
    if (report) {
        fprintf(report, "%s\n", text);
        fflush(report);
    }
    return devrt_device_mark_lost(device, text);
}
