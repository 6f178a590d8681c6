/*
 * libFuzzer target: any bytes given to the metadata reader, and whatever metadata it accepts
 * given to the dispatch, must end in a result or an error, never in a crash, a leak or an
 * out-of-bounds access.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "amdgpu_dispatch.h"
#include "amdgpu_metadata.h"
#include "harness.h"

/* Touch what the code hands out, so that the sanitizer checks it. */
static volatile size_t sink;
static const uint8_t zeros[1u << 16];

/* Every kernel dispatched with arguments of the sizes it declares and a geometry taken from
   the input, on no particular GPU and on the image's own. */
static void dispatch_all(const struct devrt_amdgpu_metadata *m, const uint8_t *data, size_t size)
{
    struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    for (size_t i = 0; i < 3 && size >= 24; ++i) {
        memcpy(&config.grid[i], data + 4 * i, 4);
        memcpy(&config.block[i], data + 12 + 4 * i, 4);
    }
    for (size_t i = 0; i < m->kernel_count; ++i) {
        const struct devrt_amdgpu_kernel *k = &m->kernels[i];
        struct devrt_arg *args = calloc(k->explicit_count ? k->explicit_count : 1, sizeof *args);
        if (!args)
            return;
        for (size_t a = 0, e = 0; a < k->arg_count; ++a) {
            if (k->args[a].hidden)
                continue;
            /* Other sizes as bytes, up to what zeros holds (larger ones are refused). */
            struct devrt_arg *arg = &args[e++];
            arg->type = harness_sized_arg_type(k->args[a].size);
            if (arg->type == DEVRT_ARG_BYTES && k->args[a].size <= sizeof zeros) {
                arg->size = k->args[a].size;
                arg->value.pointer = (void *)zeros;
            }
        }
        for (int pass = 0; pass < 2; ++pass) {
            struct devrt_amdgpu_agent agent = {.isa = pass ? m->isa : NULL};
            struct devrt_amdgpu_dispatch d;
            if (devrt_amdgpu_dispatch_make(m, "fuzz", &agent, k->name, &config, args,
                                           k->explicit_count, &d) == DEVRT_SUCCESS) {
                for (uint32_t b = 0; b < d.kernarg_size; ++b)
                    sink += d.kernarg[b];
                devrt_amdgpu_dispatch_free(&d);
            }
            sink += strlen(devrt_last_error());
        }
        free(args);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct devrt_amdgpu_metadata *m = NULL;
    if (devrt_amdgpu_metadata_read(data, size, "fuzz", &m) == DEVRT_SUCCESS) {
        sink += strlen(m->isa) + (m->target ? strlen(m->target) : 0);
        dispatch_all(m, data, size);
        devrt_amdgpu_metadata_free(m);
    }
    sink += strlen(devrt_last_error());
#ifdef DEVRT_FUZZ_PLANTED_BUG
    /*
     * The control build: a bug the fuzzer must find, so that a silent run means something.
     * Any change of a seed's ELF ABI version byte past code object version 6's (4) trips it:
     * a one-byte change that a bounded run makes many times over.
     */
    if (size > 18 && memcmp(data, "\177ELF", 4) == 0 && data[8] > 4)
        abort();
#endif
    return 0;
}
