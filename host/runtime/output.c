/*
 * Output: the server's handlers for DEVRT_RPC_OUTPUT and DEVRT_RPC_PRINTF, and where a
 * module's output goes. Each lane's message becomes one unit, written whole as soon as its
 * request arrives, so output streams while the kernel runs and never interleaves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devrt/output.h>

#include "format.h"
#include "runtime.h"

_Static_assert(DEVRT_OUTPUT_RAW == DEVRT_OUTPUT_CONTEXT_RAW &&
                   DEVRT_OUTPUT_PRINTF == DEVRT_OUTPUT_CONTEXT_PRINTF,
               "the host's output streams are the device's output contexts");

/*
 * The module whose output callback this thread (the server) is calling, with the module's
 * output lock held: the callback may choose where the module's output goes next, which
 * must not wait for the lock its own caller holds.
 */
static _Thread_local devrt_module *in_callback;

static void lock_output(devrt_module *module)
{
    if (in_callback != module)
        pthread_mutex_lock(&module->output_lock);
}

static void unlock_output(devrt_module *module)
{
    if (in_callback != module)
        pthread_mutex_unlock(&module->output_lock);
}

void devrt_module_set_output_file(devrt_module *module, FILE *file)
{
    if (!module)
        return;
    lock_output(module);
    module->output_file = file;
    module->output_fn = NULL; /* the latest choice wins */
    module->output_context = NULL;
    unlock_output(module);
}

void devrt_module_set_output_callback(devrt_module *module, devrt_output_fn *fn, void *context)
{
    if (!module)
        return;
    lock_output(module);
    module->output_fn = fn;
    module->output_context = context;
    unlock_output(module);
}

void devrt_output_flush(devrt_module *module)
{
    pthread_mutex_lock(&module->output_lock);
    if (module->output_file && !module->output_fn)
        fflush(module->output_file);
    pthread_mutex_unlock(&module->output_lock);
}

void devrt_output_mute(devrt_module *module, const struct devrt_exception_record *record)
{
    pthread_mutex_lock(&module->output_lock);
    if (module->muted_count == module->muted_capacity) {
        size_t capacity = module->muted_capacity ? 2 * module->muted_capacity : 4;
        const struct devrt_exception_record **muted =
            realloc(module->muted, capacity * sizeof *muted);
        if (muted) {
            module->muted = muted;
            module->muted_capacity = capacity;
        }
    }
    if (module->muted_count < module->muted_capacity)
        module->muted[module->muted_count++] = record;
    else
        module->muted_all = true;
    pthread_mutex_unlock(&module->output_lock);
}

/* Whether the output of the launch of RECORD is dropped. Under the output lock. */
static bool muted(const devrt_module *module, uint64_t record)
{
    if (module->muted_all)
        return true;
    for (size_t i = 0; i < module->muted_count; ++i)
        if ((uint64_t)(uintptr_t)module->muted[i] == record)
            return true;
    return false;
}

uint64_t devrt_module_output_dropped(devrt_module *module)
{
    if (!module)
        return 0;
    pthread_mutex_lock(&module->output_lock);
    uint64_t dropped = module->output_dropped;
    pthread_mutex_unlock(&module->output_lock);
    return dropped;
}

/*
 * The server's text and copy buffers go back after a request that made them larger than
 * this: a wave of long writes fills a few MiB, and growing the buffers anew for every one
 * of them (fresh pages, faulted in) cost more than the copy.
 */
#define KEPT_TEXT (4u << 20)

/* Units of one request, rendered one after another into one text. */
struct units {
    uint32_t count;
    size_t end[DEVRT_RPC_MAX_LANES];      /* where each unit ends in the text */
    uint32_t stream[DEVRT_RPC_MAX_LANES]; /* its output context */
};

/*
 * To a callback one unit at a time; to a file in one write, which cannot cut or interleave
 * a unit either, and costs one lock of the FILE instead of one per lane. A callback that
 * sends the output elsewhere sends the request's next units there too.
 */
static void write_units(struct devrt_request *request, const struct devrt_text *text,
                        const struct units *units)
{
    devrt_module *module = request->module;
    /* For the trace: every text starts at 0, so the last unit ends where their bytes do. */
    request->units += units->count;
    request->bytes += units->count ? units->end[units->count - 1] : 0;
    size_t start = 0;
    for (uint32_t i = 0; i < units->count && module->output_fn; ++i) {
        devrt_module *outer = in_callback;
        in_callback = module;
        module->output_fn(module->output_context, units->stream[i], text->data + start,
                          units->end[i] - start);
        in_callback = outer;
        start = units->end[i];
    }
    if (!module->output_fn && module->output_file && units->count)
        fwrite(text->data + start, 1, units->end[units->count - 1] - start, module->output_file);
}

/*
 * The bytes of raw writes left in device memory (DEVRT_OUTPUT_AT_ADDRESS), read with the
 * backend's read_serving. A wave's lanes mostly write from neighbouring memory (a slice
 * each of one array): when the first records of a request lie close together, one copy
 * takes them all (the window), which costs one transfer's latency instead of one a lane.
 */
struct device_source {
    struct devrt_output_source source;
    devrt_device *device;
    struct devrt_text *window, *scratch; /* the server's, kept between requests */
    uint64_t window_start;               /* the window holds [start, start + window->length) */
};

/* A window reads less than this, and at most twice what the writes hold, plus a page: its
   buffer, kept between requests, stays within it. */
#define WINDOW_MAX (16u << 20)

static bool fetch_into(struct device_source *s, struct devrt_text *buffer, uint64_t address,
                       size_t length)
{
    buffer->length = 0;
    buffer->failed = false;
    if (!devrt_text_reserve(buffer, length + 1) ||
        s->device->ops->read_serving(s->device, buffer->data, (const void *)(uintptr_t)address,
                                     length) != 0)
        return false;
    buffer->length = length;
    return true;
}

static const char *fetch(const struct devrt_output_source *source, uint64_t address,
                         uint32_t length)
{
    struct device_source *s = (struct device_source *)source;
    if (!s->device->ops->read_serving)
        return NULL;
    if (address >= s->window_start && length <= s->window->length &&
        address - s->window_start <= s->window->length - length)
        return s->window->data + (address - s->window_start);
    return fetch_into(s, s->scratch, address, length) ? s->scratch->data : NULL;
}

/* Reads the request's writes into the window in one copy where they lie close together. */
static void fill_window(struct device_source *s, const struct devrt_request *request)
{
    uint64_t low = UINT64_MAX, high = 0, total = 0;
    unsigned count = 0;
    s->window->length = 0;
    s->window_start = 0;
    for (uint64_t lanes = request->lane_mask; lanes; lanes &= lanes - 1) {
        uint64_t address;
        uint32_t length;
        const struct devrt_lane_message *m = &request->lane[__builtin_ctzll(lanes)];
        if (!m->open || !devrt_output_first_at_address(m->data, m->length, &address, &length))
            continue;
        low = address < low ? address : low;
        high = address + length > high ? address + length : high;
        total += length;
        count++;
    }
    if (count < 2 || high - low >= WINDOW_MAX || high - low > 2 * total + 4096)
        return;
    if (fetch_into(s, s->window, low, high - low))
        s->window_start = low;
    else
        s->window->length = 0; /* a gap the backend cannot read: one copy a write */
}

static int serve(struct devrt_request *request, const char *what)
{
    devrt_module *module = request->module;
    /* Only the server thread renders: one buffer, kept between requests, serves them all. */
    struct devrt_text *text = &module->device->server.output;
    struct units units;
    units.count = 0;
    text->length = 0;
    text->failed = false;
    int status = 0;
    struct device_source source = {
        .source = {fetch},
        .device = module->device,
        .window = &module->device->server.window,
        .scratch = &module->device->server.scratch,
    };
    pthread_mutex_lock(&module->output_lock);
    if (muted(module, request->record)) {
        module->output_dropped += (uint64_t)__builtin_popcountll(request->lane_mask);
        pthread_mutex_unlock(&module->output_lock);
        return 0;
    }
    if (request->opcode == DEVRT_RPC_OUTPUT && module->device->ops->read_serving)
        fill_window(&source, request);
    for (uint64_t lanes = request->lane_mask; lanes; lanes &= lanes - 1) {
        uint32_t lane = (uint32_t)__builtin_ctzll(lanes);
        const struct devrt_lane_message *m = &request->lane[lane];
        char why[200];
        size_t start = text->length;
        int rendered = -1;
        if (!m->open)
            snprintf(why, sizeof why, "not an open-length message");
        else if (m->arg != DEVRT_OUTPUT_CONTEXT_RAW && m->arg != DEVRT_OUTPUT_CONTEXT_PRINTF)
            snprintf(why, sizeof why, "unknown output context %u", m->arg);
        else
            rendered = devrt_output_render(request->opcode, m->data, m->length, &source.source,
                                           text, why, sizeof why);
        if (rendered != 0 && status == 0) {
            snprintf(request->error, sizeof request->error, "%s, lane %u: %s", what, lane, why);
            status = -1;
        }
        if (text->failed) {
            if (status == 0)
                snprintf(request->error, sizeof request->error,
                         "%s, lane %u: no host memory for its output", what, lane);
            status = -1;
            /* The units before this lane's are whole: they go now, and the text starts over. */
            write_units(request, text, &units);
            units.count = 0;
            text->length = 0;
            text->failed = false;
            continue;
        }
        if (text->length == start)
            continue;
        units.end[units.count] = text->length;
        units.stream[units.count++] = m->arg;
    }
    write_units(request, text, &units);
    /* Streamed, not held back until the launch ends: a pipe or file sees it now. */
    if (module->output_file && !module->output_fn)
        fflush(module->output_file);
    pthread_mutex_unlock(&module->output_lock);
    if (text->capacity > KEPT_TEXT)
        devrt_text_free(text);
    if (source.scratch->capacity > KEPT_TEXT)
        devrt_text_free(source.scratch);
    return status;
}

int devrt_serve_output(struct devrt_request *request)
{
    return serve(request, "output");
}

int devrt_serve_printf(struct devrt_request *request)
{
    return serve(request, "printf");
}
