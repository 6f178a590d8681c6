/*
 * Modules: a loaded code object with its state block and RPC channel, launches, and the
 * report of what went wrong in one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <devrt/attach.h>

#include "geometry.h"
#include "runtime.h"

/* The backend's default: enough ports for every wave the device can hold at once. */
#define DEVRT_DEFAULT_PORTS 1024u

static int check_library(devrt_module *module)
{
    devrt_device *device = module->device;
    struct devrt_state *initial = NULL;
    struct devrt_library_id id = {0};
    if (device->ops->read(device, &initial, module->state_variable, sizeof initial) != 0 ||
        device->ops->read(device, &id, initial, sizeof id) != 0)
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s: cannot read its __devrt_state", module->path);
    if (id.magic != DEVRT_STATE_MAGIC)
        return devrt_fail(DEVRT_ERROR_ABI_MISMATCH,
                          "%s: __devrt_state does not point at a devrt library id (magic 0x%08x); "
                          "was it attached already, or built by something else?",
                          module->path, id.magic);
    if (id.abi_version != DEVRT_ABI_VERSION)
        return devrt_fail(DEVRT_ERROR_ABI_MISMATCH,
                          "%s: its device library speaks devrt ABI version %u, this host runtime "
                          "version %u; rebuild the image against this devrt",
                          module->path, id.abi_version, DEVRT_ABI_VERSION);
    return DEVRT_SUCCESS;
}

/*
 * A module's initial device state, in one allocation of device memory so that the backend
 * zeroes it once and one write sets it up: what __devrt_state points at, the channel and
 * the heap's control block, followed by the zeroed tables they point at (initial_tables).
 */
struct devrt_initial_state {
    struct devrt_state state;
    struct devrt_rpc_channel channel;
    struct devrt_heap heap;
};

static size_t align_to(size_t value, size_t alignment)
{
    return (value + alignment - 1) / alignment * alignment;
}

/*
 * The server's state of each port, zeroed: 2 MiB for 1024 ports, mapped rather than taken
 * with calloc. Once a free has raised glibc's mmap threshold past that size, calloc takes it
 * from the heap and zeroes it, 90 us of every warm load on the H200; fresh pages are zero
 * already, and the server touches only the ports that are used.
 */
static void map_port_states(devrt_module *module, uint32_t ports)
{
    size_t bytes = ports * sizeof(struct devrt_port_state);
    void *states = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    module->ports = states == MAP_FAILED ? NULL : states;
    module->ports_bytes = module->ports ? bytes : 0;
}

static void free_channel(devrt_module *module)
{
    devrt_device *device = module->device;
    device->ops->free(device, module->rpc_memory, DEVRT_MEMORY_HOST_RAW);
    device->ops->free(device, module->initial_state, DEVRT_MEMORY_DEVICE);
    module->rpc_memory = module->initial_state = NULL;
    if (module->ports)
        munmap(module->ports, module->ports_bytes);
    module->ports = NULL;
    free(module->pending);
    module->pending = NULL;
    devrt_heap_detach(module);
}

/*
 * Reserve the module's memory, then set up its initial state with one write and point
 * __devrt_state at it with another: the memory step of the load's times began at SINCE.
 */
static int attach_state(devrt_module *module, uint64_t since)
{
    devrt_device *device = module->device;
    const struct devrt_backend_ops *ops = device->ops;
    uint32_t ports = 1;
    while (ports < device->rpc_ports && ports < (1u << 20))
        ports *= 2; /* the device picks a port with a mask */
    if (!device->rpc_ports)
        ports = DEVRT_DEFAULT_PORTS;
    /* Device memory: the initial state, the ready ring's counter (a line of its own: every
       announcement adds to it), the ports' state words, the heap's tables. */
    size_t ring_next = align_to(sizeof(struct devrt_initial_state), 128);
    size_t port_words = ring_next + 128;
    size_t heap_tables = align_to(port_words + ports * sizeof(uint32_t), 128);
    size_t device_bytes = heap_tables + devrt_heap_plan(module);
    /*
     * Host-visible memory: the buffers, then the mailboxes and the ready ring, the only parts
     * read before written. The ring has room for two announcements a port (up to its
     * largest size): a port announces again only once served, so it fills only if the
     * server falls a whole ring behind, and then the passes serve what it lost.
     */
    size_t buffer_bytes = ports * sizeof(struct devrt_rpc_buffer);
    uint32_t ring_size = 0;
    if (devrt_faults_ready_ring(device))
        ring_size = 2 * ports < DEVRT_RPC_RING_MAX ? 2 * ports : DEVRT_RPC_RING_MAX;
    size_t mailbox_bytes = 2 * ports * sizeof(uint32_t) + ring_size * sizeof(uint64_t);
    char *initial = ops->alloc(device, device_bytes, DEVRT_MEMORY_DEVICE);
    char *rpc = ops->alloc(device, buffer_bytes + mailbox_bytes, DEVRT_MEMORY_HOST_RAW);
    module->initial_state = initial;
    module->rpc_memory = rpc;
    map_port_states(module, ports);
    module->pending = ring_size ? malloc(ports * sizeof *module->pending) : NULL;
    if (!initial || !rpc || !module->ports || (ring_size && !module->pending)) {
        free_channel(module);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for %u RPC ports", ports);
    }
    memset(rpc + buffer_bytes, 0, mailbox_bytes);
    struct devrt_initial_state *device_state = (struct devrt_initial_state *)initial;
    module->state = &device_state->state;
    module->channel = &device_state->channel;
    struct devrt_rpc_channel *c = &module->host_channel;
    /* The lanes a request may name: an amdgcn image's kernels may run waves wider than the
       GPU's own (-mwavefrontsize64 on gfx10 and later); each buffer has room for 64. */
    uint32_t lanes = ops->rpc_lanes ? ops->rpc_lanes(module) : device->wave_size;
    *c = (struct devrt_rpc_channel){
        .port_count = ports,
        .wave_size = lanes,
        .state = (uint32_t *)(initial + port_words),
        .buffers = (struct devrt_rpc_buffer *)rpc,
        .outbox = (uint32_t *)(rpc + buffer_bytes),
        .inbox = (uint32_t *)(rpc + buffer_bytes) + ports,
        .doorbell = device->doorbell,
        .ring = ring_size ? (uint64_t *)(rpc + buffer_bytes + 2 * ports * sizeof(uint32_t)) : NULL,
        .ring_next = (uint32_t *)(initial + ring_next),
        .ring_size = ring_size,
    };
    /* Aligned as the heap's shards are (abi: _Alignas in heap.h). */
    struct devrt_initial_state *state =
        aligned_alloc(_Alignof(struct devrt_initial_state),
                      align_to(sizeof *state, _Alignof(struct devrt_initial_state)));
    if (state)
        memset(state, 0, sizeof *state);
    int status =
        state ? devrt_heap_attach(module, &state->heap, &device_state->heap, initial + heap_tables)
              : devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a module's state");
    if (status != DEVRT_SUCCESS) {
        free(state);
        free_channel(module);
        return status;
    }
    state->state = (struct devrt_state){
        .magic = DEVRT_STATE_MAGIC,
        .abi_version = DEVRT_ABI_VERSION,
        .size = sizeof state->state,
        .flags = devrt_faults_state_flags(device),
        .exception = module->slot,
        .rpc = module->channel,
        .heap = &device_state->heap,
    };
    state->channel = *c;
    uint64_t written = devrt_now_ns();
    module->info.load_memory_ns = written - since;
    /* The backend's zeroing of the rest comes first: both are its copies, in order. */
    if (ops->write(device, device_state, state, sizeof *state) != 0 ||
        ops->write(device, module->state_variable, &module->state, sizeof module->state) != 0) {
        free(state);
        free_channel(module);
        return devrt_fail(DEVRT_ERROR_BACKEND, "%s: cannot write its kernel state", module->path);
    }
    free(state);
    module->info.load_state_ns = devrt_now_ns() - written;
    return DEVRT_SUCCESS;
}

static void free_image(devrt_module *module)
{
    free(module->image);
    module->image = NULL;
}

int devrt_module_load(devrt_device *device, const char *path, devrt_module **out)
{
    if (!device || !path || !out)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_module_load: missing argument");
    *out = NULL;
    int lost = devrt_device_check_lost(device);
    if (lost != DEVRT_SUCCESS)
        return lost;
    devrt_module *module = calloc(1, sizeof *module);
    if (!module || !(module->path = strdup(path))) {
        free(module);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a module");
    }
    module->device = device;
    module->report_file = stderr;
    module->output_file = stdout;
    pthread_mutex_init(&module->error_lock, NULL);
    pthread_mutex_init(&module->output_lock, NULL);
    struct devrt_module_info *info = &module->info;
    uint64_t start = devrt_now_ns();
    /* Read once: the kind is told from it, and the backend loads it from memory. */
    int status = DEVRT_SUCCESS;
    if (!device->ops->loaded_by_program) {
        module->image = devrt_read_image(path, &module->image_size);
        status = module->image
                     ? devrt_image_check_kind(module->image, module->image_size, path, device->kind)
                     : DEVRT_ERROR_IMAGE;
    }
    if (status == DEVRT_SUCCESS)
        status = device->ops->load(module, &module->state_variable);
    uint64_t loaded = devrt_now_ns();
    info->load_image_ns = loaded - start;
    if (status == DEVRT_SUCCESS) {
        status = check_library(module);
        uint64_t checked = devrt_now_ns();
        info->load_check_ns = checked - loaded;
        if (status == DEVRT_SUCCESS && !devrt_launches_attach(module))
            status = DEVRT_ERROR_OUT_OF_MEMORY;
        if (status == DEVRT_SUCCESS)
            status = attach_state(module, checked);
        if (status != DEVRT_SUCCESS) {
            devrt_launches_detach(module);
            device->ops->unload(module);
        }
    }
    /* A backend that found the device lost while loading (a copy to a GPU that stopped) says
       so in the loss, not in the step that failed. */
    if (status != DEVRT_SUCCESS && devrt_device_is_lost(device))
        status = devrt_device_check_lost(device);
    if (status != DEVRT_SUCCESS) {
        free_image(module);
        pthread_mutex_destroy(&module->error_lock);
        pthread_mutex_destroy(&module->output_lock);
        free(module->path);
        free(module);
        return status;
    }
    devrt_server_attach(device, module);
    *out = module;
    return DEVRT_SUCCESS;
}

void devrt_module_unload(devrt_module *module)
{
    if (!module)
        return;
    if (module->attached && !module->detaching) {
        devrt_detach(module);
        return;
    }
    devrt_device *device = module->device;
    bool left = devrt_launches_detach(module);
    devrt_server_detach(device, module);
    if (module->attached)
        devrt_server_expect(device, -1);
    if (left) {
        /* Freed under a running kernel, its code and memory would fault the GPU. */
        if (module->report_file) {
            fprintf(module->report_file,
                    "devrt: %s unloaded while a kernel of it runs on past its timeout: its "
                    "code and device memory are left to it\n",
                    module->path);
            fflush(module->report_file);
        }
    } else {
        device->ops->unload(module);
        free_channel(module);
        /* Left with the code when a kernel keeps it: the loader may read it still. */
        free_image(module);
    }
    pthread_mutex_destroy(&module->error_lock);
    pthread_mutex_destroy(&module->output_lock);
    free(module->muted);
    free(module->path);
    if (!devrt_faults_leak_module(&device->server))
        free(module);
}

int devrt_module_get_info(const devrt_module *module, struct devrt_module_info *info)
{
    if (!module || !info)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_module_get_info: missing argument");
    *info = module->info;
    return DEVRT_SUCCESS;
}

void devrt_module_set_report_file(devrt_module *module, FILE *file)
{
    if (module)
        module->report_file = file;
}

/*
 * Device strings are read in chunks that never cross a multiple of this, so a chunk never
 * spans two pages: one that fails holds an unreadable byte, not only bytes past the end.
 */
#define DEVRT_STRING_CHUNK 64u

/*
 * Read a NUL-terminated device string with a bound, through the backend's read, which
 * checks the address first. A chunk that fails is read again a byte at a time up to the
 * NUL: the string's allocation may end inside it. What cannot be read is reported, never
 * faulted on.
 */
static void read_device_string(devrt_device *device, uint64_t address, char *out, size_t size)
{
    size_t n = 0;
    while (address && n + 1 < size) {
        uint64_t at = address + n;
        size_t chunk = DEVRT_STRING_CHUNK - (size_t)(at % DEVRT_STRING_CHUNK);
        if (chunk > size - 1 - n)
            chunk = size - 1 - n;
        if (device->ops->read(device, out + n, (const char *)(uintptr_t)at, chunk) != 0) {
            for (size_t i = 0; i < chunk; ++i) {
                if (device->ops->read(device, out + n + i, (const char *)(uintptr_t)at + i, 1) !=
                    0) {
                    snprintf(out, size, "(unreadable string at 0x%" PRIx64 ")", address);
                    return;
                }
                if (out[n + i] == '\0')
                    return;
            }
        } else if (memchr(out + n, '\0', chunk)) {
            return;
        }
        n += chunk;
    }
    out[n] = '\0';
}

static void unflatten(uint64_t flat, const uint32_t size[3], uint32_t out[3])
{
    out[0] = (uint32_t)(flat % size[0]);
    out[1] = (uint32_t)(flat / size[0] % size[1]);
    out[2] = (uint32_t)(flat / size[0] / size[1]);
}

static void describe_exception(devrt_module *module, const char *kernel,
                               const struct devrt_launch_config *config,
                               const struct devrt_exception_record *record, bool read_strings,
                               struct devrt_launch_report *report)
{
    report->code = DEVRT_EXCEPTION_WORD_CODE(record->word);
    unflatten(DEVRT_EXCEPTION_WORD_WORKGROUP(record->word), config->grid, report->workgroup);
    unflatten(DEVRT_EXCEPTION_WORD_WORKITEM(record->word), config->block, report->workitem);
    if (__atomic_load_n(&record->detail_ready, __ATOMIC_ACQUIRE)) {
        if (read_strings) {
            read_device_string(module->device, record->message, report->message,
                               sizeof report->message);
            read_device_string(module->device, record->file, report->file, sizeof report->file);
        }
        report->line = record->line;
        report->value = record->value;
    }
    int n = snprintf(report->text, sizeof report->text,
                     "kernel %s raised %s at workgroup (%u,%u,%u) workitem (%u,%u,%u)", kernel,
                     devrt_exception_name(report->code), report->workgroup[0], report->workgroup[1],
                     report->workgroup[2], report->workitem[0], report->workitem[1],
                     report->workitem[2]);
    size_t used = (size_t)n < sizeof report->text ? (size_t)n : sizeof report->text - 1;
    if (report->message[0])
        used += (size_t)snprintf(report->text + used, sizeof report->text - used, ": %s",
                                 report->message);
    if (used < sizeof report->text && report->value)
        used += (size_t)snprintf(report->text + used, sizeof report->text - used,
                                 " (value 0x%" PRIx64 ")", report->value);
    if (used < sizeof report->text && report->file[0])
        snprintf(report->text + used, sizeof report->text - used, " [%s:%u]", report->file,
                 report->line);
}

/*
 * ARGS against what KERNEL takes, as the backend's describe_kernel says: where it records
 * the parameters, their count before anything of ARGS is read.
 */
int devrt_check_launch_args(devrt_module *module, const char *kernel, const struct devrt_arg *args,
                            size_t arg_count)
{
    struct devrt_kernel_description d = {0};
    int status = module->device->ops->describe_kernel(module, kernel, &d);
    if (status != DEVRT_SUCCESS)
        return status;
    if (d.param_sizes) {
        struct devrt_params params = {d.param_count, d.param_sizes, d.param_kinds, d.param_names};
        status = devrt_check_arguments("devrt_launch", kernel, &params, args, arg_count);
    } else {
        status = devrt_check_arg_types("devrt_launch", args, arg_count);
    }
    for (size_t i = 0; status == DEVRT_SUCCESS && d.no_bytes_by_value && i < arg_count; ++i)
        if (args[i].type == DEVRT_ARG_BYTES)
            status = devrt_fail(DEVRT_ERROR_ARGUMENTS,
                                "kernel %s: argument %zu is %u byte%s by value, %s", kernel, i + 1,
                                args[i].size, args[i].size == 1 ? "" : "s", d.no_bytes_by_value);
    return status;
}

/* What devrt_launch and devrt_launch_async refuse before anything is queued. */
int devrt_validate_launch(devrt_module *module, const char *kernel,
                          const struct devrt_launch_config *config, const struct devrt_arg *args,
                          size_t arg_count)
{
    /* Named, since a caller passing four pointers cannot tell from "missing" which it was. */
    const char *missing = !module ? "module" : !kernel ? "kernel" : !config ? "config" : NULL;
    if (missing)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_launch: %s is NULL", missing);
    if (arg_count && !args)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "devrt_launch: args is NULL, with a count of %zu", arg_count);
    if (module->attached)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "%s: attached to a module the program launches itself; launch its "
                          "kernels through the program's API",
                          module->path);
    /* The arguments' types are checked with them (devrt_check_arguments), after their count. */
    int status = devrt_check_geometry(config);
    const struct devrt_backend_ops *ops = module->device->ops;
    if (status == DEVRT_SUCCESS && ops->check_launch)
        status = ops->check_launch(module, kernel, config, args, arg_count);
    else if (status == DEVRT_SUCCESS)
        status = devrt_check_launch_args(module, kernel, args, arg_count);
    return status;
}

void devrt_describe_exception(devrt_module *module, const char *kernel,
                              const struct devrt_launch_config *config,
                              const struct devrt_exception_record *record, bool read_strings,
                              struct devrt_launch_report *report)
{
    describe_exception(module, kernel, config, record, read_strings, report);
}

/* The accessors of backend.h: backends see a module through these alone. */
devrt_device *devrt_module_device(const devrt_module *module)
{
    return module->device;
}
void *devrt_module_backend_state(const devrt_module *module)
{
    return module->backend;
}
void devrt_module_set_backend_state(devrt_module *module, void *state)
{
    module->backend = state;
}
const char *devrt_module_path(const devrt_module *module)
{
    return module->path;
}
void *devrt_module_image(const devrt_module *module)
{
    return module->image;
}
size_t devrt_module_image_size(const devrt_module *module)
{
    return module->image_size;
}
FILE *devrt_module_report_file(const devrt_module *module)
{
    return module->report_file;
}
struct devrt_state *devrt_module_state(const devrt_module *module)
{
    return module->state;
}
struct devrt_state **devrt_module_state_variable(const devrt_module *module)
{
    return module->state_variable;
}
