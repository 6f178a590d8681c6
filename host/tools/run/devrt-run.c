/*
 * devrt-run: run one kernel of an image on a backend, serving its requests, and exit
 * non-zero with the report when it raised an exception.
 *
 * The arguments are checked against the kernel's parameters before anything runs: an
 * amdgcn code object's before the device is opened (its metadata says), the others' once
 * loaded (devrt_launch). Exit status: 0 the kernel ran, 1 it raised an exception or sent a
 * malformed request, 2 the command line, the image, the arguments or the device was wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/host.h>

static const char usage[] =
    "usage: devrt-run IMAGE [KERNEL] [--grid X[,Y,Z]] [--block X[,Y,Z]]\n"
    "                 [--backend hsa|emu|cuda] [--wave 1|32|64] [-- ARG...]\n"
    "  KERNEL defaults to main; --grid counts workgroups, --block workitems per workgroup.\n"
    "  --wave sets the lanes per wave of the emulation (default $DEVRT_EMU_WAVE, else 32).\n"
    "  ARG is TYPE:VALUE with TYPE one of i32 u32 i64 u64 f32 f64, or buf:BYTES for a\n"
    "  zeroed buffer the kernel and the host share. Arguments that do not fit the kernel's\n"
    "  parameters, where the image records them, are refused before the kernel runs.\n"
    "Exit status: 0 the kernel ran, 1 it raised an exception or sent a malformed request,\n"
    "2 the command line, the image, the arguments or the device was wrong.\n";

static int bad_usage(const char *what, const char *value)
{
    fprintf(stderr, "devrt-run: %s%s%s\n%s", what, value ? ": " : "", value ? value : "", usage);
    return 2;
}

static int parse_dims(const char *text, uint32_t dims[3])
{
    dims[0] = dims[1] = dims[2] = 1;
    for (int d = 0; d < 3; ++d) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(text, &end, 10);
        if (end == text || errno || v == 0 || v > UINT32_MAX || (*end && *end != ','))
            return -1;
        dims[d] = (uint32_t)v;
        if (!*end)
            return 0;
        text = end + 1;
    }
    return -1;
}

/* A buffer argument's pointer is left NULL and its size kept in *buffer: no device yet. */
static int parse_arg(const char *text, struct devrt_arg *arg, size_t *buffer)
{
    const char *colon = strchr(text, ':');
    if (!colon || !colon[1])
        return -1;
    size_t kind = (size_t)(colon - text);
    const char *value = colon + 1;
    char *end;
    errno = 0;
    if (kind == 3 && !strncmp(text, "buf", 3)) {
        unsigned long long bytes = strtoull(value, &end, 10);
        if (*end || errno || bytes == 0 || *value == '-')
            return -1;
        arg->type = DEVRT_ARG_POINTER;
        arg->value.pointer = NULL;
        *buffer = (size_t)bytes;
        return 0;
    }
    if (kind == 3 && !strncmp(text, "f32", 3)) {
        arg->type = DEVRT_ARG_F32;
        arg->value.f32 = strtof(value, &end);
    } else if (kind == 3 && !strncmp(text, "f64", 3)) {
        arg->type = DEVRT_ARG_F64;
        arg->value.f64 = strtod(value, &end);
    } else if (kind == 3 && !strncmp(text, "i32", 3)) {
        arg->type = DEVRT_ARG_I32;
        long v = strtol(value, &end, 0);
        if (v < INT32_MIN || v > INT32_MAX)
            return -1;
        arg->value.i32 = (int32_t)v;
    } else if (kind == 3 && !strncmp(text, "u32", 3)) {
        arg->type = DEVRT_ARG_U32;
        unsigned long v = strtoul(value, &end, 0);
        if (v > UINT32_MAX || *value == '-')
            return -1;
        arg->value.u32 = (uint32_t)v;
    } else if (kind == 3 && !strncmp(text, "i64", 3)) {
        arg->type = DEVRT_ARG_I64;
        arg->value.i64 = strtoll(value, &end, 0);
    } else if (kind == 3 && !strncmp(text, "u64", 3)) {
        arg->type = DEVRT_ARG_U64;
        arg->value.u64 = strtoull(value, &end, 0);
        if (*value == '-')
            return -1;
    } else {
        return -1;
    }
    return *end || errno ? -1 : 0;
}

/* Everything after the command line: check, open, load, launch. Returns the exit status. */
static int run(const char *image, const char *kernel, enum devrt_backend backend,
               const struct devrt_device_options *options, const struct devrt_launch_config *config,
               struct devrt_arg *args, const size_t *buffers, size_t arg_count)
{
    /* Before the device: a missing file or wrong arguments need no GPU to be told. */
    if (devrt_image_check_args(image, backend, kernel, args, arg_count) != DEVRT_SUCCESS) {
        fprintf(stderr, "devrt-run: %s\n", devrt_last_error());
        return 2;
    }
    if (backend == DEVRT_BACKEND_AUTO) {
        backend = devrt_image_backend(image);
        if (backend == DEVRT_BACKEND_AUTO) {
            fprintf(stderr, "devrt-run: %s: cannot tell which backend runs it; use --backend\n",
                    image);
            return 2;
        }
    }

    devrt_device *device;
    if (devrt_device_open(backend, 0, options, &device) != DEVRT_SUCCESS) {
        fprintf(stderr, "devrt-run: %s backend: %s\n", devrt_backend_name(backend),
                devrt_last_error());
        return 2;
    }
    int exit_code = 0;
    for (size_t i = 0; i < arg_count && !exit_code; ++i) {
        if (args[i].type != DEVRT_ARG_POINTER)
            continue;
        args[i].value.pointer = devrt_mem_alloc(device, buffers[i]);
        if (!args[i].value.pointer) {
            fprintf(stderr, "devrt-run: no device memory for a buffer of %zu bytes\n", buffers[i]);
            exit_code = 2;
        }
    }
    devrt_module *module = NULL;
    if (!exit_code && devrt_module_load(device, image, &module) != DEVRT_SUCCESS) {
        fprintf(stderr, "devrt-run: %s\n", devrt_last_error());
        exit_code = 2;
    }
    if (!exit_code) {
        int status = devrt_launch(module, kernel, config, args, arg_count, NULL);
        if (status == DEVRT_ERROR_EXCEPTION || status == DEVRT_ERROR_DEVICE_REQUEST) {
            exit_code = 1; /* the runtime has printed the report */
        } else if (status != DEVRT_SUCCESS) {
            fprintf(stderr, "devrt-run: %s\n", devrt_last_error());
            exit_code = 2;
        }
    }
    for (size_t i = 0; i < arg_count; ++i)
        if (args[i].type == DEVRT_ARG_POINTER)
            devrt_mem_free(device, args[i].value.pointer);
    devrt_module_unload(module);
    devrt_device_close(device);
    return exit_code;
}

int main(int argc, char **argv)
{
    const char *image = NULL, *kernel = NULL;
    struct devrt_launch_config config = {{1, 1, 1}, {1, 1, 1}};
    enum devrt_backend backend = DEVRT_BACKEND_AUTO;
    struct devrt_device_options options = {0};
    int first_arg = argc;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            first_arg = i + 1;
            break;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--grid") || !strcmp(a, "--block")) {
            if (i + 1 == argc || parse_dims(argv[i + 1], a[2] == 'g' ? config.grid : config.block))
                return bad_usage("expected X[,Y,Z] of positive numbers after", a);
            ++i;
        } else if (!strcmp(a, "--backend")) {
            const char *b = i + 1 < argc ? argv[++i] : "";
            if (!strcmp(b, "hsa"))
                backend = DEVRT_BACKEND_HSA;
            else if (!strcmp(b, "emu"))
                backend = DEVRT_BACKEND_EMU;
            else if (!strcmp(b, "cuda"))
                backend = DEVRT_BACKEND_CUDA;
            else
                return bad_usage("unknown backend", b);
        } else if (!strcmp(a, "--wave")) {
            const char *w = i + 1 < argc ? argv[++i] : "";
            if (strcmp(w, "1") && strcmp(w, "32") && strcmp(w, "64"))
                return bad_usage("expected 1, 32 or 64 after --wave, not", w);
            options.emu_wave_size = (uint32_t)atoi(w);
        } else if (a[0] == '-') {
            return bad_usage("unknown option", a);
        } else if (!image) {
            image = a;
        } else if (!kernel) {
            kernel = a;
        } else {
            return bad_usage("unexpected argument", a);
        }
    }
    if (!image)
        return bad_usage("no image given", NULL);
    if (!kernel)
        kernel = "main";

    size_t arg_count = (size_t)(argc - first_arg);
    struct devrt_arg *args = calloc(arg_count ? arg_count : 1, sizeof *args);
    size_t *buffers = calloc(arg_count ? arg_count : 1, sizeof *buffers);
    int exit_code = args && buffers ? 0 : 2;
    for (size_t i = 0; i < arg_count && !exit_code; ++i)
        if (parse_arg(argv[first_arg + (int)i], &args[i], &buffers[i]))
            exit_code = bad_usage("bad kernel argument", argv[first_arg + (int)i]);
    if (!exit_code)
        exit_code = run(image, kernel, backend, &options, &config, args, buffers, arg_count);
    free(args);
    free(buffers);
    return exit_code;
}
