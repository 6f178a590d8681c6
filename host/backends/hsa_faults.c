/*
 * Memory faults on the HSA backend's GPUs. The runtime takes system-event handlers per
 * process and gives them no device, so one handler serves every GPU devrt has open and
 * finds the faulting one in a table of them; a fault it claims makes the device lost.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "hsa_backend.h"
#include "hsa_memory.h"

/*
 * The GPUs devrt has open, for the runtime's system event handler, which gets no device:
 * the runtime keeps every handler registered, calls each on an event and removes none
 * (ROCr's Runtime::SetCustomSystemEventHandler, VMFaultHandler), so devrt registers one
 * per run of the runtime, which serves every device and finds the faulting one here.
 */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hsa_backend *open_backends[DEVRT_HSA_MAX_OPEN];
static size_t open_count;
static bool handler_registered;

/*
 * The GPUs a memory fault evicted in this process, by the kernel driver's node id, under
 * open_lock. amdkfd keeps one process object for the life of the address space
 * (kfd_create_process finds the one an earlier open of /dev/kfd made), a fault evicts the
 * process's queues on the GPU (kfd_dqm_evict_pasid), queues made later start evicted
 * (create_queue_cpsch: is_evicted follows qpd->evicted) and nothing restores them: the GPU
 * is lost to this process, whatever becomes of the runtime, as a CUDA GPU after a sticky
 * error is. Every fault is kept, claimed or not: the eviction is the same.
 */
struct lost_gpu {
    uint32_t node;
    bool unreported; /* found stopped by a probe: no address, no reasons */
    uint64_t address;
    uint32_t reasons;
};
static struct lost_gpu lost_gpus[DEVRT_HSA_MAX_OPEN];
static size_t lost_count;

/*
 * The runtime reported its memory fault, and reports no more: ROCr's VMFaultHandler is not
 * kept after the first (runtime.cpp), so a later fault on another GPU evicts that GPU's
 * queues without a word, and only a probe of the GPU finds it (devrt_hsa_stopped). Atomic.
 */
static bool reports_over;

/* LOST among the lost GPUs, unless its node is there. Under open_lock. */
static void remember_lost(struct lost_gpu lost)
{
    for (size_t i = 0; i < lost_count; ++i)
        if (lost_gpus[i].node == lost.node)
            return;
    if (lost_count < DEVRT_HSA_MAX_OPEN)
        lost_gpus[lost_count++] = lost;
}

/* The fault EVENT's GPU among the lost, with the GPU's node from B when devrt has it open. */
static void remember_fault(const hsa_amd_event_t *event, const struct hsa_backend *b)
{
    uint32_t node = 0;
    if (b)
        node = b->node;
    else if (devrt_hsa.hsa_agent_get_info(event->memory_fault.agent,
                                          (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DRIVER_NODE_ID,
                                          &node) != HSA_STATUS_SUCCESS)
        return;
    remember_lost((struct lost_gpu){
        .node = node,
        .address = event->memory_fault.virtual_address,
        .reasons = event->memory_fault.fault_reason_mask,
    });
}

int devrt_hsa_lost_earlier(uint32_t node, int index)
{
    pthread_mutex_lock(&open_lock);
    const struct lost_gpu *lost = NULL;
    for (size_t i = 0; i < lost_count && !lost; ++i)
        if (lost_gpus[i].node == node)
            lost = &lost_gpus[i];
    int status = DEVRT_SUCCESS;
    if (lost && lost->unreported) {
        status = devrt_fail(DEVRT_ERROR_DEVICE_LOST,
                            "HSA: AMD GPU %d stopped running this process's work earlier in the "
                            "process, as after a memory fault the HSA runtime reports no more "
                            "(it reports one a process), and the kernel driver keeps the "
                            "process's queues on it evicted: only a new process can use the GPU "
                            "again",
                            index);
    } else if (lost) {
        char reasons[160];
        devrt_hsa_fault_reasons(lost->reasons, reasons, sizeof reasons);
        status = devrt_fail(DEVRT_ERROR_DEVICE_LOST,
                            "HSA: AMD GPU %d had a memory fault at address 0x%" PRIx64
                            " (%s) earlier in this process, and the kernel driver keeps the "
                            "process's queues on it evicted: only a new process can use the "
                            "GPU again",
                            index, lost->address, reasons);
    }
    pthread_mutex_unlock(&open_lock);
    return status;
}

/*
 * B's launch that runs, if any: the oldest enqueued that has not ended. A fault on the GPU
 * may be its; the barrier bits run one launch of the queue at a time, and the list is newest
 * first.
 */
static const struct hsa_launch *running_on(struct hsa_backend *b)
{
    pthread_mutex_lock(&b->launches_lock);
    const struct hsa_launch *running = NULL;
    for (const struct hsa_launch *l = b->launches; l; l = l->next)
        if (devrt_hsa.hsa_signal_load_scacquire(l->done) > 0)
            running = l;
    pthread_mutex_unlock(&b->launches_lock);
    return running;
}

bool devrt_hsa_own(struct hsa_backend *b, const void *base, size_t size)
{
    pthread_mutex_lock(&b->ranges_lock);
    bool room = b->range_count < b->range_capacity;
    if (!room) {
        size_t capacity = b->range_capacity ? 2 * b->range_capacity : 64;
        struct hsa_range *grown = realloc(b->ranges, capacity * sizeof *grown);
        if (grown) {
            b->ranges = grown;
            b->range_capacity = capacity;
            room = true;
        }
    }
    if (room)
        b->ranges[b->range_count++] = (struct hsa_range){(uintptr_t)base, size};
    pthread_mutex_unlock(&b->ranges_lock);
    return room;
}

void devrt_hsa_disown(struct hsa_backend *b, const void *base)
{
    pthread_mutex_lock(&b->ranges_lock);
    for (size_t i = 0; i < b->range_count; ++i)
        if (b->ranges[i].base == (uintptr_t)base) {
            b->ranges[i] = b->ranges[--b->range_count];
            break;
        }
    pthread_mutex_unlock(&b->ranges_lock);
}

/* Whether ADDRESS lies in devrt's memory on any GPU open. Under open_lock. */
static bool devrts(uint64_t address)
{
    bool found = false;
    for (size_t i = 0; i < DEVRT_HSA_MAX_OPEN && !found; ++i) {
        struct hsa_backend *b = open_backends[i];
        if (!b)
            continue;
        pthread_mutex_lock(&b->ranges_lock);
        for (size_t r = 0; r < b->range_count && !found; ++r)
            found = address - b->ranges[r].base < b->ranges[r].size;
        pthread_mutex_unlock(&b->ranges_lock);
    }
    return found;
}

/*
 * Where a fault's ADDRESS lies: devrt's memory, no allocation at all (a wild pointer, which
 * may be a devrt kernel's), or NULL: an allocation of another user of the runtime in the
 * process, whose fault it is even while a kernel of devrt's runs.
 */
static const char *fault_place(uint64_t address)
{
    if (devrts(address))
        return "devrt's memory";
    hsa_amd_pointer_info_t info = {.size = sizeof info};
    if (devrt_hsa.hsa_amd_pointer_info((void *)(uintptr_t)address, &info, NULL, NULL, NULL) ==
            HSA_STATUS_SUCCESS &&
        info.type != HSA_EXT_POINTER_TYPE_UNKNOWN)
        return NULL;
    return "no allocation";
}

/*
 * A memory fault on one of our GPUs while a launch of devrt's runs there, at an address in
 * devrt's memory or in none, is devrt's: the device is lost, and returning success keeps
 * ROCr from aborting the process. A fault on a GPU where no launch of devrt's runs, or at an
 * address in another user's allocation, is another user's of the GPU (a HIP kernel of the
 * same process): ROCr's default stands (it ends the process), and claiming it would leave
 * that user's queues evicted and its waits hanging. ROCr reports one fault only (VMFaultHandler's
 * signal handler is not kept after it): the first is final. Either way the GPU is lost to later
 * opens.
 */
static hsa_status_t on_system_event(const hsa_amd_event_t *event, void *data)
{
    (void)data;
    pthread_mutex_lock(&open_lock);
    uint64_t gpus[DEVRT_HSA_MAX_OPEN];
    for (size_t i = 0; i < DEVRT_HSA_MAX_OPEN; ++i)
        gpus[i] = open_backends[i] ? open_backends[i]->gpu.handle : 0;
    int owner = devrt_hsa_fault_owner(event, gpus, DEVRT_HSA_MAX_OPEN);
    if (event->event_type == HSA_AMD_GPU_MEMORY_FAULT_EVENT) {
        remember_fault(event, owner >= 0 ? open_backends[owner] : NULL);
        __atomic_store_n(&reports_over, true, __ATOMIC_RELEASE);
    }
    const struct hsa_launch *running = owner >= 0 ? running_on(open_backends[owner]) : NULL;
    const char *place = running ? fault_place(event->memory_fault.virtual_address) : NULL;
    if (!place)
        owner = -1;
    if (owner >= 0) {
        struct hsa_backend *b = open_backends[owner];
        b->fault_address = event->memory_fault.virtual_address;
        b->fault_reasons = event->memory_fault.fault_reason_mask;
        /* The launch may be released once the fault is seen: its names are copied. */
        snprintf(b->fault_kernel, sizeof b->fault_kernel, "%s", running->kernel);
        b->fault_launch = running->id;
        b->fault_place = place;
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

/*
 * Whether B's GPU faulted: reported, or, once the runtime reports no more faults, found
 * stopped by a probe (devrt_hsa_gpu_runs); then it is lost as a reported fault makes it,
 * naming the launch that ran, and stays lost to later opens.
 */
bool devrt_hsa_stopped(struct hsa_backend *b)
{
    if (devrt_hsa_faulted(b))
        return true;
    /* Pairs with on_system_event's release store. */
    if (!__atomic_load_n(&reports_over, __ATOMIC_ACQUIRE) || devrt_hsa_gpu_runs(b))
        return false;
    pthread_mutex_lock(&open_lock);
    if (!b->faulted) {
        const struct hsa_launch *running = running_on(b);
        snprintf(b->fault_kernel, sizeof b->fault_kernel, "%s",
                 running ? running->kernel : "(none)");
        b->fault_launch = running ? running->id : 0;
        b->unreported = true;
        remember_lost((struct lost_gpu){.node = b->node, .unreported = true});
        /* Pairs with the acquire loads of every wait, which then stop waiting. */
        __atomic_store_n(&b->faulted, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&open_lock);
    return true;
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
         * Once per run of the runtime, as far as devrt can tell: where another user kept the
         * runtime up across devrt's last close, it keeps both registrations and calls both,
         * and the second call of on_system_event finds its work done.
         */
        if (!handler_registered)
            handler_registered = devrt_hsa.hsa_amd_register_system_event_handler(
                                     on_system_event, NULL) == HSA_STATUS_SUCCESS;
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
 * device is lost for the rest of the process (devrt_hsa_lost_earlier). The first to see it
 * marks it lost with the fault and the launch that ran; every launch then reports that.
 */
int devrt_hsa_fault_lost(devrt_module *module, struct hsa_backend *b)
{
    return devrt_hsa_lose(devrt_module_device(module), b, devrt_module_report_file(module));
}

int devrt_hsa_lose(devrt_device *device, struct hsa_backend *b, FILE *report)
{
    char text[512], reasons[160];
    pthread_mutex_lock(&open_lock);
    devrt_hsa_fault_reasons(b->fault_reasons, reasons, sizeof reasons);
    if (b->unreported)
        snprintf(text, sizeof text,
                 "kernel %s (launch %" PRIu64 ") faulted, or another kernel did: the GPU "
                 "stopped running this process's work (a probe packet did not complete in %d "
                 "ms), as after a memory fault, which the HSA runtime did not report (it "
                 "reports one a process)",
                 b->fault_kernel, b->fault_launch, DEVRT_HSA_PROBE_MS);
    else if (b->fault_launch)
        snprintf(text, sizeof text,
                 "kernel %s (launch %" PRIu64 ") faulted: GPU memory fault at address 0x%" PRIx64
                 ", in %s (%s)",
                 b->fault_kernel, b->fault_launch, b->fault_address, b->fault_place, reasons);
    else
        snprintf(text, sizeof text,
                 "kernel %s faulted: GPU memory fault at address 0x%" PRIx64 ", in %s (%s)",
                 b->fault_kernel, b->fault_address, b->fault_place, reasons);
    pthread_mutex_unlock(&open_lock);
    if (devrt_device_check_lost(device) != DEVRT_SUCCESS)
        return DEVRT_ERROR_DEVICE_LOST;
    if (report) {
        fprintf(report, "%s\n", text);
        fflush(report);
    }
    return devrt_device_mark_lost(device, text);
}
