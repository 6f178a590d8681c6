/*
 * The dispatch function's refusals that a real code object does not reach through
 * devrt-run --explain: the metadata of tests/dispatch/kernels.c (code object version 5) is
 * read, then one field of a copy is altered per case. Each case has its control: the
 * unaltered metadata dispatches.
 *
 *   dispatch_test IMAGE_V5
 *
 * Exits 0 when every case holds, 1 when one does not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdgpu_dispatch.h"
#include "amdgpu_metadata.h"
#include "harness.h"

static const struct devrt_launch_config geometry = {.grid = {5, 3, 2}, .block = {16, 4, 2}};

static struct devrt_amdgpu_metadata *read_metadata(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        perror(path);
        exit(1);
    }
    static char image[1 << 20];
    size_t size = fread(image, 1, sizeof image, file);
    fclose(file);
    struct devrt_amdgpu_metadata *m = NULL;
    if (devrt_amdgpu_metadata_read(image, size, path, &m) != DEVRT_SUCCESS) {
        fprintf(stderr, "FAIL: %s\n", devrt_last_error());
        exit(1);
    }
    return m;
}

/* geometry(uint32_t *, float, double, uint32_t), as kernels.c declares it. */
static const struct devrt_arg args[] = {
    {.type = DEVRT_ARG_POINTER, .value = {.pointer = NULL}},
    {.type = DEVRT_ARG_F32, .value = {.f32 = 2}},
    {.type = DEVRT_ARG_F64, .value = {.f64 = 1}},
    {.type = DEVRT_ARG_U32, .value = {.u32 = 3}},
};

/* Dispatches geometry; STATUS and a message containing PATTERN (NULL: success) expected. */
static void expect(const char *what, struct devrt_amdgpu_metadata *m,
                   const struct devrt_amdgpu_agent *agent, int status, const char *pattern)
{
    struct devrt_amdgpu_dispatch d;
    int got =
        devrt_amdgpu_dispatch_make(m, "image.hsaco", agent, "geometry", &geometry, args, 4, &d);
    CHECK(got == status, "%s: status %d, expected %d (%s)", what, got, status, devrt_last_error());
    if (pattern)
        CHECK(strstr(devrt_last_error(), pattern), "%s: message '%s' lacks '%s'", what,
              devrt_last_error(), pattern);
    if (got == DEVRT_SUCCESS) {
        CHECK(!pattern, "%s: dispatched", what);
        devrt_amdgpu_dispatch_free(&d);
    }
}

static struct devrt_amdgpu_arg *find(struct devrt_amdgpu_kernel *k, const char *kind)
{
    for (size_t i = 0; i < k->arg_count; ++i)
        if (!strcmp(k->args[i].value_kind, kind))
            return &k->args[i];
    fprintf(stderr, "FAIL: geometry lists no %s\n", kind);
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dispatch_test IMAGE_V5\n");
        return 1;
    }
    struct devrt_amdgpu_metadata *m = read_metadata(argv[1]);
    struct devrt_amdgpu_kernel *k =
        (struct devrt_amdgpu_kernel *)devrt_amdgpu_metadata_kernel(m, "geometry");
    CHECK(k && k->has_descriptor, "geometry and its descriptor");
    if (!k)
        return 1;
    struct devrt_amdgpu_agent agent = {.isa = "gfx90a", .queue_address = 0x123456789abc};

    expect("control", m, &agent, DEVRT_SUCCESS, NULL);

    /* The queue's address goes where hidden_queue_ptr says, when the kernel lists it. */
    struct devrt_amdgpu_arg *none = find(k, "hidden_grid_dims");
    char *kind = none->value_kind;
    uint32_t size = none->size;
    none->value_kind = "hidden_queue_ptr";
    none->size = 8;
    struct devrt_amdgpu_dispatch d;
    CHECK(devrt_amdgpu_dispatch_make(m, "image.hsaco", &agent, "geometry", &geometry, args, 4,
                                     &d) == DEVRT_SUCCESS,
          "queue pointer: %s", devrt_last_error());
    uint64_t queue = 0;
    memcpy(&queue, d.kernarg + none->offset, 8);
    CHECK(queue == agent.queue_address, "queue pointer 0x%llx", (unsigned long long)queue);
    devrt_amdgpu_dispatch_free(&d);

    /* A hidden argument of another size than the ABI's, or of a kind no ABI has. */
    none->value_kind = "hidden_block_count_x";
    none->size = 2;
    expect("hidden size", m, &agent, DEVRT_ERROR_IMAGE,
           "hidden_block_count_x is 2 bytes; the code object ABI makes it 4");
    none->value_kind = "hidden_from_the_future";
    expect("unknown hidden", m, &agent, DEVRT_ERROR_LAUNCH,
           "needs hidden_from_the_future (offset 96), a hidden argument devrt does not know");
    /* ockl's heap: 0 unless a load of the code may read it (the scan's text says which). */
    none->value_kind = "hidden_heap_v1";
    none->size = 8;
    expect("heap unread", m, &agent, DEVRT_SUCCESS, NULL);
    CHECK(!m->heap_read[0] && !m->hostcall_read[0], "kernels.c's image: heap '%s', hostcall '%s'",
          m->heap_read, m->hostcall_read);
    snprintf(m->heap_read, sizeof m->heap_read,
             "s_load_dwordx2 s[4:5], s[8:9], 0x60 reads the slot");
    expect("heap read", m, &agent, DEVRT_ERROR_LAUNCH,
           "needs hidden_heap_v1 (offset 96): s_load_dwordx2 s[4:5], s[8:9], 0x60 reads the slot; "
           "devrt does not serve ockl's malloc, so it may not pass 0");
    m->heap_read[0] = '\0';
    none->value_kind = kind;
    none->size = size;
    expect("control after", m, &agent, DEVRT_SUCCESS, NULL);

    /* An explicit argument devrt cannot pass. */
    char *first = k->args[0].value_kind;
    k->args[0].value_kind = "dynamic_shared_pointer";
    expect("explicit kind", m, &agent, DEVRT_ERROR_LAUNCH,
           "argument 1 is a dynamic_shared_pointer, which devrt does not pass");
    k->args[0].value_kind = first;

    /* The descriptor and the metadata disagree; the descriptor is missing. */
    k->descriptor_kernarg_size += 8;
    expect("descriptor", m, &agent, DEVRT_ERROR_IMAGE,
           "its descriptor's kernarg segment is 296 bytes, its metadata's 288");
    k->descriptor_kernarg_size -= 8;
    k->has_descriptor = false;
    expect("no descriptor", m, &agent, DEVRT_ERROR_IMAGE, "has no kernel descriptor geometry.kd");
    k->has_descriptor = true;

    /* More LDS than the GPU has; exactly as much is fine. */
    k->group_segment_fixed_size = k->descriptor_group_segment_fixed_size = 4096;
    agent.group_segment_limit = 4095;
    expect("lds", m, &agent, DEVRT_ERROR_LAUNCH, "needs 4096 bytes of LDS per workgroup");
    agent.group_segment_limit = 4096;
    expect("lds control", m, &agent, DEVRT_SUCCESS, NULL);
    k->group_segment_fixed_size = k->descriptor_group_segment_fixed_size = 0;

    /* The kernel's own workgroup limit, below devrt's 1024. */
    uint32_t largest = k->max_flat_workgroup_size;
    k->max_flat_workgroup_size = 64;
    expect("workgroup", m, &agent, DEVRT_ERROR_LAUNCH,
           "takes workgroups of at most 64 workitems, given 128 (16x4x2)");
    k->max_flat_workgroup_size = 128;
    expect("workgroup control", m, &agent, DEVRT_SUCCESS, NULL);
    k->max_flat_workgroup_size = largest;

    /* Code object versions outside 4 to 6. */
    m->code_object_version = 3;
    expect("version 3", m, &agent, DEVRT_ERROR_IMAGE,
           "code object version 3; devrt dispatches versions 4 to 6");
    m->code_object_version = 5;

    /* A code object for PAL (OS ABI 65) rather than HSA. */
    m->os_abi = 65;
    expect("os abi", m, &agent, DEVRT_ERROR_IMAGE, "ELF OS ABI 65, not the HSA runtime's (64)");
    m->os_abi = 64;

    /* Generic images fit their family; features set one way must match. */
    snprintf(m->processor, sizeof m->processor, "gfx9-generic");
    snprintf(m->isa, sizeof m->isa, "gfx9-generic");
    expect("generic on gfx90a", m, &agent, DEVRT_ERROR_IMAGE,
           "image is gfx9-generic, GPU is gfx90a");
    agent.isa = "gfx906";
    expect("generic on gfx906", m, &agent, DEVRT_SUCCESS, NULL);
    snprintf(m->processor, sizeof m->processor, "gfx90a");
    m->sramecc = DEVRT_AMDGPU_FEATURE_ON;
    snprintf(m->isa, sizeof m->isa, "gfx90a:sramecc+");
    agent.isa = "amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+";
    expect("sramecc", m, &agent, DEVRT_ERROR_IMAGE,
           "image is gfx90a:sramecc+, GPU is gfx90a:sramecc-:xnack+");
    agent.isa = "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+";
    expect("sramecc control", m, &agent, DEVRT_SUCCESS, NULL);

    /* gfx950's workgroups have 160 KiB of LDS, gfx942's 64 KiB, when the GPU does not say. */
    m->sramecc = DEVRT_AMDGPU_FEATURE_ANY;
    snprintf(m->processor, sizeof m->processor, "gfx9-4-generic");
    snprintf(m->isa, sizeof m->isa, "gfx9-4-generic");
    k->group_segment_fixed_size = k->descriptor_group_segment_fixed_size = 163840;
    agent.group_segment_limit = 0;
    agent.isa = "gfx950";
    expect("gfx950 lds", m, &agent, DEVRT_SUCCESS, NULL);
    agent.isa = "gfx942";
    expect("gfx942 lds", m, &agent, DEVRT_ERROR_LAUNCH,
           "needs 163840 bytes of LDS per workgroup, the GPU has 65536");

    devrt_amdgpu_metadata_free(m);
    return failures ? 1 : 0;
}
