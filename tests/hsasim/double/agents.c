/*
 * The runtime's life, its agents and their ISAs and pools, the system event handler, and
 * the faults a test injects.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsasim.h"

pthread_mutex_t hsasim_lock = PTHREAD_MUTEX_INITIALIZER;

struct hsasim_agent hsasim_cpu = {.type = HSA_DEVICE_TYPE_CPU, .name = "hsasim CPU"};
/* A second NUMA node's CPU, listed when $DEVRT_HSASIM_NEAREST_CPU names the node (0 or 1)
   whose CPU the GPU's PCIe link is attached to. */
struct hsasim_agent hsasim_cpu1 = {.type = HSA_DEVICE_TYPE_CPU, .name = "hsasim CPU, node 1"};
static int nearest_cpu = -1; /* -1: one CPU agent */
struct hsasim_agent hsasim_gpus[HSASIM_MAX_GPUS] = {
    {.type = HSA_DEVICE_TYPE_GPU, .name = "hsasim GPU 0", .gpu = 0},
    {.type = HSA_DEVICE_TYPE_GPU, .name = "hsasim GPU 1", .gpu = 1},
};
unsigned hsasim_gpu_count = 1;

/*
 * Pools in ROCr's order (ROCr's GpuAgent::InitRegionList and CpuAgent::InitRegionList):
 * the GPU's coarse-grained memory, then its LDS; the CPU's fine-grained system memory, its
 * extended-scope fine-grained memory, the kernel argument pool (fine-grained too), then its
 * coarse-grained system memory. ROCm 5's runtime listed only the last two
 * ($DEVRT_HSASIM_PLANT=rocm5_pools): the kernel argument pool was its one fine-grained pool.
 */
/* ROCm 6's hsa_ext_amd.h flag, which the headers devrt builds against may lack. */
#define EXTENDED_SCOPE_FINE_GRAINED 8u
#define GIB (1ull << 30)
#define GPU_POOLS(agent)                                                                           \
    {                                                                                              \
        {&agent, HSA_AMD_SEGMENT_GLOBAL, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, 64 * GIB, \
         true, false},                                                                             \
        {&agent, HSA_AMD_SEGMENT_GROUP, 0, 64 << 10, false, false},                                \
    }
static struct hsasim_pool gpu_pools[HSASIM_MAX_GPUS][2] = {GPU_POOLS(hsasim_gpus[0]),
                                                           GPU_POOLS(hsasim_gpus[1])};
#define CPU_POOLS(agent)                                                                           \
    {                                                                                              \
        {&agent, HSA_AMD_SEGMENT_GLOBAL, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, 256 * GIB,  \
         true, true},                                                                              \
        {&agent, HSA_AMD_SEGMENT_GLOBAL, EXTENDED_SCOPE_FINE_GRAINED, 256 * GIB, true, true},      \
        {&agent, HSA_AMD_SEGMENT_GLOBAL,                                                           \
         HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED |                                            \
             HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,                                         \
         256 * GIB, true, false},                                                                  \
        {&agent, HSA_AMD_SEGMENT_GLOBAL, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,           \
         256 * GIB, true, false},                                                                  \
    }
static struct hsasim_pool cpu_pools[] = CPU_POOLS(hsasim_cpu);
static struct hsasim_pool cpu1_pools[] = CPU_POOLS(hsasim_cpu1);

static int references; /* hsa_init's, less hsa_shut_down's; under hsasim_lock */
/* The system event handlers of this runtime, in the order registered; under hsasim_lock. */
#define HSASIM_MAX_HANDLERS 8
static struct {
    hsa_amd_system_event_callback_t callback;
    void *data;
} handlers[HSASIM_MAX_HANDLERS];
static size_t handler_count;
static bool faults_reported; /* ROCr's fault handler has not yet stopped reporting */
static uint64_t generation;  /* counts runtimes started: what a last one left is dropped */

static uint64_t injected[DEVRT_HSASIM_FAULT_KINDS]; /* under hsasim_lock */

void hsasim_say(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("hsasim: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

__attribute__((visibility("default"))) void devrt_hsasim_inject(enum devrt_hsasim_fault kind,
                                                                uint64_t n)
{
    pthread_mutex_lock(&hsasim_lock);
    if (kind < DEVRT_HSASIM_FAULT_KINDS)
        injected[kind] = n;
    pthread_mutex_unlock(&hsasim_lock);
}

bool hsasim_injected(enum devrt_hsasim_fault kind)
{
    pthread_mutex_lock(&hsasim_lock);
    bool now = injected[kind] && --injected[kind] == 0;
    pthread_mutex_unlock(&hsasim_lock);
    return now;
}

bool hsasim_planted(const char *plant)
{
    const char *planted = getenv("DEVRT_HSASIM_PLANT");
    return planted && !strcmp(planted, plant);
}

/* $DEVRT_HSASIM_INJECT: "KIND:N", for programs that do not call the double themselves. */
static void inject_from_environment(void)
{
    static const char *const kinds[] = {"memory",     "queue",  "loader",
                                        "allocation", "access", "copy"};
    const char *spec = getenv("DEVRT_HSASIM_INJECT");
    if (!spec || !*spec)
        return;
    const char *colon = strchr(spec, ':');
    for (int k = 0; colon && k < DEVRT_HSASIM_FAULT_KINDS; ++k)
        if (strlen(kinds[k]) == (size_t)(colon - spec) &&
            !strncmp(spec, kinds[k], strlen(kinds[k])))
            injected[k] = strtoull(colon + 1, NULL, 10);
}

/* The target the test asked for ($DEVRT_HSASIM_TARGET): gfx90a (wave64) or gfx1100 (wave32),
   on $DEVRT_HSASIM_GPUS GPUs (1, or 2). */
static void choose_target(void)
{
    const char *target = getenv("DEVRT_HSASIM_TARGET");
    for (unsigned i = 0; i < HSASIM_MAX_GPUS; ++i) {
        struct hsasim_agent *gpu = &hsasim_gpus[i];
        if (target && !strcmp(target, "gfx1100")) {
            snprintf(gpu->isa, sizeof gpu->isa, "amdgcn-amd-amdhsa--gfx1100");
            gpu->mach = 0x041; /* EF_AMDGPU_MACH_AMDGCN_GFX1100 */
            gpu->sramecc = gpu->xnack = false;
            gpu->wave_size = 32;
        } else {
            snprintf(gpu->isa, sizeof gpu->isa, "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
            gpu->mach = 0x03f; /* EF_AMDGPU_MACH_AMDGCN_GFX90A */
            gpu->sramecc = true;
            gpu->xnack = false;
            gpu->wave_size = 64;
        }
    }
    const char *gpus = getenv("DEVRT_HSASIM_GPUS");
    hsasim_gpu_count = gpus && !strcmp(gpus, "2") ? 2 : 1;
    hsasim_cpu.wave_size = 0;
    const char *nearest = getenv("DEVRT_HSASIM_NEAREST_CPU");
    nearest_cpu = nearest && (!strcmp(nearest, "0") || !strcmp(nearest, "1")) ? atoi(nearest) : -1;
}

bool hsasim_is_gpu(const struct hsasim_agent *agent)
{
    return agent >= hsasim_gpus && agent < hsasim_gpus + hsasim_gpu_count;
}

hsa_status_t hsa_init(void)
{
    pthread_mutex_lock(&hsasim_lock);
    if (references++ == 0) {
        /* A new runtime binds its handlers anew; the kernel driver's process stays (evicted). */
        choose_target();
        __atomic_add_fetch(&generation, 1u, __ATOMIC_RELEASE);
        handler_count = 0;
        faults_reported = true;
        /* Faults a test injected stay armed across runtimes: a test may inject before an
           open. The environment's are read with the first. */
        static bool read_environment;
        if (!read_environment)
            inject_from_environment();
        read_environment = true;
    }
    pthread_mutex_unlock(&hsasim_lock);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_shut_down(void)
{
    pthread_mutex_lock(&hsasim_lock);
    hsa_status_t status = references > 0 ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (references > 0)
        references--;
    pthread_mutex_unlock(&hsasim_lock);
    return status;
}

hsa_status_t hsa_status_string(hsa_status_t status, const char **text)
{
    static const struct {
        hsa_status_t status;
        const char *text;
    } names[] = {
        {HSA_STATUS_SUCCESS, "HSA_STATUS_SUCCESS"},
        {HSA_STATUS_ERROR, "HSA_STATUS_ERROR: a generic error"},
        {HSA_STATUS_ERROR_INVALID_ARGUMENT, "HSA_STATUS_ERROR_INVALID_ARGUMENT"},
        {HSA_STATUS_ERROR_OUT_OF_RESOURCES,
         "HSA_STATUS_ERROR_OUT_OF_RESOURCES: the runtime failed to allocate the resources"},
        {HSA_STATUS_ERROR_INVALID_AGENT, "HSA_STATUS_ERROR_INVALID_AGENT"},
        {HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
         "HSA_STATUS_ERROR_INVALID_CODE_OBJECT: the code object is invalid"},
        {HSA_STATUS_ERROR_INVALID_ISA_NAME, "HSA_STATUS_ERROR_INVALID_ISA_NAME"},
        {HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS, "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS"},
        {HSA_STATUS_ERROR_INVALID_SYMBOL_NAME, "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME"},
        {HSA_STATUS_ERROR_NOT_INITIALIZED, "HSA_STATUS_ERROR_NOT_INITIALIZED"},
        {HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT"},
        {(hsa_status_t)HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
         "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: the packet processor met an illegal instruction"},
        {(hsa_status_t)HSA_STATUS_ERROR_MEMORY_FAULT, "HSA_STATUS_ERROR_MEMORY_FAULT"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
        if (names[i].status == status) {
            *text = names[i].text;
            return HSA_STATUS_SUCCESS;
        }
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_system_get_info(hsa_system_info_t attribute, void *value)
{
    switch (attribute) {
    case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY: *(uint64_t *)value = 1000000000u; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

struct hsasim_agent *hsasim_agent(hsa_agent_t agent)
{
    if (agent.handle == (uint64_t)(uintptr_t)&hsasim_cpu)
        return &hsasim_cpu;
    for (unsigned i = 0; i < hsasim_gpu_count; ++i)
        if (agent.handle == (uint64_t)(uintptr_t)&hsasim_gpus[i])
            return &hsasim_gpus[i];
    if (agent.handle == (uint64_t)(uintptr_t)&hsasim_cpu1 && nearest_cpu >= 0)
        return &hsasim_cpu1;
    return NULL;
}

/* ROCr lists the CPU agents before the GPUs (Runtime::RegisterAgent's order). */
hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t, void *), void *data)
{
    if (!references)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    struct hsasim_agent *order[] = {&hsasim_cpu, &hsasim_cpu1, &hsasim_gpus[0], &hsasim_gpus[1]};
    for (size_t i = 0; i < sizeof order / sizeof *order; ++i) {
        if ((order[i] == &hsasim_cpu1 && nearest_cpu < 0) ||
            (order[i]->type == HSA_DEVICE_TYPE_GPU && !hsasim_is_gpu(order[i])))
            continue;
        hsa_status_t status = callback((hsa_agent_t){(uint64_t)(uintptr_t)order[i]}, data);
        if (status != HSA_STATUS_SUCCESS)
            return status == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : status;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_get_info(hsa_agent_t handle, hsa_agent_info_t attribute, void *value)
{
    struct hsasim_agent *agent = hsasim_agent(handle);
    if (!agent)
        return HSA_STATUS_ERROR_INVALID_AGENT;
    switch ((int)attribute) {
    case HSA_AGENT_INFO_DEVICE: *(hsa_device_type_t *)value = agent->type; break;
    case HSA_AGENT_INFO_NAME: snprintf(value, 64, "%s", agent->name); break;
    case HSA_AGENT_INFO_WAVEFRONT_SIZE:
        if (agent->type != HSA_DEVICE_TYPE_GPU)
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        *(uint32_t *)value = agent->wave_size;
        break;
    /* The kernel driver's topology numbers its nodes from the CPUs' (ROCr's node_id). */
    case HSA_AMD_AGENT_INFO_DRIVER_NODE_ID:
        *(uint32_t *)value = hsasim_is_gpu(agent)    ? (nearest_cpu < 0 ? 1u : 2u) + agent->gpu
                             : agent == &hsasim_cpu1 ? 1u
                                                     : 0u;
        break;
    /* No PCI device: devrt_pci_local_cpus then finds no list, as on a machine without sysfs. */
    case HSA_AMD_AGENT_INFO_BDFID: *(uint32_t *)value = 0xffff; break;
    case HSA_AMD_AGENT_INFO_DOMAIN: *(uint32_t *)value = 0xffff; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

/* The GPU's one ISA; its handle is the agent's. */
hsa_status_t hsa_agent_iterate_isas(hsa_agent_t handle, hsa_status_t (*callback)(hsa_isa_t, void *),
                                    void *data)
{
    struct hsasim_agent *agent = hsasim_agent(handle);
    if (!agent)
        return HSA_STATUS_ERROR_INVALID_AGENT;
    if (agent->type != HSA_DEVICE_TYPE_GPU)
        return HSA_STATUS_SUCCESS;
    hsa_status_t status = callback((hsa_isa_t){handle.handle}, data);
    return status == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : status;
}

hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, hsa_isa_info_t attribute, void *value)
{
    struct hsasim_agent *agent = hsasim_agent((hsa_agent_t){isa.handle});
    if (!agent || agent->type != HSA_DEVICE_TYPE_GPU)
        return HSA_STATUS_ERROR_INVALID_ISA;
    switch (attribute) {
    case HSA_ISA_INFO_NAME_LENGTH: *(uint32_t *)value = (uint32_t)strlen(agent->isa); break;
    /* ROCr copies the name without its terminator (Isa::GetInfo). */
    case HSA_ISA_INFO_NAME: memcpy(value, agent->isa, strlen(agent->isa)); break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_agent_iterate_memory_pools(
    hsa_agent_t handle, hsa_status_t (*callback)(hsa_amd_memory_pool_t, void *), void *data)
{
    struct hsasim_agent *agent = hsasim_agent(handle);
    if (!agent)
        return HSA_STATUS_ERROR_INVALID_AGENT;
    struct hsasim_pool *pools = hsasim_is_gpu(agent)    ? gpu_pools[agent->gpu]
                                : agent == &hsasim_cpu1 ? cpu1_pools
                                                        : cpu_pools;
    size_t count = hsasim_is_gpu(agent) ? sizeof gpu_pools[0] / sizeof *gpu_pools[0]
                                        : sizeof cpu_pools / sizeof *cpu_pools;
    bool rocm5 = hsasim_planted("rocm5_pools");
    for (size_t i = 0; i < count; ++i) {
        if (rocm5 && pools[i].since_rocm6)
            continue;
        hsa_status_t status =
            callback((hsa_amd_memory_pool_t){(uint64_t)(uintptr_t)&pools[i]}, data);
        if (status != HSA_STATUS_SUCCESS)
            return status == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : status;
    }
    return HSA_STATUS_SUCCESS;
}

const struct hsasim_pool *hsasim_pool(hsa_amd_memory_pool_t handle)
{
    for (unsigned g = 0; g < hsasim_gpu_count; ++g)
        for (size_t i = 0; i < sizeof gpu_pools[g] / sizeof *gpu_pools[g]; ++i)
            if (handle.handle == (uint64_t)(uintptr_t)&gpu_pools[g][i])
                return &gpu_pools[g][i];
    for (size_t i = 0; i < sizeof cpu_pools / sizeof *cpu_pools; ++i) {
        if (handle.handle == (uint64_t)(uintptr_t)&cpu_pools[i])
            return &cpu_pools[i];
        if (handle.handle == (uint64_t)(uintptr_t)&cpu1_pools[i] && nearest_cpu >= 0)
            return &cpu1_pools[i];
    }
    return NULL;
}

/*
 * The link from an agent to another agent's pool: one hop, as ROCr reports a GPU's PCIe link
 * to system memory (GpuAgent's io links from the kernel driver's topology), its NUMA
 * distance smaller to the node the GPU is attached to.
 */
hsa_status_t hsa_amd_agent_memory_pool_get_info(hsa_agent_t handle,
                                                hsa_amd_memory_pool_t pool_handle,
                                                hsa_amd_agent_memory_pool_info_t attribute,
                                                void *value)
{
    struct hsasim_agent *agent = hsasim_agent(handle);
    const struct hsasim_pool *pool = hsasim_pool(pool_handle);
    if (!agent || !pool)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    uint32_t hops = pool->owner == agent ? 0 : 1;
    switch (attribute) {
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS: *(uint32_t *)value = hops; break;
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO:
        if (hops) {
            int node = pool->owner == &hsasim_cpu1 ? 1 : 0;
            hsa_amd_memory_pool_link_info_t link = {
                .link_type = HSA_AMD_LINK_INFO_TYPE_PCIE,
                .numa_distance = nearest_cpu < 0 || node == nearest_cpu ? 20 : 32};
            memcpy(value, &link, sizeof link);
        }
        break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t handle,
                                          hsa_amd_memory_pool_info_t attribute, void *value)
{
    const struct hsasim_pool *pool = hsasim_pool(handle);
    if (!pool)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    switch (attribute) {
    case HSA_AMD_MEMORY_POOL_INFO_SEGMENT: *(hsa_amd_segment_t *)value = pool->segment; break;
    case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
        if (pool->segment != HSA_AMD_SEGMENT_GLOBAL)
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        *(uint32_t *)value = pool->flags;
        break;
    case HSA_AMD_MEMORY_POOL_INFO_SIZE: *(size_t *)value = pool->size; break;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED:
        *(bool *)value = pool->alloc_allowed;
        break;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT: *(size_t *)value = 4096; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

/*
 * ROCr keeps every handler registered, in order, and none can be removed
 * (Runtime::SetCustomSystemEventHandler appends). $DEVRT_HSASIM_PLANT=one_handler plants the
 * model this double had before, which refused a second handler.
 */
hsa_status_t hsa_amd_register_system_event_handler(hsa_amd_system_event_callback_t callback,
                                                   void *data)
{
    bool one = hsasim_planted("one_handler");
    pthread_mutex_lock(&hsasim_lock);
    hsa_status_t status = HSA_STATUS_SUCCESS;
    if (one && handler_count > 0)
        status = HSA_STATUS_ERROR;
    else if (handler_count == HSASIM_MAX_HANDLERS)
        status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    else
        handlers[handler_count++] = (__typeof__(handlers[0])){callback, data};
    pthread_mutex_unlock(&hsasim_lock);
    return status;
}

uint64_t hsasim_generation(void)
{
    return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

/*
 * A GPU's queues evicted by a memory fault stay so for the rest of the process: amdkfd keeps
 * one process object for the life of the address space (kfd_create_process finds the one an
 * earlier open of /dev/kfd made), a fault evicts its queues on that GPU
 * (kfd_dqm_evict_pasid), queues made later start evicted (create_queue_cpsch: is_evicted
 * follows qpd->evicted), and nothing restores them. So a runtime started anew (hsa_shut_down,
 * then hsa_init) finds the GPU as the fault left it; the other GPU runs on.
 */
bool hsasim_gpu_evicted(const struct hsasim_agent *gpu)
{
    return __atomic_load_n(&gpu->evicted, __ATOMIC_ACQUIRE);
}

void hsasim_memory_fault(struct hsasim_agent *gpu, uint64_t address)
{
    __atomic_store_n(&gpu->evicted, true, __ATOMIC_RELEASE);
    hsasim_preempt_queues(gpu);
    pthread_mutex_lock(&hsasim_lock);
    bool reported = faults_reported;
    __typeof__(handlers) called;
    size_t count = handler_count;
    memcpy(called, handlers, sizeof called);
    /* ROCr's VMFaultHandler reports one fault: its signal handler is not kept after it. */
    faults_reported = false;
    pthread_mutex_unlock(&hsasim_lock);
    if (!reported)
        return;
    hsa_amd_event_t event = {.event_type = HSA_AMD_GPU_MEMORY_FAULT_EVENT};
    event.memory_fault.agent = (hsa_agent_t){(uint64_t)(uintptr_t)gpu};
    event.memory_fault.virtual_address = address;
    event.memory_fault.fault_reason_mask = HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT;
    /* Runtime::VMFaultHandler calls every handler; one that returns success claims it. */
    bool claimed = false;
    for (size_t i = 0; i < count; ++i)
        claimed |= called[i].callback(&event, called[i].data) == HSA_STATUS_SUCCESS;
    if (claimed)
        return;
    /* Runtime::VMFaultHandler: unclaimed, the fault ends the process. */
    hsasim_say("memory fault at address 0x%llx on GPU %u, claimed by no handler: the HSA runtime "
               "aborts the process",
               (unsigned long long)address, gpu->gpu);
    abort();
}

__attribute__((visibility("default"))) void devrt_hsasim_fault_at(unsigned gpu, uint64_t address)
{
    if (gpu >= hsasim_gpu_count) {
        hsasim_say("a fault asked for on GPU %u, of %u", gpu, hsasim_gpu_count);
        abort();
    }
    hsasim_memory_fault(&hsasim_gpus[gpu], address);
}

__attribute__((visibility("default"))) void devrt_hsasim_foreign_fault(void)
{
    hsasim_memory_fault(&hsasim_gpus[0], 0xf0e1d2c3b4a50000ull);
}
