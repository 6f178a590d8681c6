/*
 * devrt-run: run one kernel of an image on a backend, serving its requests, and exit
 * non-zero with the report when it raised an exception.
 *
 * The arguments are checked against the kernel's parameters before anything runs: an
 * amdgcn code object's before the device is opened (its metadata says), the others' once
 * loaded (devrt_launch). Exit status: 0 the kernel ran, 1 it raised an exception or sent a
 * malformed request, 2 the command line, the image, the arguments or the device was wrong.
 *
 * With --explain it runs nothing: it prints the dispatch an amdgcn kernel would get on the
 * GPU --target names (amdgpu_dispatch.h), which needs neither a GPU nor ROCm.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <devrt/abi.h>
#include <devrt/host.h>

#include "codeobject.h"
#include "geometry.h"

#ifdef DEVRT_HAVE_AMDGPU_METADATA
#include "amdgpu_dispatch.h"
#include "amdgpu_metadata.h"
#endif

static const char usage[] =
    "usage: devrt-run IMAGE [KERNEL] [--grid X[,Y,Z]] [--block X[,Y,Z]]\n"
    "                 [--backend hsa|hip|emu|cuda] [--device N] [--wave 1|32|64]\n"
    "                 [--timeout SECONDS] [--trace FILE] [-- ARG...]\n"
    "       devrt-run --explain IMAGE KERNEL --target GFX [--json] [--grid ...] [--block ...]\n"
    "                 [-- ARG...]\n"
    "       devrt-run --list | --help | --version\n"
    "  KERNEL defaults to main; --grid counts workgroups, --block workitems per workgroup:\n"
    "  at most 1024 workitems a workgroup, 2^32-1 workitems a dimension, 2^40 workgroups.\n"
    "  An option's value may also follow an '=' (--grid=4,2).\n"
    "  {target} in IMAGE stands for the GPU's processor (gfx90a, sm_90, host), so that one\n"
    "  command picks the code object built for the GPU there; it needs --backend.\n"
    "  --device picks the backend's device N (default 0), as --list numbers them.\n"
    "  --wave sets the lanes per wave of the emulation (default $DEVRT_EMU_WAVE, else 32).\n"
    "  --timeout bounds the kernel's run: past it the emulation stops the kernel, while CUDA,\n"
    "  HIP and HSA cannot, and devrt-run exits, which ends it with the process.\n"
    "  --trace writes a trace of the run to FILE, Chrome trace-event JSON that Perfetto and\n"
    "  chrome://tracing open: the launch, each request the server served, the output, heap\n"
    "  growth, exceptions and the server's sleeps. It overrides $DEVRT_TRACE.\n"
    "  ARG is TYPE:VALUE with TYPE one of i8 u8 i16 u16 i32 u32 i64 u64 f32 f64,\n"
    "  buf:BYTES for a zeroed buffer the kernel and the host share, ptr:0 for a null\n"
    "  pointer, or bytes:HEX for a value given byte by byte in memory order (a struct).\n"
    "  Arguments that do not fit the kernel's parameters, where the image records them\n"
    "  (their count, sizes, and whether each is a pointer, an integer or a float), are\n"
    "  refused before the kernel runs.\n"
    "  --explain prints, without a GPU, the dispatch of an amdgcn kernel on the GPU GFX (a\n"
    "  target ID such as gfx1100 or gfx90a:xnack-): packet geometry, segment sizes, and each\n"
    "  kernarg's offset, size, kind and value (--json: as JSON). Buffers are null there.\n"
    "  --list shows every device of every backend (ISA, wave size, memory, the time opening\n"
    "  it took in the driver and in devrt, the CPUs its server thread runs on and why), or\n"
    "  why a backend has none, and exits 0. --version prints devrt's version, the device\n"
    "  ABI version (abi.h) that images must be built against, and the LLVM that made the\n"
    "  device bitcode built with it (LLVM reads bitcode of its own version and older).\n"
    "Exit status: 0 the kernel ran, 1 it raised an exception or sent a malformed request,\n"
    "2 the command line, the image, the arguments or the device was wrong, 3 the kernel ran\n"
    "past --timeout.\n";

static int bad_usage(const char *what, const char *value)
{
    fprintf(stderr, "devrt-run: %s%s%s\n%s", what, value ? ": " : "", value ? value : "", usage);
    return 2;
}

/*
 * Whether argv[*i] is option NAME, given as "NAME VALUE" or "NAME=VALUE"; *value is then
 * its value, NULL where none follows. *i moves past what it took.
 */
static bool option(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t length = strlen(name);
    if (strncmp(a, name, length))
        return false;
    if (a[length] == '=') {
        *value = a + length + 1;
        return true;
    }
    if (a[length])
        return false;
    *value = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
}

/*
 * X[,Y,Z] into DIMS; NULL, or why not (in WHY, of SIZE bytes): each dimension from 1 to
 * 2^32-1, as a launch configuration holds it (the geometry check then names the limits of
 * their products).
 */
static const char *parse_dims(const char *text, uint32_t dims[3], char *why, size_t size)
{
    dims[0] = dims[1] = dims[2] = 1;
    for (int d = 0; d < 3; ++d) {
        char *end;
        errno = 0;
        unsigned long long v = isdigit((unsigned char)*text) ? strtoull(text, &end, 10) : 0;
        if (!isdigit((unsigned char)*text) || (*end && *end != ',')) {
            snprintf(why, size, "expected X[,Y,Z], each a number from 1 to %u", UINT32_MAX);
            return why;
        }
        if (errno || v > UINT32_MAX) {
            snprintf(why, size, "%.*s is more than %u, a dimension's most", (int)(end - text), text,
                     UINT32_MAX);
            return why;
        }
        if (v == 0) {
            snprintf(why, size, "a dimension is at least 1");
            return why;
        }
        dims[d] = (uint32_t)v;
        if (!*end)
            return NULL;
        text = end + 1;
    }
    snprintf(why, size, "at most three dimensions (X,Y,Z)");
    return why;
}

/* The integer types a kernel argument may have, by their names on the command line. */
static const struct int_type {
    const char *name;
    enum devrt_arg_type type;
    long long min;
    unsigned long long max;
} int_types[] = {
    {"i8", DEVRT_ARG_I8, INT8_MIN, INT8_MAX},     {"u8", DEVRT_ARG_U8, 0, UINT8_MAX},
    {"i16", DEVRT_ARG_I16, INT16_MIN, INT16_MAX}, {"u16", DEVRT_ARG_U16, 0, UINT16_MAX},
    {"i32", DEVRT_ARG_I32, INT32_MIN, INT32_MAX}, {"u32", DEVRT_ARG_U32, 0, UINT32_MAX},
    {"i64", DEVRT_ARG_I64, INT64_MIN, INT64_MAX}, {"u64", DEVRT_ARG_U64, 0, UINT64_MAX},
};

/* VALUE, in range for ARG's integer type, into its member of the union. */
static void store_int(struct devrt_arg *arg, uint64_t value)
{
    switch (arg->type) {
    case DEVRT_ARG_I8: arg->value.i8 = (int8_t)value; break;
    case DEVRT_ARG_U8: arg->value.u8 = (uint8_t)value; break;
    case DEVRT_ARG_I16: arg->value.i16 = (int16_t)value; break;
    case DEVRT_ARG_U16: arg->value.u16 = (uint16_t)value; break;
    case DEVRT_ARG_I32: arg->value.i32 = (int32_t)value; break;
    case DEVRT_ARG_U32: arg->value.u32 = (uint32_t)value; break;
    default: arg->value.u64 = value; break;
    }
}

/*
 * bytes:HEX, two hex digits a byte in memory order, for a struct passed by value; the
 * bytes are the caller's to free.
 */
static int parse_bytes(const char *hex, struct devrt_arg *arg)
{
    size_t digits = strlen(hex);
    if (digits / 2 > UINT32_MAX)
        return -1;
    unsigned char *bytes = malloc(digits / 2);
    if (!bytes)
        return -1;
    for (size_t i = 0; i < digits / 2; ++i) {
        char pair[3] = {hex[2 * i], hex[2 * i + 1], '\0'};
        bytes[i] = (unsigned char)strtoul(pair, NULL, 16);
    }
    *arg = (struct devrt_arg){
        .type = DEVRT_ARG_BYTES, .size = (uint32_t)(digits / 2), .value = {.pointer = bytes}};
    return 0;
}

/* Says why TEXT is not an argument, as devrt-run prints it; returns -1. */
static int refuse(char *why, size_t size, const char *text, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static int refuse(char *why, size_t size, const char *text, const char *format, ...)
{
    int used = snprintf(why, size, "%s: ", text);
    if (used >= 0 && (size_t)used < size) {
        va_list list;
        va_start(list, format);
        vsnprintf(why + used, size - (size_t)used, format, list);
        va_end(list);
    }
    return -1;
}

/*
 * VALUE, TYPE's text, as an unsigned number of up to MAX; -1 with WHY set if it is not one.
 * MIN is only for the message: TYPE's smallest value.
 */
static int parse_unsigned(const char *text, const char *type, const char *value,
                          unsigned long long min, unsigned long long max, unsigned long long *out,
                          char *why, size_t size)
{
    char *end;
    errno = 0;
    /* strtoull would skip a space, and then take a minus sign as wrapping around. */
    if (isspace((unsigned char)*value))
        return refuse(why, size, text, "not a number");
    unsigned long long v = strtoull(value, &end, 0);
    if (end == value || *end)
        return refuse(why, size, text, "not a number");
    if (*value == '-')
        return refuse(why, size, text, "%s is negative: %s takes %llu to %llu", value, type, min,
                      max);
    if (errno == ERANGE || v > max)
        return refuse(why, size, text, "%s is out of range for %s (0 to %llu)", value, type, max);
    *out = v;
    return 0;
}

/*
 * TEXT, TYPE:VALUE, into ARG; -1 with WHY saying what is wrong. A buffer argument's pointer
 * is left NULL and its size kept in *buffer: no device yet.
 */
static int parse_arg(const char *text, struct devrt_arg *arg, size_t *buffer, char *why,
                     size_t size)
{
    const char *colon = strchr(text, ':');
    if (!colon)
        return refuse(why, size, text, "expected TYPE:VALUE");
    if (!colon[1])
        return refuse(why, size, text, "no value after the type");
    size_t kind = (size_t)(colon - text);
    const char *value = colon + 1;
    char *end;
    errno = 0;
    if (kind == 3 && !strncmp(text, "buf", 3)) {
        unsigned long long bytes;
        if (parse_unsigned(text, "buf", value, 1, SIZE_MAX, &bytes, why, size))
            return -1;
        if (bytes == 0)
            return refuse(why, size, text, "buffers need at least 1 byte");
        arg->type = DEVRT_ARG_POINTER;
        arg->value.pointer = NULL;
        *buffer = (size_t)bytes;
        return 0;
    }
    /* A pointer that is no buffer: null alone, as no other address means anything here. */
    if (kind == 3 && !strncmp(text, "ptr", 3)) {
        if (strcmp(value, "0"))
            return refuse(why, size, text, "a pointer without a buffer is null (ptr:0)");
        arg->type = DEVRT_ARG_POINTER;
        arg->value.pointer = NULL;
        *buffer = 0;
        return 0;
    }
    if (kind == 5 && !strncmp(text, "bytes", 5)) {
        size_t digits = strlen(value);
        if (strspn(value, "0123456789abcdefABCDEF") != digits)
            return refuse(why, size, text, "expected hex digits, two a byte");
        if (digits % 2)
            return refuse(why, size, text, "%zu hex digits: a byte takes two", digits);
        if (digits / 2 > UINT32_MAX)
            return refuse(why, size, text, "%zu bytes: an argument holds at most %u", digits / 2,
                          UINT32_MAX);
        if (parse_bytes(value, arg))
            return refuse(why, size, text, "no memory for its %zu bytes", digits / 2);
        return 0;
    }
    if (kind == 3 && (!strncmp(text, "f32", 3) || !strncmp(text, "f64", 3))) {
        bool single = text[1] == '3';
        if (isspace((unsigned char)*value))
            return refuse(why, size, text, "not a number");
        arg->type = single ? DEVRT_ARG_F32 : DEVRT_ARG_F64;
        if (single)
            arg->value.f32 = strtof(value, &end);
        else
            arg->value.f64 = strtod(value, &end);
        if (end == value || *end)
            return refuse(why, size, text, "not a number");
        if (errno == ERANGE)
            return refuse(why, size, text, "%s is out of range for %.3s", value, text);
        return 0;
    }
    for (size_t i = 0; i < sizeof int_types / sizeof int_types[0]; ++i) {
        const struct int_type *t = &int_types[i];
        if (kind != strlen(t->name) || strncmp(text, t->name, kind))
            continue;
        arg->type = t->type;
        if (t->min == 0) {
            unsigned long long v;
            if (parse_unsigned(text, t->name, value, 0, t->max, &v, why, size))
                return -1;
            store_int(arg, v);
            return 0;
        }
        if (isspace((unsigned char)*value))
            return refuse(why, size, text, "not a number");
        long long v = strtoll(value, &end, 0);
        if (end == value || *end)
            return refuse(why, size, text, "not a number");
        if (errno == ERANGE || v < t->min || v > (long long)t->max)
            return refuse(why, size, text, "%s is out of range for %s (%lld to %lld)", value,
                          t->name, t->min, (long long)t->max);
        store_int(arg, (uint64_t)v);
        return 0;
    }
    return refuse(why, size, text, "unknown type %.*s", (int)kind, text);
}

#ifdef DEVRT_HAVE_AMDGPU_METADATA
/* NAME as a JSON string: metadata strings come from the file and may hold anything. */
static void json_string(const char *name)
{
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)name; *c; ++c) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if (*c < 0x20 || *c >= 0x7f)
            printf("\\u%04x", *c);
        else
            putchar(*c);
    }
    putchar('"');
}

/* The little-endian value of SIZE bytes at P (at most the first 8). */
static uint64_t load(const unsigned char *p, uint32_t size)
{
    uint64_t value = 0;
    for (uint32_t i = 0; i < size && i < 8; ++i)
        value |= (uint64_t)p[i] << (8 * i);
    return value;
}

/* SIZE bytes at P as two hex digits each, in memory order, after PREFIX. */
static void print_hex(const char *prefix, const unsigned char *p, uint32_t size)
{
    fputs(prefix, stdout);
    for (uint32_t i = 0; i < size; ++i)
        printf("%02x", p[i]);
}

static const char *type_name(enum devrt_arg_type type)
{
    for (size_t i = 0; i < sizeof int_types / sizeof int_types[0]; ++i)
        if (int_types[i].type == type)
            return int_types[i].name;
    return type == DEVRT_ARG_POINTER ? "buf" : type == DEVRT_ARG_F32 ? "f32" : "f64";
}

/* bytes:HEX as given, its end cut to "..." where TEXT has no room for it. */
static void describe_bytes(const struct devrt_arg *arg, char *text, size_t size)
{
    const unsigned char *bytes = arg->value.pointer;
    size_t used = (size_t)snprintf(text, size, "bytes:");
    for (uint32_t i = 0; i < arg->size; ++i) {
        bool last = i + 1 == arg->size;
        if (used + 2 + (last ? 0 : 3) >= size) {
            snprintf(text + used, size - used, "...");
            return;
        }
        used += (size_t)snprintf(text + used, size - used, "%02x", bytes[i]);
    }
}

/* The argument as given on the command line, beside its bytes. */
static void describe_arg(const struct devrt_arg *arg, size_t buffer, char *text, size_t size)
{
    switch (arg->type) {
    case DEVRT_ARG_POINTER:
        if (buffer)
            snprintf(text, size, "buf:%zu, null here", buffer);
        else
            snprintf(text, size, "ptr:0");
        break;
    case DEVRT_ARG_F32: snprintf(text, size, "f32:%g", (double)arg->value.f32); break;
    case DEVRT_ARG_F64: snprintf(text, size, "f64:%g", arg->value.f64); break;
    case DEVRT_ARG_I32: snprintf(text, size, "i32:%d", arg->value.i32); break;
    case DEVRT_ARG_I64: snprintf(text, size, "i64:%lld", (long long)arg->value.i64); break;
    case DEVRT_ARG_I8: snprintf(text, size, "i8:%d", arg->value.i8); break;
    case DEVRT_ARG_U8: snprintf(text, size, "u8:%u", arg->value.u8); break;
    case DEVRT_ARG_I16: snprintf(text, size, "i16:%d", arg->value.i16); break;
    case DEVRT_ARG_U16: snprintf(text, size, "u16:%u", arg->value.u16); break;
    case DEVRT_ARG_BYTES: describe_bytes(arg, text, size); break;
    default:
        snprintf(text, size, "%s:%llu", type_name(arg->type), (unsigned long long)arg->value.u64);
    }
}

static void print_text(const char *image, const char *target, const struct devrt_amdgpu_metadata *m,
                       const struct devrt_amdgpu_dispatch *d, const struct devrt_arg *args,
                       const size_t *buffers)
{
    const struct devrt_amdgpu_kernel *k = d->kernel;
    printf("kernel %s (%s) of %s: %s, code object version %u, on %s\n", k->name, k->symbol, image,
           m->isa, m->code_object_version, target);
    printf("packet: grid %u,%u,%u workitems, workgroup %u,%u,%u, %u dimension%s\n", d->grid_size[0],
           d->grid_size[1], d->grid_size[2], d->workgroup_size[0], d->workgroup_size[1],
           d->workgroup_size[2], d->dimensions, d->dimensions == 1 ? "" : "s");
    printf("segments: group %u bytes, private %u bytes", d->group_segment_size,
           d->private_segment_size);
    if (k->uses_dynamic_stack)
        printf(" (%u fixed + %u for its dynamic stack)", k->private_segment_fixed_size,
               DEVRT_AMDGPU_DYNAMIC_STACK_BYTES);
    printf(", kernarg %u bytes aligned to %u\n", d->kernarg_size, d->kernarg_align);
    /* What the server will accept from the image's waves, as module load sets it. */
    printf("waves: %u lanes; RPC requests of up to %u lanes\n", k->wavefront_size,
           devrt_amdgpu_rpc_lanes(m, k->wavefront_size));
    printf("%6s %4s  %-26s %s\n", "offset", "size", "kind", "value");
    size_t given = 0;
    for (size_t i = 0; i < k->arg_count; ++i) {
        const struct devrt_amdgpu_arg *a = &k->args[i];
        uint64_t value = load(d->kernarg + a->offset, a->size);
        char note[160] = "";
        if (!a->hidden) {
            char text[96];
            describe_arg(&args[given], buffers[given], text, sizeof text);
            snprintf(note, sizeof note, "  (argument %zu, %s)", given + 1, text);
            given++;
        } else if (devrt_amdgpu_hidden_zero_reason(a->value_kind)) {
            snprintf(note, sizeof note, "  (zero: %s)",
                     devrt_amdgpu_hidden_zero_reason(a->value_kind));
        }
        printf("%6u %4u  %-26s ", a->offset, a->size, a->value_kind);
        if (a->size > 8) /* wider than any integer: its bytes, as bytes:HEX takes them */
            print_hex("bytes:", d->kernarg + a->offset, a->size);
        else
            printf("0x%llx", (unsigned long long)value);
        printf("%s\n", note);
    }
}

static void print_json(const char *image, const char *target, const struct devrt_amdgpu_metadata *m,
                       const struct devrt_amdgpu_dispatch *d)
{
    const struct devrt_amdgpu_kernel *k = d->kernel;
    printf("{\"image\": ");
    json_string(image);
    printf(", \"image_isa\": ");
    json_string(m->isa);
    printf(", \"target\": ");
    json_string(target);
    printf(", \"code_object_version\": %u, \"kernel\": ", m->code_object_version);
    json_string(k->name);
    printf(", \"symbol\": ");
    json_string(k->symbol);
    printf(",\n \"dimensions\": %u, \"workgroup_size\": [%u, %u, %u], "
           "\"grid_size\": [%u, %u, %u],\n",
           d->dimensions, d->workgroup_size[0], d->workgroup_size[1], d->workgroup_size[2],
           d->grid_size[0], d->grid_size[1], d->grid_size[2]);
    printf(" \"group_segment_size\": %u, \"private_segment_size\": %u, "
           "\"uses_dynamic_stack\": %s, \"kernarg_size\": %u, \"kernarg_align\": %u,\n",
           d->group_segment_size, d->private_segment_size, k->uses_dynamic_stack ? "true" : "false",
           d->kernarg_size, d->kernarg_align);
    printf(" \"args\": [");
    for (size_t i = 0; i < k->arg_count; ++i) {
        const struct devrt_amdgpu_arg *a = &k->args[i];
        printf("%s\n  {\"offset\": %u, \"size\": %u, \"kind\": ", i ? "," : "", a->offset, a->size);
        json_string(a->value_kind);
        printf(", \"hidden\": %s, \"value\": ", a->hidden ? "true" : "false");
        if (a->size > 8) /* no integer holds it: its bytes are in "kernarg" */
            printf("null}");
        else
            printf("%llu}", (unsigned long long)load(d->kernarg + a->offset, a->size));
    }
    printf("],\n \"kernarg\": \"");
    print_hex("", d->kernarg, d->kernarg_size);
    printf("\"}\n");
}
#endif

/* --explain: the dispatch, printed; nothing is opened but the image. */
static int explain(const char *image, const char *kernel, const char *target, bool json,
                   const struct devrt_launch_config *config, const struct devrt_arg *args,
                   const size_t *buffers, size_t arg_count)
{
#ifdef DEVRT_HAVE_AMDGPU_METADATA
    size_t size;
    char *bytes = devrt_read_image(image, &size);
    struct devrt_amdgpu_metadata *m = NULL;
    int status = bytes ? devrt_amdgpu_metadata_read(bytes, size, image, &m) : DEVRT_ERROR_IMAGE;
    free(bytes);
    struct devrt_amdgpu_dispatch d;
    struct devrt_amdgpu_agent agent = {.isa = target};
    if (status == DEVRT_SUCCESS)
        status = devrt_amdgpu_dispatch_make(m, image, &agent, kernel, config, args, arg_count, &d);
    if (status != DEVRT_SUCCESS) {
        fprintf(stderr, "devrt-run: %s\n", devrt_last_error());
        devrt_amdgpu_metadata_free(m);
        return 2;
    }
    if (json)
        print_json(image, target, m, &d);
    else
        print_text(image, target, m, &d, args, buffers);
    devrt_amdgpu_dispatch_free(&d);
    devrt_amdgpu_metadata_free(m);
    return 0;
#else
    (void)image, (void)kernel, (void)target, (void)json, (void)config, (void)args, (void)buffers,
        (void)arg_count;
    fprintf(stderr, "devrt-run: --explain needs devrt built with libelf and msgpack-c\n");
    return 2;
#endif
}

/* --list: every device each backend sees, by opening them in turn; a backend without any
   says why (its library is missing, or it sees no GPU). */
static int list_devices(void)
{
    for (enum devrt_backend backend = devrt_backend_next(DEVRT_BACKEND_AUTO);
         backend != DEVRT_BACKEND_AUTO; backend = devrt_backend_next(backend)) {
        const char *name = devrt_backend_name(backend);
        /* Bounded: a backend that opened every index would otherwise never end the list. */
        for (int index = 0; index < 64; ++index) {
            devrt_device *device;
            if (devrt_device_open(backend, index, NULL, &device) != DEVRT_SUCCESS) {
                if (index == 0)
                    printf("%s: no device: %s\n", name, devrt_last_error());
                break;
            }
            struct devrt_device_info info;
            devrt_device_get_info(device, &info);
            printf("%s %d: %s, wave %u, ", name, index, info.name, info.wave_size);
            if (info.memory_bytes)
                printf("%.1f GiB", (double)info.memory_bytes / (1u << 30));
            else
                printf("memory unknown");
            /* Where opening it went: the driver's start, then devrt's own set-up. */
            printf(", opened in %.3f ms (driver %.3f, devrt %.3f)",
                   (double)(info.open_driver_ns + info.open_runtime_ns) * 1e-6,
                   (double)info.open_driver_ns * 1e-6, (double)info.open_runtime_ns * 1e-6);
            /* The server thread's CPUs, and what chose them (host.h's placements). */
            if (info.server_placement == DEVRT_SERVER_ANYWHERE)
                printf(", server on any CPU\n");
            else
                printf(", server on CPUs %s (%s)\n", info.server_cpus,
                       devrt_server_placement_name(info.server_placement));
            devrt_device_close(device);
        }
    }
    return 0;
}

/* Everything after the command line: check, open, load, launch. Returns the exit status. */
static int run(const char *image, const char *kernel, enum devrt_backend backend, int index,
               const struct devrt_device_options *options, const struct devrt_launch_config *config,
               struct devrt_arg *args, const size_t *buffers, size_t arg_count, const char *trace)
{
    /* An image per GPU (kernels.{target}.hsaco) is known once the device is open. */
    bool per_target = strstr(image, "{target}") != NULL;
    if (per_target && backend == DEVRT_BACKEND_AUTO) {
        fprintf(stderr, "devrt-run: %s names {target}: say which backend with --backend\n", image);
        return 2;
    }
    /* Before the device: wrong geometry, a missing file or wrong arguments need no GPU to
       be told. The geometry first, so that its check is seen to pass where the
       arguments' then fails. */
    if (devrt_check_geometry(config) ||
        (!per_target && devrt_image_check_args(image, backend, kernel, args, arg_count))) {
        fprintf(stderr, "devrt-run: %s\n", devrt_last_error());
        return 2;
    }
    if (backend == DEVRT_BACKEND_AUTO) {
        backend = devrt_image_backend(image);
        if (backend == DEVRT_BACKEND_AUTO) {
            /* Most often the file is no image at all (a typo, a text file), which "use
               --backend" alone would hide. */
            fprintf(stderr,
                    "devrt-run: %s: not an image of any backend (an amdgcn code object, PTX or "
                    "an emulation shared object); if it is one, name its backend with "
                    "--backend\n",
                    image);
            return 2;
        }
    }

    /* --trace names the one file: the environment's would trace the device a second time. */
    if (trace)
        unsetenv("DEVRT_TRACE");
    devrt_device *device;
    if (devrt_device_open(backend, index, options, &device) != DEVRT_SUCCESS) {
        fprintf(stderr, "devrt-run: %s backend: %s\n", devrt_backend_name(backend),
                devrt_last_error());
        return 2;
    }
    int exit_code = 0;
    if (trace && devrt_device_trace(device, trace) != DEVRT_SUCCESS) {
        fprintf(stderr, "devrt-run: %s\n", devrt_last_error());
        exit_code = 2;
    }
    char path[4096];
    if (per_target && (devrt_device_image_path(device, image, path, sizeof path) ||
                       devrt_image_check_args(path, backend, kernel, args, arg_count))) {
        fprintf(stderr, "devrt-run: %s\n", devrt_last_error());
        exit_code = 2;
    }
    if (per_target)
        image = path;
    for (size_t i = 0; i < arg_count && !exit_code; ++i) {
        if (args[i].type != DEVRT_ARG_POINTER || !buffers[i]) /* ptr:0 stays null */
            continue;
        args[i].value.pointer = devrt_mem_alloc(device, buffers[i]);
        if (!args[i].value.pointer) {
            fprintf(stderr, "devrt-run: no device memory for a buffer of %zu bytes: %s\n",
                    buffers[i], devrt_last_error());
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
        } else if (status == DEVRT_ERROR_TIMEOUT) {
            fprintf(stderr, "devrt-run: %s\n", devrt_last_error());
            exit_code = 3;
            if (!devrt_device_stops_kernels(device)) {
                /* The kernel runs on, and unloading its module would wait for it: the
                   process's end ends it. Its output so far is written. */
                fflush(NULL);
                _exit(exit_code);
            }
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
    const char *image = NULL, *kernel = NULL, *target = NULL, *trace = NULL;
    bool explaining = false, json = false;
    struct devrt_launch_config config = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    enum devrt_backend backend = DEVRT_BACKEND_AUTO;
    struct devrt_device_options options = {0};
    int index = 0;
    int first_arg = argc;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--")) {
            first_arg = i + 1;
            break;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            if (argc != 2)
                return bad_usage("--version takes nothing else", NULL);
            printf("devrt-run (devrt %s), device ABI %u, bitcode of LLVM %s\n",
                   DEVRT_PROJECT_VERSION, DEVRT_ABI_VERSION, DEVRT_LLVM_MAJOR);
            return 0;
        } else if (option(argc, argv, &i, "--grid", &v) || option(argc, argv, &i, "--block", &v)) {
            const char *name = a[2] == 'g' ? "--grid" : "--block";
            char why[128];
            if (!v)
                return bad_usage("expected X[,Y,Z] after", name);
            if (parse_dims(v, a[2] == 'g' ? config.grid : config.block, why, sizeof why)) {
                fprintf(stderr, "devrt-run: %s %s: %s\ndevrt-run: see devrt-run --help\n", name, v,
                        why);
                return 2;
            }
        } else if (!strcmp(a, "--list")) {
            if (argc != 2)
                return bad_usage("--list takes nothing else", NULL);
            return list_devices();
        } else if (!strcmp(a, "--explain")) {
            explaining = true;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (option(argc, argv, &i, "--target", &v)) {
            if (!v || !v[0])
                return bad_usage("expected a GPU such as gfx1100 after", "--target");
            target = v;
        } else if (option(argc, argv, &i, "--backend", &v)) {
            if (devrt_backend_parse(v ? v : "", &backend) != DEVRT_SUCCESS)
                return bad_usage(devrt_last_error(), NULL);
        } else if (option(argc, argv, &i, "--device", &v)) {
            const char *n = v ? v : "";
            char *end;
            errno = 0;
            long v = strtol(n, &end, 10);
            if (!*n || *end || errno || v < 0 || v > INT32_MAX)
                return bad_usage("expected a device number (0, 1, ...) after --device, not", n);
            index = (int)v;
        } else if (option(argc, argv, &i, "--timeout", &v)) {
            const char *t = v ? v : "";
            char *end;
            errno = 0;
            double seconds = strtod(t, &end);
            if (!*t || *end || errno || !(seconds >= 1e-9 && seconds <= 1e6))
                return bad_usage("expected seconds, at least 1e-9 and at most 1e6, after "
                                 "--timeout, not",
                                 t);
            config.timeout_ns = (uint64_t)(seconds * 1e9);
        } else if (option(argc, argv, &i, "--trace", &v)) {
            if (!v || !*v)
                return bad_usage("expected a file after", "--trace");
            trace = v;
        } else if (option(argc, argv, &i, "--wave", &v)) {
            const char *w = v ? v : "";
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
    if ((target || json) && !explaining)
        return bad_usage(target ? "--target" : "--json", "only with --explain");
    if (explaining && (!target || !kernel))
        return bad_usage(!kernel ? "--explain needs a KERNEL" : "--explain needs --target", NULL);
    if (!kernel)
        kernel = "main";

    size_t arg_count = (size_t)(argc - first_arg);
    struct devrt_arg *args = calloc(arg_count ? arg_count : 1, sizeof *args);
    size_t *buffers = calloc(arg_count ? arg_count : 1, sizeof *buffers);
    int exit_code = args && buffers ? 0 : 2;
    for (size_t i = 0; i < arg_count && !exit_code; ++i) {
        char why[256];
        if (parse_arg(argv[first_arg + (int)i], &args[i], &buffers[i], why, sizeof why)) {
            /* The reason, and where the types are: the whole usage would bury it. */
            fprintf(stderr, "devrt-run: %s\ndevrt-run: see devrt-run --help for argument types\n",
                    why);
            exit_code = 2;
        }
    }
    if (!exit_code && explaining)
        exit_code = explain(image, kernel, target, json, &config, args, buffers, arg_count);
    else if (!exit_code)
        exit_code =
            run(image, kernel, backend, index, &options, &config, args, buffers, arg_count, trace);
    for (size_t i = 0; args && i < arg_count; ++i)
        if (args[i].type == DEVRT_ARG_BYTES)
            free(args[i].value.pointer);
    free(args);
    free(buffers);
    return exit_code;
}
