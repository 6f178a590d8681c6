/*
 * The HSA backend's memory decisions (host/backends/hsa_memory.c) against records of the
 * kinds hsa_amd_pointer_info and the system event handler get, made up here: no GPU is
 * needed. Exits 0 when every case holds, 1 otherwise; `hsa_memory_test control` plants
 * bugs (the range check dropped; any fault taken as ours; the GPU's fine-grained pool
 * taken for the CPU's) and must fail.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "hsa_memory.h"

static bool planted;

static enum devrt_hsa_access access_of(const hsa_amd_pointer_info_t *info, uintptr_t address,
                                       size_t size, void **host)
{
    if (planted && info->type != HSA_EXT_POINTER_TYPE_UNKNOWN)
        size = 1, address = (uintptr_t)info->agentBaseAddress;
    return devrt_hsa_access(info, address, size, host);
}

static int owner_of(const hsa_amd_event_t *event, const uint64_t *gpus, size_t count)
{
    if (planted)
        return count ? 0 : -1;
    return devrt_hsa_fault_owner(event, gpus, count);
}

static hsa_amd_event_t fault(uint64_t agent, uint64_t address, uint32_t reasons)
{
    hsa_amd_event_t event = {.event_type = HSA_AMD_GPU_MEMORY_FAULT_EVENT};
    event.memory_fault.agent.handle = agent;
    event.memory_fault.virtual_address = address;
    event.memory_fault.fault_reason_mask = reasons;
    return event;
}

/* The system event handler's decision: which of our GPUs faulted, if any. */
static void test_faults(void)
{
    const uint64_t gpus[4] = {0, 0xa000, 0, 0xb000};
    hsa_amd_event_t ours = fault(0xb000, 0x1234000, HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT);
    CHECK(owner_of(&ours, gpus, 4) == 3, "ours: %d", owner_of(&ours, gpus, 4));
    hsa_amd_event_t first = fault(0xa000, 0, 0);
    CHECK(owner_of(&first, gpus, 4) == 1, "first");
    /* Another user's GPU, and an empty slot's zero handle: the runtime's default stands. */
    hsa_amd_event_t other = fault(0xc000, 0x1234000, 0);
    CHECK(owner_of(&other, gpus, 4) == -1, "another GPU's fault taken");
    hsa_amd_event_t zero = fault(0, 0, 0);
    CHECK(owner_of(&zero, gpus, 4) == -1, "a zero handle matched an empty slot");
    hsa_amd_event_t none = ours;
    none.event_type = (hsa_amd_event_type_t)(HSA_AMD_GPU_MEMORY_FAULT_EVENT + 1);
    CHECK(owner_of(&none, gpus, 4) == -1, "not a memory fault");
    CHECK(owner_of(&ours, gpus, 0) == -1, "no GPU open");

    char text[160];
    devrt_hsa_fault_reasons(HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT | HSA_AMD_MEMORY_FAULT_IMPRECISE,
                            text, sizeof text);
    CHECK(!strcmp(text, "page not present, address may be inexact"), "'%s'", text);
    devrt_hsa_fault_reasons(0, text, sizeof text);
    CHECK(!strcmp(text, "reason 0x0"), "'%s'", text);
    devrt_hsa_fault_reasons(HSA_AMD_MEMORY_FAULT_READ_ONLY | 1u << 12, text, sizeof text);
    CHECK(!strcmp(text, "write to a read-only page, reason 0x1000"), "'%s'", text);
    devrt_hsa_fault_reasons(~0u, text, 12);
    CHECK(strlen(text) < 12, "'%s' overflows", text);
}

static struct devrt_hsa_pool pool(uint64_t handle, uint32_t flags, size_t size)
{
    return (struct devrt_hsa_pool){handle, HSA_AMD_SEGMENT_GLOBAL, flags, size, true};
}

/* The choice of pools; the control falls back to the GPU's fine-grained pool, as hsa.c did. */
static int choose(const struct devrt_hsa_pool *gpu, size_t gpu_count,
                  const struct devrt_hsa_pool *cpu, size_t cpu_count, struct devrt_hsa_pools *out,
                  char *why)
{
    if (planted) {
        struct devrt_hsa_pool both[16];
        memcpy(both, cpu, cpu_count * sizeof *cpu);
        memcpy(both + cpu_count, gpu, gpu_count * sizeof *gpu);
        return devrt_hsa_choose_pools(gpu, gpu_count, both, cpu_count + gpu_count, out, why, 256);
    }
    return devrt_hsa_choose_pools(gpu, gpu_count, cpu, cpu_count, out, why, 256);
}

static void test_pools(void)
{
    const uint32_t fine = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED;
    const uint32_t coarse = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
    const uint32_t kernarg = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT;
    struct devrt_hsa_pools out;
    char why[256] = "";
    /* A discrete GPU as ROCr lists it: VRAM coarse and fine, LDS; system kernarg, fine, coarse. */
    struct devrt_hsa_pool gpu[] = {pool(1, coarse, 64ull << 30),
                                   pool(2, fine, 64ull << 30),
                                   {3, HSA_AMD_SEGMENT_GROUP, 0, 65536, false}};
    struct devrt_hsa_pool cpu[] = {pool(11, fine | kernarg, 1ull << 40), pool(12, fine, 1ull << 40),
                                   pool(13, coarse, 1ull << 40)};
    CHECK(choose(gpu, 3, cpu, 3, &out, why) == 0 && out.coarse == 1 && out.fine == 12 &&
              out.kernarg == 11 && out.memory_bytes == 64ull << 30 &&
              out.group_segment_limit == 65536,
          "discrete: coarse %llu fine %llu kernarg %llu (%s)", (unsigned long long)out.coarse,
          (unsigned long long)out.fine, (unsigned long long)out.kernarg, why);
    /* Only the kernel argument pool is fine-grained system memory: it serves both. */
    CHECK(choose(gpu, 3, cpu, 1, &out, why) == 0 && out.fine == 11 && out.kernarg == 11,
          "kernarg only: fine %llu", (unsigned long long)out.fine);
    /* No fine-grained system memory: refused, never the GPU's fine-grained VRAM. */
    struct devrt_hsa_pool cpu_coarse[] = {pool(13, coarse, 1ull << 40)};
    int status = choose(gpu, 3, cpu_coarse, 1, &out, why);
    CHECK(status == -1 && strstr(why, "CPU agent has no fine-grained memory pool"),
          "no system fine-grained pool: status %d, fine %llu, '%s'", status,
          (unsigned long long)out.fine, why);
    /* A pool the runtime will not allocate from does not count. */
    struct devrt_hsa_pool cpu_locked[] = {pool(11, fine | kernarg, 1 << 20),
                                          pool(12, fine, 1 << 20)};
    cpu_locked[1].alloc_allowed = false;
    CHECK(choose(gpu, 3, cpu_locked, 2, &out, why) == 0 && out.fine == 11, "not allocatable");
    /* The GPU's own memory must be the GPU's: the system's coarse pool is not it. */
    CHECK(choose(gpu + 1, 2, cpu, 3, &out, why) == -1 && strstr(why, "no coarse-grained"),
          "no VRAM: '%s'", why);
    struct devrt_hsa_pool cpu_plain[] = {pool(12, fine, 1 << 20)};
    CHECK(choose(gpu, 3, cpu_plain, 1, &out, why) == -1 && strstr(why, "kernel argument"),
          "no kernarg: '%s'", why);
}

static hsa_amd_pointer_info_t record(hsa_amd_pointer_type_t type, uintptr_t agent, uintptr_t host,
                                     size_t bytes, uint32_t flags)
{
    return (hsa_amd_pointer_info_t){.size = sizeof(hsa_amd_pointer_info_t),
                                    .type = type,
                                    .agentBaseAddress = (void *)agent,
                                    .hostBaseAddress = (void *)host,
                                    .sizeInBytes = bytes,
                                    .global_flags = flags};
}

int main(int argc, char **argv)
{
    planted = argc > 1 && !strcmp(argv[1], "control");
    void *host = NULL;
    /* Not the runtime's: a stack string, a pointer made up. */
    hsa_amd_pointer_info_t unknown = record(HSA_EXT_POINTER_TYPE_UNKNOWN, 0, 0, 0, 0);
    CHECK(access_of(&unknown, 0x7ffd0000, 8, &host) == DEVRT_HSA_ACCESS_NONE, "unknown");

    const uint32_t fine = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED;
    const uint32_t coarse = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
    /* Fine-grained system memory: the host's own loads, at the host's address. */
    hsa_amd_pointer_info_t system = record(HSA_EXT_POINTER_TYPE_HSA, 0x10000, 0x10000, 4096, fine);
    CHECK(access_of(&system, 0x10010, 16, &host) == DEVRT_HSA_ACCESS_HOST &&
              host == (void *)0x10010,
          "fine-grained: %p", host);
    /* The last bytes of the allocation, and one past it. */
    CHECK(access_of(&system, 0x10000 + 4096 - 8, 8, &host) == DEVRT_HSA_ACCESS_HOST, "last");
    CHECK(access_of(&system, 0x10000 + 4096 - 8, 9, &host) == DEVRT_HSA_ACCESS_NONE,
          "one past the end");
    CHECK(access_of(&system, 0xfff0, 16, &host) == DEVRT_HSA_ACCESS_NONE, "before the start");
    CHECK(access_of(&system, 0x10000, SIZE_MAX, &host) == DEVRT_HSA_ACCESS_NONE, "huge size");
    CHECK(access_of(&system, UINTPTR_MAX - 2, 8, &host) == DEVRT_HSA_ACCESS_NONE, "wraps");
    /* Host memory locked for the GPU: the host address differs from the agent's. */
    hsa_amd_pointer_info_t locked =
        record(HSA_EXT_POINTER_TYPE_LOCKED, 0x200000, 0x900000, 4096, 0);
    CHECK(access_of(&locked, 0x200100, 4, &host) == DEVRT_HSA_ACCESS_HOST &&
              host == (void *)0x900100,
          "locked: %p", host);
    /* The GPU's coarse-grained memory: a copy by the runtime, whatever hostBaseAddress says. */
    hsa_amd_pointer_info_t vram =
        record(HSA_EXT_POINTER_TYPE_HSA, 0x40000000, 0x40000000, 1 << 20, coarse);
    CHECK(access_of(&vram, 0x40000040, 64, &host) == DEVRT_HSA_ACCESS_DEVICE, "coarse");
    CHECK(access_of(&vram, 0x40000000 + (1 << 20), 1, &host) == DEVRT_HSA_ACCESS_NONE,
          "past coarse");
    /* An older runtime's record that ends before global_flags: the grain is unknown. */
    hsa_amd_pointer_info_t old = system;
    old.size = (uint32_t)offsetof(hsa_amd_pointer_info_t, global_flags);
    CHECK(access_of(&old, 0x10010, 16, &host) == DEVRT_HSA_ACCESS_DEVICE, "old record");
    test_faults();
    test_pools();
    printf("%s: %d failure%s\n", planted ? "control" : "access", failures,
           failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
