/*
 * Kernel arguments against kernel parameters: the amdgcn metadata reader on real code
 * objects and on corrupt ones, and devrt_launch's check on the emulation backend. One test
 * per invocation:
 *
 *   arguments_test rpc RPC_HSACO           tests/kernels/rpc.c's code object, read back
 *   arguments_test kernels HSACO WAVE      tests/arguments/kernels.c's, of that wave size
 *   arguments_test corrupt HSACO [STEP]    truncated and altered copies: an error, no crash;
 *                                          STEP > 1 tries every STEP-th length and byte
 *   arguments_test launch RPC_SO           devrt_launch refuses what does not fit
 *
 * Exits 0 when the test holds, 1 when it does not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/host.h>

#include "amdgpu_metadata.h"
#include "harness.h"
#include "struct_kernels.h"

static char *read_file(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        perror(path);
        exit(1);
    }
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    rewind(file);
    char *data = malloc((size_t)length);
    if (!data || fread(data, 1, (size_t)length, file) != (size_t)length) {
        fprintf(stderr, "%s: cannot read\n", path);
        exit(1);
    }
    fclose(file);
    *size = (size_t)length;
    return data;
}

static struct devrt_amdgpu_metadata *read_metadata(const char *path)
{
    size_t size;
    char *image = read_file(path, &size);
    struct devrt_amdgpu_metadata *metadata = NULL;
    int status = devrt_amdgpu_metadata_read(image, size, path, &metadata);
    free(image);
    if (status != DEVRT_SUCCESS) {
        fprintf(stderr, "FAIL: %s\n", devrt_last_error());
        exit(1);
    }
    return metadata;
}

/* A kernel as its source declares it: each explicit argument's offset, size, value kind. */
struct expected_arg {
    uint32_t offset, size;
    const char *kind;
};
struct expected_kernel {
    const char *name;
    size_t count;
    struct expected_arg args[4];
    uint32_t kernarg_size; /* without hidden arguments */
};
static const char pointer[] = "global_buffer", value[] = "by_value";

static void check_kernel(const struct devrt_amdgpu_metadata *metadata,
                         const struct expected_kernel *expected, uint32_t wave)
{
    const char *name = expected->name;
    const struct devrt_amdgpu_kernel *k = devrt_amdgpu_metadata_kernel(metadata, name);
    CHECK(k, "no kernel %s", name);
    if (!k)
        return;
    char symbol[256];
    snprintf(symbol, sizeof symbol, "%s.kd", name);
    CHECK(!strcmp(k->symbol, symbol), "%s: symbol %s", name, k->symbol);
    CHECK(k->explicit_count == expected->count, "%s: %zu explicit arguments, expected %zu", name,
          k->explicit_count, expected->count);
    for (size_t i = 0, e = 0; i < k->arg_count && e < expected->count; ++i) {
        const struct devrt_amdgpu_arg *a = &k->args[i];
        const struct expected_arg *x = &expected->args[e];
        if (a->hidden)
            continue;
        CHECK(a->offset == x->offset && a->size == x->size && !strcmp(a->value_kind, x->kind),
              "%s: argument %zu is %u bytes at %u (%s), expected %u at %u (%s)", name, e, a->size,
              a->offset, a->value_kind, x->size, x->offset, x->kind);
        e++;
    }
    if (k->explicit_count == k->arg_count)
        CHECK(k->kernarg_segment_size == expected->kernarg_size,
              "%s: kernarg segment of %u bytes, expected %u", name, k->kernarg_segment_size,
              expected->kernarg_size);
    else
        CHECK(k->kernarg_segment_size > expected->kernarg_size,
              "%s: kernarg segment of %u bytes, with hidden arguments after %u", name,
              k->kernarg_segment_size, expected->kernarg_size);
    CHECK(k->wavefront_size == wave, "%s: wavefront size %u, expected %u", name, k->wavefront_size,
          wave);
    CHECK(k->max_flat_workgroup_size >= 1 && k->max_flat_workgroup_size <= 1024,
          "%s: max flat workgroup size %u", name, k->max_flat_workgroup_size);
}

/* Every kernel, in source order, and nothing else. */
static void check_kernels(const struct devrt_amdgpu_metadata *m,
                          const struct expected_kernel *expected, size_t count, uint32_t wave)
{
    CHECK(m->kernel_count == count, "%zu kernels, expected %zu", m->kernel_count, count);
    for (size_t i = 0; i < m->kernel_count && i < count; ++i)
        CHECK(!strcmp(m->kernels[i].name, expected[i].name), "kernel %zu is %s, expected %s", i,
              m->kernels[i].name, expected[i].name);
    for (size_t i = 0; i < count; ++i)
        check_kernel(m, &expected[i], wave);
    CHECK(!devrt_amdgpu_metadata_kernel(m, "main"), "a kernel main that the source lacks");
}

/* tests/kernels/rpc.c for gfx90a. */
static void test_rpc(const char *path)
{
    static const struct expected_kernel rpc[] = {
        {"echo", 4, {{0, 8, pointer}, {8, 8, pointer}, {16, 4, value}, {20, 4, value}}, 24},
        {"hostcall", 2, {{0, 8, pointer}, {8, 4, value}}, 12},
        {"raise_mid_request", 3, {{0, 8, pointer}, {8, 8, value}, {16, 4, value}}, 20},
        {"raise_at", 2, {{0, 8, value}, {8, 4, value}}, 12},
        {"barrier_sum", 2, {{0, 8, pointer}, {8, 8, pointer}}, 16},
        {"divergent_echo", 3, {{0, 8, pointer}, {8, 8, pointer}, {16, 4, value}}, 20},
        {"divergent_hostcall", 2, {{0, 8, pointer}, {8, 4, value}}, 12},
        {"raise_holding_port", 1, {{0, 4, value}}, 4},
        {"count_locked_ports", 1, {{0, 8, pointer}}, 8},
        {"echo_after_server_sleeps", 0, {{0}}, 0},
        {"hold_port_and_count", 2, {{0, 8, pointer}, {8, 8, pointer}}, 16},
        {"raise_with_string", 1, {{0, 8, value}}, 8},
    };
    struct devrt_amdgpu_metadata *m = read_metadata(path);
    CHECK(m->version[0] == 1 && m->version[1] >= 1, "metadata version %u.%u", m->version[0],
          m->version[1]);
    CHECK(m->target && strstr(m->target, "gfx90a"), "target %s", m->target ? m->target : "none");
    check_kernels(m, rpc, sizeof rpc / sizeof rpc[0], 64);
    devrt_amdgpu_metadata_free(m);
}

/* tests/arguments/kernels.c: no arguments, a hole in the layout, hidden arguments. */
static void test_kernels(const char *path, uint32_t wave)
{
    static const struct expected_kernel kernels[] = {
        {"no_parameters", 0, {{0}}, 0},
        {"mixed", 4, {{0, 8, pointer}, {8, 4, value}, {16, 8, value}, {24, 4, value}}, 28},
        {"hidden", 2, {{0, 8, pointer}, {8, 8, value}}, 16},
    };
    struct devrt_amdgpu_metadata *m = read_metadata(path);
    check_kernels(m, kernels, sizeof kernels / sizeof kernels[0], wave);
    const struct devrt_amdgpu_kernel *k = devrt_amdgpu_metadata_kernel(m, "hidden");
    bool block_count = false;
    for (size_t i = 0; k && i < k->arg_count; ++i) {
        const struct devrt_amdgpu_arg *a = &k->args[i];
        CHECK(a->hidden == !strncmp(a->value_kind, "hidden_", 7), "argument %zu (%s) hidden %d", i,
              a->value_kind, a->hidden);
        CHECK(i < 2 || a->hidden, "argument %zu (%s) after the explicit ones", i, a->value_kind);
        if (!strcmp(a->value_kind, "hidden_block_count_x"))
            block_count = a->offset == 16 && a->size == 4;
    }
    CHECK(block_count, "hidden has no hidden_block_count_x of 4 bytes at offset 16");
    devrt_amdgpu_metadata_free(m);
}

/* The reader's answer to a corrupt image: the metadata, or DEVRT_ERROR_IMAGE naming it. */
static int outcome(const char *image, size_t size, const char *what)
{
    struct devrt_amdgpu_metadata *m = NULL;
    int status = devrt_amdgpu_metadata_read(image, size, "corrupt.hsaco", &m);
    if (status == DEVRT_SUCCESS) {
        for (size_t i = 0; i < m->kernel_count; ++i) {
            const struct devrt_amdgpu_kernel *k = &m->kernels[i];
            size_t explicit_count = 0;
            for (size_t j = 0; j < k->arg_count; ++j) {
                CHECK((uint64_t)k->args[j].offset + k->args[j].size <= k->kernarg_segment_size,
                      "%s: an argument outside the kernarg segment was accepted", what);
                explicit_count += !k->args[j].hidden;
            }
            CHECK(explicit_count == k->explicit_count, "%s: explicit count %zu, counted %zu", what,
                  k->explicit_count, explicit_count);
        }
        devrt_amdgpu_metadata_free(m);
    } else {
        CHECK(status == DEVRT_ERROR_IMAGE, "%s: status %d", what, status);
        CHECK(!strncmp(devrt_last_error(), "corrupt.hsaco: ", 15), "%s: message %s", what,
              devrt_last_error());
        CHECK(!m, "%s: metadata despite the error", what);
    }
    return status;
}

static void test_corrupt(const char *path, size_t step)
{
    size_t size;
    char *image = read_file(path, &size);
    char *copy = malloc(size);
    CHECK(outcome(image, size, "the image itself") == DEVRT_SUCCESS, "%s", devrt_last_error());

    static const char text[] = "this is not a code object\n";
    CHECK(outcome(text, sizeof text - 1, "text") == DEVRT_ERROR_IMAGE, "text was read");
    CHECK(strstr(devrt_last_error(), "not an ELF file"), "text: %s", devrt_last_error());
    CHECK(outcome(text, 0, "nothing") == DEVRT_ERROR_IMAGE, "nothing was read");
    size_t self_size;
    char *self = read_file("/proc/self/exe", &self_size);
    CHECK(outcome(self, self_size, "a host executable") == DEVRT_ERROR_IMAGE, "x86-64 was read");
    CHECK(strstr(devrt_last_error(), "not an amdgcn code object"), "host: %s", devrt_last_error());
    free(self);

    /* Every length short of the whole: the header, the sections, the note cut anywhere. */
    size_t refused = 0, tried = 0;
    for (size_t length = 0; length < size; length += (length < 4096 ? 1 : 7) * step, ++tried) {
        memcpy(copy, image, length);
        refused += outcome(copy, length, "a truncated image") != DEVRT_SUCCESS;
    }
    CHECK(refused > tried / 2, "only %zu of %zu truncated images refused", refused, tried);

    /*
     * Bytes changed to values that mean most in ELF and MessagePack: every byte of the first
     * 8 KiB (the headers and the metadata note, which ld.lld puts first), then every 16th
     * (machine code, which the reader never looks at; unit.metadata.fuzz covers the rest).
     */
    static const unsigned char values[] = {0x00, 0xff, 0x7f, 0x80, 0xc0, 0xc1,
                                           0xcf, 0xdc, 0xdd, 0xde, 0xdf, 0xa0};
    tried = refused = 0;
    for (size_t i = 0; i < size; i += (i < 8192 ? 1 : 16) * step)
        for (size_t v = 0; v < sizeof values; ++v, ++tried) {
            memcpy(copy, image, size);
            copy[i] = (char)values[v];
            char what[64];
            snprintf(what, sizeof what, "byte %zu set to 0x%02x", i, values[v]);
            refused += outcome(copy, size, what) != DEVRT_SUCCESS;
        }
    printf("%zu altered images, %zu refused\n", tried, refused);
    CHECK(refused > 0, "no altered image was refused");
    free(copy);
    free(image);
}

/* devrt_launch on the emulation backend, against the signatures DEVRT_KERNELn records. */
static void test_launch(const char *path)
{
    devrt_device *device;
    devrt_module *module;
    if (harness_open(DEVRT_BACKEND_EMU, NULL, path, &device, &module))
        exit(1);
    struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    static int pointee; /* an address for a pointer argument */
    struct {
        const char *what;
        struct devrt_arg args[3];
        size_t count;
        int status;
        const char *message;
    } cases[] = {
        {"right", {DEVRT_ARG_U64(99), DEVRT_ARG_UINT(2)}, 2, DEVRT_SUCCESS, ""},
        {"too few",
         {DEVRT_ARG_UINT(7)},
         1,
         DEVRT_ERROR_ARGUMENTS,
         "kernel raise_at takes 2 arguments (8 bytes, 4 bytes), given 1 (u32: 4 bytes)"},
        {"too many",
         {DEVRT_ARG_U64(99), DEVRT_ARG_UINT(2), DEVRT_ARG_UINT(3)},
         3,
         DEVRT_ERROR_ARGUMENTS,
         "kernel raise_at takes 2 arguments (8 bytes, 4 bytes), given 3 (u64: 8 bytes, u32: 4 "
         "bytes, and 1 more)"},
        {"a u32 for a u64",
         {DEVRT_ARG_UINT(99), DEVRT_ARG_UINT(2)},
         2,
         DEVRT_ERROR_ARGUMENTS,
         "kernel raise_at takes 2 arguments (8 bytes, 4 bytes), given 2 (u32: 4 bytes, u32: 4 "
         "bytes); argument 1 is 4 bytes where the kernel takes 8"},
        {"none",
         {{0}},
         0,
         DEVRT_ERROR_ARGUMENTS,
         "kernel raise_at takes 2 arguments (8 bytes, 4 bytes), given 0"},
        /* A count past the array's end: the count is compared before any argument is read
           (the types were checked first, reading on past the array). */
        {"a count of (size_t)-1",
         {DEVRT_ARG_U64(99), DEVRT_ARG_UINT(2)},
         (size_t)-1,
         DEVRT_ERROR_ARGUMENTS,
         "kernel raise_at takes 2 arguments (8 bytes, 4 bytes), given 18446744073709551615 (u64: "
         "8 bytes, u32: 4 bytes, and 18446744073709551613 more)"},
        /* Sizes right, kinds wrong: the kernel ran with the bits reinterpreted. */
        {"a pointer for a u64",
         {DEVRT_ARG_PTR(&pointee), DEVRT_ARG_UINT(2)},
         2,
         DEVRT_ERROR_ARGUMENTS,
         "kernel raise_at: argument 1 (victim) is a 64-bit unsigned integer, given a pointer"},
        {"an f32 for a u32",
         {DEVRT_ARG_U64(99), DEVRT_ARG_F32(1.5f)},
         2,
         DEVRT_ERROR_ARGUMENTS,
         "kernel raise_at: argument 2 (code) is a 32-bit unsigned integer, given f32"},
        /* Signedness is not compared: an i64 and an i32 are taken for the u64 and the u32. */
        {"signed for unsigned", {DEVRT_ARG_I64(99), DEVRT_ARG_I32(2)}, 2, DEVRT_SUCCESS, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        int status = devrt_launch(module, "raise_at", &config, cases[i].args, cases[i].count, NULL);
        CHECK(status == cases[i].status, "%s: status %s (%s)", cases[i].what,
              devrt_status_string(status), devrt_last_error());
        if (status != DEVRT_SUCCESS)
            CHECK(!strcmp(devrt_last_error(), cases[i].message), "%s: message %s", cases[i].what,
                  devrt_last_error());
    }
    CHECK(!strcmp(devrt_status_string(DEVRT_ERROR_ARGUMENTS), "arguments do not fit the kernel"),
          "%s", devrt_status_string(DEVRT_ERROR_ARGUMENTS));
    devrt_module_unload(module);
    devrt_device_close(device);
}

/*
 * Structs by value (struct_kernels.c) through the host API on the emulation. The asynchronous
 * launch copies their bytes: queued behind a kernel that holds the stream, it cannot have
 * started when the caller overwrites its structs, and the kernel still sees what was given.
 * Bad DEVRT_ARG_BYTES, unknown types and a size on another type (a positional initializer
 * written for an older devrt_arg) are refused before any backend sees them; the plain
 * kernel, which has no caller, is refused a struct.
 */
static void test_bytes(const char *path)
{
    devrt_device *device;
    devrt_module *module;
    if (harness_open(DEVRT_BACKEND_EMU, NULL, path, &device, &module))
        exit(1);
    struct harness_sink sink = {0};
    devrt_module_set_output_callback(module, harness_sink_append, &sink);
    struct devrt_test_point given = {1.5f, -2.0f, 7}, p = given;
    struct devrt_test_wide w = {.a = 0.25, .b = -3, .c = {[23] = 200}};
    struct devrt_test_point *out = devrt_mem_alloc(device, sizeof *out);
    struct devrt_launch_config config = harness_grid1(1, 64);
    struct devrt_arg args[] = {DEVRT_ARG_BYTES(&p, sizeof p), DEVRT_ARG_UINT(9),
                               DEVRT_ARG_BYTES(&w, sizeof w), DEVRT_ARG_PTR(out)};
    uint32_t *release = devrt_mem_alloc(device, sizeof *release);
    if (!out || !release)
        exit(1);
    *release = 0;
    struct devrt_arg hold_args[] = {DEVRT_ARG_PTR(release)};
    uint64_t held, launch = 0;
    int status = devrt_launch_async(module, "hold", &config, hold_args, 1, NULL, &held);
    if (status == DEVRT_SUCCESS)
        status = devrt_launch_async(module, "by_value", &config, args, 4, NULL, &launch);
    memset(&p, 0xff, sizeof p);
    memset(&w, 0xff, sizeof w);
    __atomic_store_n(release, 1u, __ATOMIC_RELEASE);
    if (launch)
        status = devrt_launch_wait(device, launch, NULL);
    CHECK(status == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(devrt_launch_wait(device, held, NULL) == DEVRT_SUCCESS, "%s", devrt_last_error());
    CHECK(sink.data && !strcmp(sink.data, "1.5 -2 7 9 0.25 -3 200\n"), "printed %s",
          sink.data ? sink.data : "nothing");
    CHECK(out && !memcmp(out, &given, sizeof given), "the kernel wrote back %g %g %d",
          out ? (double)out->x : 0.0, out ? (double)out->y : 0.0, out ? out->n : 0);

    struct {
        const char *what, *kernel;
        struct devrt_arg arg;
        int status;
        const char *message;
    } cases[] = {
        {"no bytes", "by_value", DEVRT_ARG_BYTES(&given, 0), DEVRT_ERROR_INVALID_ARGUMENT,
         "devrt_launch: argument 1 is 0 bytes at"},
        {"no address", "by_value", DEVRT_ARG_BYTES(NULL, 12), DEVRT_ERROR_INVALID_ARGUMENT,
         "devrt_launch: argument 1 is 12 bytes at"},
        {"no type",
         "by_value",
         {.type = (enum devrt_arg_type)99},
         DEVRT_ERROR_INVALID_ARGUMENT,
         "devrt_launch: argument 1 has no devrt_arg_type (99)"},
        {"too short", "by_value", DEVRT_ARG_BYTES(&given, 8), DEVRT_ERROR_ARGUMENTS,
         "kernel by_value takes 4 arguments (12 bytes, 4 bytes, 40 bytes, 8 bytes), given 4 "
         "(bytes: 8 bytes, u32: 4 bytes, bytes: 40 bytes, pointer: 8 bytes); argument 1 is 8 "
         "bytes where the kernel takes 12"},
        {"a size on a u32",
         "by_value",
         {.type = DEVRT_ARG_U32, .size = 4, .value = {.u32 = 1}},
         DEVRT_ERROR_INVALID_ARGUMENT,
         "devrt_launch: argument 1, a u32, has a size (4), which only DEVRT_ARG_BYTES has"},
        {"plain", "plain_by_value", DEVRT_ARG_BYTES(&given, sizeof given), DEVRT_ERROR_ARGUMENTS,
         "kernel plain_by_value: argument 1 is 12 bytes by value, which the emulation passes "
         "only to kernels declared with DEVRT_KERNELn against this devrt"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        struct devrt_arg bad[] = {cases[i].arg, args[1], DEVRT_ARG_BYTES(&w, sizeof w), args[3]};
        size_t count = strcmp(cases[i].kernel, "plain_by_value") ? 4 : 1;
        status = devrt_launch(module, cases[i].kernel, &config, bad, count, NULL);
        CHECK(status == cases[i].status, "%s: status %s (%s)", cases[i].what,
              devrt_status_string(status), devrt_last_error());
        CHECK(!strncmp(devrt_last_error(), cases[i].message, strlen(cases[i].message)),
              "%s: message %s", cases[i].what, devrt_last_error());
    }
    /* A NULL where a launch needs a pointer is named. */
    struct {
        const char *kernel;
        const struct devrt_launch_config *config;
        const struct devrt_arg *args;
        const char *message;
    } nulls[] = {
        {NULL, &config, args, "devrt_launch: kernel is NULL"},
        {"by_value", NULL, args, "devrt_launch: config is NULL"},
        {"by_value", &config, NULL, "devrt_launch: args is NULL, with a count of 4"},
    };
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; ++i) {
        status = devrt_launch(module, nulls[i].kernel, nulls[i].config, nulls[i].args, 4, NULL);
        CHECK(status == DEVRT_ERROR_INVALID_ARGUMENT &&
                  !strcmp(devrt_last_error(), nulls[i].message),
              "%s: %s (%s)", nulls[i].message, devrt_status_string(status), devrt_last_error());
    }
    status = devrt_launch(NULL, "by_value", &config, args, 4, NULL);
    CHECK(!strcmp(devrt_last_error(), "devrt_launch: module is NULL"), "%s", devrt_last_error());
    devrt_mem_free(device, out);
    devrt_mem_free(device, release);
    free(sink.data);
    devrt_module_unload(module);
    devrt_device_close(device);
}

/*
 * devrt_device_image_path on the emulation, whose processor is "host": PATTERN names a copy
 * of an image as <name>.{target}.so, which harness_open must find and load.
 */
static void test_image_path(const char *pattern)
{
    devrt_device *device;
    devrt_module *module;
    if (harness_open(DEVRT_BACKEND_EMU, NULL, pattern, &device, &module))
        exit(1);
    char path[32];
    struct {
        const char *pattern, *path;
        size_t size;
    } cases[] = {
        {"k.{target}.hsaco", "k.host.hsaco", sizeof path},
        {"{target}/{target}", "host/host", sizeof path},
        {"k.{targ}.hsaco", "k.{targ}.hsaco", sizeof path},
        {"{target}", "host", 5}, /* exactly fits, with its terminator */
        {"{target}", NULL, 4},
        {"kernels", NULL, 7},
        {"", "", 1},
        {"", NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        memset(path, 'x', sizeof path);
        int status = devrt_device_image_path(device, cases[i].pattern, path, cases[i].size);
        if (cases[i].path)
            CHECK(status == DEVRT_SUCCESS && !strcmp(path, cases[i].path), "%s: %s, %.32s",
                  cases[i].pattern, devrt_status_string(status), path);
        else
            CHECK(status == DEVRT_ERROR_INVALID_ARGUMENT, "%s in %zu bytes: %s", cases[i].pattern,
                  cases[i].size, devrt_status_string(status));
    }
    devrt_module_unload(module);
    devrt_device_close(device);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: arguments_test rpc|kernels|corrupt|launch|bytes|image_path IMAGE "
                        "[WAVE|STEP]\n");
        return 1;
    }
    const char *test = argv[1], *path = argv[2];
    if (!strcmp(test, "rpc"))
        test_rpc(path);
    else if (!strcmp(test, "kernels") && argc == 4)
        test_kernels(path, (uint32_t)atoi(argv[3]));
    else if (!strcmp(test, "corrupt"))
        test_corrupt(path, argc == 4 && atoi(argv[3]) > 1 ? (size_t)atoi(argv[3]) : 1);
    else if (!strcmp(test, "launch"))
        test_launch(path);
    else if (!strcmp(test, "bytes"))
        test_bytes(path);
    else if (!strcmp(test, "image_path"))
        test_image_path(path);
    else {
        fprintf(stderr, "arguments_test: unknown test %s\n", test);
        return 1;
    }
    return failures ? 1 : 0;
}
