/*
 * The device's trace (trace.h): records kept in a fixed buffer under one mutex, written out
 * as Chrome trace-event JSON whenever the buffer fills and when the device closes. The
 * server and the launch threads record; nothing is formatted or written while the buffer
 * has room, so a record costs a clock read, a lock and a copy.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

enum record_kind {
    TRACE_LAUNCH,
    TRACE_EXCEPTION,
    TRACE_REQUEST,
    TRACE_SLEEP,
    TRACE_OUTPUT,
    TRACE_HEAP,
};

/* The tracks (Chrome's thread ids) of a device's process. */
enum {
    TRACK_LAUNCHES = 1, /* synchronous launches and the default stream's */
    TRACK_SERVER = 2,   /* the server thread: requests and sleeps */
    TRACK_STREAMS = 100 /* plus the stream's number: a stream the program created */
};

struct record {
    uint64_t start_ns, end_ns;
    uint64_t arg[4];
    char *text; /* an exception's report, owned */
    uint32_t kind, track;
    char name[48]; /* the kernel, cut short */
};

struct devrt_trace {
    pthread_mutex_t lock; /* guards everything below */
    FILE *file;
    char *path;
    uint64_t origin_ns; /* ts 0 */
    int pid;
    struct record *records;
    size_t count, capacity;
    uint64_t written, dropped, flushes;
    uint64_t output_units, output_bytes; /* the totals of the output counter */
};

/* Only kinds of trace event devrt writes: JSON's escapes for the rest of a string. */
static void write_string(FILE *file, const char *s)
{
    fputc('"', file);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(file, "\\%c", c);
        else if (c < 0x20)
            fprintf(file, "\\u%04x", c);
        else
            fputc(c, file);
    }
    fputc('"', file);
}

/* Microseconds since the trace began, to the nanosecond; a time before it counts as 0. */
static double micros(const struct devrt_trace *trace, uint64_t ns)
{
    return ns > trace->origin_ns ? (double)(ns - trace->origin_ns) / 1000.0 : 0.0;
}

static const char *opcode_name(uint64_t opcode)
{
    switch (opcode) {
    case DEVRT_RPC_ECHO: return "echo";
    case DEVRT_RPC_HOSTCALL: return "hostcall";
    case DEVRT_RPC_HEAP_GROW: return "heap_grow";
    case DEVRT_RPC_OUTPUT: return "output";
    case DEVRT_RPC_PRINTF: return "printf";
    default: return "unknown";
    }
}

static const char *status_name(int status)
{
    switch (status) {
    case DEVRT_SUCCESS: return "ok";
    case DEVRT_ERROR_EXCEPTION: return "exception";
    case DEVRT_ERROR_DEVICE_REQUEST: return "device_request";
    case DEVRT_ERROR_TIMEOUT: return "timeout";
    case DEVRT_ERROR_DEVICE_LOST: return "device_lost";
    case DEVRT_ERROR_LAUNCH: return "launch_failed";
    default: return "error";
    }
}

static void write_record(struct devrt_trace *trace, const struct record *r)
{
    FILE *f = trace->file;
    double ts = micros(trace, r->start_ns);
    double dur = r->end_ns > r->start_ns ? (double)(r->end_ns - r->start_ns) / 1000.0 : 0.0;
    fprintf(f, ",\n{\"pid\":%d,\"tid\":%" PRIu32 ",\"ts\":%.3f,", trace->pid, r->track, ts);
    switch (r->kind) {
    case TRACE_LAUNCH:
        fputs("\"ph\":\"X\",\"cat\":\"launch\",\"name\":", f);
        write_string(f, r->name);
        fprintf(f, ",\"dur\":%.3f,\"args\":{\"kernel\":", dur);
        write_string(f, r->name);
        fprintf(f, ",\"launch\":%" PRIu64 ",\"stream\":", r->arg[0]);
        if (r->track == TRACK_LAUNCHES)
            fputs("\"default\"", f);
        else
            fprintf(f, "%" PRIu32, r->track - TRACK_STREAMS);
        fprintf(f, ",\"status\":\"%s\"", status_name((int)(int64_t)r->arg[1]));
        if (r->arg[2])
            fprintf(f, ",\"started_us\":%.3f", micros(trace, r->arg[2]));
        fputs("}}", f);
        break;
    case TRACE_EXCEPTION:
        fputs("\"ph\":\"i\",\"s\":\"t\",\"cat\":\"exception\",\"name\":\"exception\",\"args\":{"
              "\"kernel\":",
              f);
        write_string(f, r->name);
        fprintf(f, ",\"launch\":%" PRIu64 ",\"report\":", r->arg[0]);
        write_string(f, r->text ? r->text : "(no memory for the report)");
        fputs("}}", f);
        break;
    case TRACE_REQUEST:
        fprintf(f,
                "\"ph\":\"X\",\"cat\":\"request\",\"name\":\"%s\",\"dur\":%.3f,\"args\":{"
                "\"port\":%" PRIu64 ",\"opcode\":%" PRIu64 ",\"lanes\":%" PRIu64,
                opcode_name(r->arg[1]), dur, r->arg[0] & 0xffffffffu, r->arg[1],
                r->arg[2] & 0xffffffffu);
        if (r->arg[1] == DEVRT_RPC_OUTPUT || r->arg[1] == DEVRT_RPC_PRINTF)
            fprintf(f, ",\"units\":%" PRIu64 ",\"bytes\":%" PRIu64, r->arg[2] >> 32, r->arg[3]);
        fprintf(f, ",\"refused\":%s}}", r->arg[0] >> 63 ? "true" : "false");
        break;
    case TRACE_SLEEP:
        fprintf(f,
                "\"ph\":\"X\",\"cat\":\"server\",\"name\":\"sleep\",\"dur\":%.3f,\"args\":{"
                "\"timeout_ms\":%" PRIu64 "}}",
                dur, r->arg[0]);
        break;
    case TRACE_OUTPUT:
        fprintf(f,
                "\"ph\":\"C\",\"cat\":\"output\",\"name\":\"output\",\"args\":{\"units\":%" PRIu64
                ",\"bytes\":%" PRIu64 "}}",
                r->arg[0], r->arg[1]);
        break;
    case TRACE_HEAP:
        fprintf(
            f,
            "\"ph\":\"C\",\"cat\":\"heap\",\"name\":\"heap\",\"args\":{\"reserved_bytes\":%" PRIu64
            "}}",
            r->arg[0]);
        break;
    }
}

/* Writes the buffer out and empties it. Under the lock. */
static void flush(struct devrt_trace *trace)
{
    for (size_t i = 0; i < trace->count; ++i) {
        write_record(trace, &trace->records[i]);
        free(trace->records[i].text);
    }
    /* What the file could not take is lost: counted, as a full buffer's would be. */
    if (fflush(trace->file) != 0 || ferror(trace->file))
        trace->dropped += trace->count;
    else
        trace->written += trace->count;
    trace->count = 0;
    trace->flushes++;
}

/* A record's slot, the buffer written out first if it is full. Locks; unlock() after. */
static struct record *add(struct devrt_trace *trace, uint32_t kind, uint32_t track,
                          uint64_t start_ns, uint64_t end_ns)
{
    pthread_mutex_lock(&trace->lock);
    if (trace->count == trace->capacity)
        flush(trace);
    struct record *r = &trace->records[trace->count++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->track = track;
    r->start_ns = start_ns;
    r->end_ns = end_ns;
    return r;
}

static void unlock(struct devrt_trace *trace)
{
    pthread_mutex_unlock(&trace->lock);
}

static void metadata(struct devrt_trace *trace, const char *what, uint32_t tid, const char *name)
{
    fprintf(trace->file,
            ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu32 ",\"name\":\"%s\","
            "\"args\":{\"name\":",
            trace->pid, tid, what);
    write_string(trace->file, name);
    fputs("}}", trace->file);
}

/* Starts DEVICE's trace into PATH, which is created now. */
static int start(devrt_device *device, const char *path, size_t capacity)
{
    struct devrt_trace *trace = calloc(1, sizeof *trace);
    if (trace) {
        trace->path = strdup(path);
        trace->records = calloc(capacity, sizeof *trace->records);
    }
    if (!trace || !trace->path || !trace->records) {
        if (trace) {
            free(trace->path);
            free(trace->records);
        }
        free(trace);
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a trace of %zu events",
                          capacity);
    }
    trace->file = fopen(path, "w");
    if (!trace->file) {
        int status = devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "cannot write the trace %s: %s", path,
                                strerror(errno));
        free(trace->path);
        free(trace->records);
        free(trace);
        return status;
    }
    pthread_mutex_init(&trace->lock, NULL);
    trace->capacity = capacity;
    trace->pid = device->index;
    trace->origin_ns = devrt_now_ns();
    /* The metadata first, so that the array never has a leading comma to avoid. */
    char process[96];
    snprintf(process, sizeof process, "devrt device %d (%s)", device->index,
             device->kind == DEVRT_BACKEND_AUTO ? "attached" : devrt_backend_name(device->kind));
    fprintf(trace->file,
            "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
            "\"name\":\"process_name\",\"args\":{\"name\":",
            trace->pid);
    write_string(trace->file, process);
    fputs("}}", trace->file);
    metadata(trace, "thread_name", TRACK_LAUNCHES, "launches");
    metadata(trace, "thread_name", TRACK_SERVER, "server");
    /* Two callers at once: one trace wins, the other is refused as if it came second. */
    struct devrt_trace *none = NULL;
    if (!__atomic_compare_exchange_n(&device->trace, &none, trace, false, __ATOMIC_RELEASE,
                                     __ATOMIC_RELAXED)) {
        fclose(trace->file);
        pthread_mutex_destroy(&trace->lock);
        free(trace->path);
        free(trace->records);
        free(trace);
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_device_trace: the device is traced "
                                                        "already");
    }
    return DEVRT_SUCCESS;
}

/* Traces opened through DEVRT_TRACE in this process: the first writes FILE, the next FILE.1. */
static unsigned environment_traces;

int devrt_trace_from_environment(devrt_device *device)
{
    const char *path = getenv("DEVRT_TRACE");
    if (!path || !*path)
        return DEVRT_SUCCESS;
    size_t capacity = DEVRT_TRACE_DEFAULT_EVENTS;
    const char *events = getenv("DEVRT_TRACE_EVENTS");
    if (events && *events) {
        char *end;
        unsigned long long n = strtoull(events, &end, 10);
        if (*end || n == 0 || n > (1u << 24))
            return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                              "DEVRT_TRACE_EVENTS=%s: expected a count of 1 to 16777216", events);
        capacity = (size_t)n;
    }
    unsigned order = __atomic_fetch_add(&environment_traces, 1u, __ATOMIC_RELAXED);
    if (order == 0)
        return start(device, path, capacity);
    char numbered[4096];
    snprintf(numbered, sizeof numbered, "%s.%u", path, order);
    return start(device, numbered, capacity);
}

int devrt_device_trace(devrt_device *device, const char *path)
{
    if (!device || !path || !*path)
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "devrt_device_trace: %s",
                          device ? "no file" : "no device");
    if (devrt_trace_of(device))
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "devrt_device_trace: the device is traced already (into %s)",
                          devrt_trace_of(device)->path);
    return start(device, path, DEVRT_TRACE_DEFAULT_EVENTS);
}

void devrt_trace_finish(devrt_device *device)
{
    struct devrt_trace *trace = devrt_trace_of(device);
    if (!trace)
        return;
    __atomic_store_n(&device->trace, NULL, __ATOMIC_RELAXED);
    flush(trace);
    fprintf(trace->file,
            "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"dropped\":%" PRIu64
            ",\"written\":%" PRIu64 ",\"flushes\":%" PRIu64 ",\"capacity\":%zu}}\n",
            trace->dropped, trace->written, trace->flushes, trace->capacity);
    fclose(trace->file);
    pthread_mutex_destroy(&trace->lock);
    free(trace->records);
    free(trace->path);
    free(trace);
}

/* The track of E's stream: the default stream and synchronous launches share one. */
static uint32_t launch_track(const struct devrt_launch_entry *e)
{
    if (!e->stream || e->stream->is_default)
        return TRACK_LAUNCHES;
    return TRACK_STREAMS + e->stream->number;
}

static void set_name(struct record *r, const char *kernel)
{
    snprintf(r->name, sizeof r->name, "%s", kernel ? kernel : "?");
}

void devrt_trace_launch(struct devrt_trace *trace, const struct devrt_launch_entry *e,
                        uint64_t queued_ns, uint64_t started_ns, uint64_t end_ns, int status)
{
    uint64_t start_ns = queued_ns ? queued_ns : started_ns ? started_ns : end_ns;
    struct record *r = add(trace, TRACE_LAUNCH, launch_track(e), start_ns, end_ns);
    set_name(r, e->kernel);
    r->arg[0] = e->id;
    r->arg[1] = (uint64_t)(int64_t)status;
    r->arg[2] = started_ns;
    unlock(trace);
}

void devrt_trace_exception(struct devrt_trace *trace, const struct devrt_launch_entry *e,
                           uint64_t at_ns, const char *text)
{
    char *copy = strdup(text);
    struct record *r = add(trace, TRACE_EXCEPTION, launch_track(e), at_ns, at_ns);
    set_name(r, e->kernel);
    r->arg[0] = e->id;
    r->text = copy;
    unlock(trace);
}

void devrt_trace_request(struct devrt_trace *trace, uint64_t start_ns, uint64_t end_ns,
                         uint32_t port, uint32_t opcode, uint64_t lane_mask, uint32_t units,
                         uint64_t bytes, bool refused)
{
    struct record *r = add(trace, TRACE_REQUEST, TRACK_SERVER, start_ns, end_ns);
    r->arg[0] = port | (uint64_t)refused << 63;
    r->arg[1] = opcode;
    r->arg[2] = (uint64_t)__builtin_popcountll(lane_mask) | (uint64_t)units << 32;
    r->arg[3] = bytes;
    if (units || bytes) {
        /* The counter's running totals: a graph of the output over the run. */
        trace->output_units += units;
        trace->output_bytes += bytes;
        uint64_t total_units = trace->output_units, total_bytes = trace->output_bytes;
        unlock(trace);
        r = add(trace, TRACE_OUTPUT, TRACK_SERVER, end_ns, end_ns);
        r->arg[0] = total_units;
        r->arg[1] = total_bytes;
    }
    unlock(trace);
}

void devrt_trace_sleep(struct devrt_trace *trace, uint64_t start_ns, uint64_t end_ns,
                       uint32_t timeout_ms)
{
    struct record *r = add(trace, TRACE_SLEEP, TRACK_SERVER, start_ns, end_ns);
    r->arg[0] = timeout_ms;
    unlock(trace);
}

void devrt_trace_heap(struct devrt_trace *trace, uint64_t at_ns, uint64_t reserved_bytes)
{
    struct record *r = add(trace, TRACE_HEAP, TRACK_SERVER, at_ns, at_ns);
    r->arg[0] = reserved_bytes;
    unlock(trace);
}
