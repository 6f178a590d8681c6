/*
 * A fake libamdhip64 for the unit tests of devrt_hip_attach: the HIP calls the shim and
 * attach_test make, over fake_gpu.c, compiled against HIP's own declarations so that a
 * call of the wrong shape does not build. It holds devrt to what a real HIP needs:
 * host memory the device is to see must be allocated mapped, and a copy on a stream that
 * synchronizes with the others (the null stream, or one created without
 * hipStreamNonBlocking) fails, since there it could wait for a kernel that waits for the
 * copy. Like HIP, it knows its allocations, not the rest of a code object's memory; the
 * HSA runtime beneath it (hsa_amd_pointer_info, hsa_memory_copy, reached through HIP's
 * handle) knows both. fake_hip_calls(NAME) says how often NAME was called.
 *
 * devrt's HIP backend (hip_backend.c) uses it as a GPU of its own: modules it loads from
 * memory (hipModuleLoadData) are emulation images, and their launches, fills and events go
 * on per-stream queues, each run by a thread of its own, whose kernels run in waves of
 * $DEVRT_HIPFAKE_WAVE lanes (emu_waves.c, as the emulation backend runs them). A code
 * object given to hipModuleLoadData stands for the first image of $DEVRT_HIPFAKE_IMAGES (a
 * colon-separated list) that defines __devrt_state, as the HSA double's code objects do;
 * a host shared object is loaded itself. Each load is a private copy: its own state.
 */
#include <elf.h>
#include <ffi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hip_runtime_api.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <sys/mman.h>
#include <unistd.h>

#include <devrt/emu.h>

#include "emu_ffi.h"
#include "emu_waves.h"
#include "fake_gpu.h"
#include "harness.h"

struct ihipModule_t {
    struct fake_gpu_module *module;
    int copy;    /* the private copy's file (hipModuleLoadData), else -1 */
    bool queued; /* loaded from memory: its launches go on the streams' queues */
};

struct ihipModuleSymbol_t {
    struct ihipModule_t *module;
    char name[256];
};

struct op;

struct ihipStream_t {
    unsigned flags;
    /* The queue, started by the first operation queued (hip_backend.c's streams). */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool started, stop;
    struct op *head, *tail;
    uint64_t queued, done; /* operations */
};

struct ihipEvent_t {
    hipStream_t stream; /* NULL: never recorded, or recorded with nothing before it */
    uint64_t at;        /* done once the stream's `done` reaches it */
};

static struct {
    const char *name;
    unsigned count;
} calls[64];

/* Calls come from every thread of the program: the table has a lock. */
static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;

static void record(const char *name)
{
    pthread_mutex_lock(&calls_lock);
    for (size_t i = 0; i < sizeof calls / sizeof *calls; ++i) {
        if (!calls[i].name)
            calls[i].name = name;
        if (!strcmp(calls[i].name, name)) {
            calls[i].count++;
            break;
        }
    }
    pthread_mutex_unlock(&calls_lock);
}

unsigned fake_hip_calls(const char *name);
unsigned fake_hip_calls(const char *name)
{
    unsigned count = 0;
    pthread_mutex_lock(&calls_lock);
    for (size_t i = 0; i < sizeof calls / sizeof *calls && calls[i].name; ++i)
        if (!strcmp(calls[i].name, name))
            count = calls[i].count;
    pthread_mutex_unlock(&calls_lock);
    return count;
}

/* Stream waits (hipStreamWaitEvent) that found their event not yet reached and blocked. */
static unsigned blocked_waits;
unsigned fake_hip_blocked_waits(void);
unsigned fake_hip_blocked_waits(void)
{
    return __atomic_load_n(&blocked_waits, __ATOMIC_ACQUIRE);
}

size_t fake_hip_live_allocations(void);
size_t fake_hip_live_allocations(void)
{
    return fake_gpu_live_allocations();
}

/*
 * The lanes of a wave: fake_gpu's one for the attach tests, $DEVRT_HIPFAKE_WAVE for the
 * backend's (emu_waves.c).
 */
static uint32_t wave_size(void)
{
    const char *wave = getenv("DEVRT_HIPFAKE_WAVE");
    return wave && *wave ? (uint32_t)strtoul(wave, NULL, 10) : 1u;
}

/* An operation on a stream's queue, run by its thread in the order queued. */
struct op {
    struct op *next;
    enum { OP_LAUNCH, OP_FILL8, OP_FILL32, OP_WAIT } kind;
    /* OP_LAUNCH */
    devrt_emu_enter_fn *enter;
    void (*kernel)(void);
    devrt_emu_call_fn *call;
    ffi_cif cif;
    ffi_type *types[DEVRT_EMU_MAX_PARAMETERS];
    void *values[DEVRT_EMU_MAX_PARAMETERS];
    unsigned char *bytes; /* each argument's copy, 64-byte aligned */
    uint32_t grid[3], block[3];
    /* OP_FILL8, OP_FILL32 */
    void *at;
    uint32_t value;
    size_t count;
    /* OP_WAIT: until the stream's done reaches until */
    hipStream_t other;
    uint64_t until;
};

/*
 * A 32-bit fill as the GPU's memset kernel writes it, word by word. Its own function so that
 * hipfake.control.drop_waits can name it in a ThreadSanitizer suppression: with the stream
 * waits dropped, this fill of a module's state overlaps the running kernel's reads of it.
 */
__attribute__((noinline)) static void fake_hip_fill32(void *at, uint32_t value, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        __atomic_store_n((uint32_t *)at + i, value, __ATOMIC_RELEASE);
}

static void run_op(struct op *op)
{
    switch (op->kind) {
    case OP_LAUNCH: {
        struct devrt_emu_grid grid = {
            .enter = op->enter,
            .kernel = op->kernel,
            .call = op->call,
            .cif = &op->cif,
            .values = op->values,
            .block = {op->block[0], op->block[1], op->block[2]},
            .grid = {op->grid[0], op->grid[1], op->grid[2]},
            .wave_size = wave_size(),
        };
        devrt_emu_run_grid(&grid);
        free(op->bytes);
        break;
    }
    case OP_FILL8: memset(op->at, (int)op->value, op->count); break;
    case OP_FILL32: fake_hip_fill32(op->at, op->value, op->count); break;
    case OP_WAIT:
        pthread_mutex_lock(&op->other->lock);
        if (op->other->done < op->until)
            __atomic_fetch_add(&blocked_waits, 1u, __ATOMIC_RELEASE);
        while (op->other->done < op->until)
            pthread_cond_wait(&op->other->changed, &op->other->lock);
        pthread_mutex_unlock(&op->other->lock);
        break;
    }
}

static void *stream_main(void *arg)
{
    hipStream_t s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->head && !s->stop)
            pthread_cond_wait(&s->changed, &s->lock);
        if (!s->head)
            break;
        struct op *op = s->head;
        pthread_mutex_unlock(&s->lock);
        run_op(op);
        pthread_mutex_lock(&s->lock);
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        s->done++;
        free(op);
        pthread_cond_broadcast(&s->changed);
    }
    pthread_mutex_unlock(&s->lock);
    /* Destroyed: an event recorded on it may still be waited for, so it is kept. */
    return NULL;
}

/* Whether STREAM's queue has a thread: it has had an operation. */
static bool started(hipStream_t stream)
{
    pthread_mutex_lock(&stream->lock);
    bool on = stream->started;
    pthread_mutex_unlock(&stream->lock);
    return on;
}

/* Queues OP on STREAM, starting its thread on the first (under the lock: any thread may). */
static hipError_t queue(hipStream_t stream, struct op *op)
{
    if (!stream || !(stream->flags & hipStreamNonBlocking)) {
        free(op);
        return hipErrorInvalidHandle; /* devrt's queues never synchronize with the null stream */
    }
    pthread_mutex_lock(&stream->lock);
    if (!stream->started) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, stream_main, stream) != 0) {
            pthread_mutex_unlock(&stream->lock);
            free(op);
            return hipErrorOutOfMemory;
        }
        pthread_detach(thread);
        stream->started = true;
    }
    if (stream->tail)
        stream->tail->next = op;
    else
        stream->head = op;
    stream->tail = op;
    stream->queued++;
    pthread_cond_broadcast(&stream->changed);
    pthread_mutex_unlock(&stream->lock);
    return hipSuccess;
}

static hipError_t drain(hipStream_t stream)
{
    pthread_mutex_lock(&stream->lock);
    while (stream->done < stream->queued)
        pthread_cond_wait(&stream->changed, &stream->lock);
    pthread_mutex_unlock(&stream->lock);
    return hipSuccess;
}

static bool idle(hipStream_t stream, uint64_t until)
{
    if (!stream || !started(stream))
        return true;
    pthread_mutex_lock(&stream->lock);
    bool done = stream->done >= until;
    pthread_mutex_unlock(&stream->lock);
    return done;
}

hipError_t hipStreamQuery(hipStream_t stream)
{
    record(__func__);
    if (!stream || !started(stream))
        return hipSuccess;
    pthread_mutex_lock(&stream->lock);
    bool done = stream->done >= stream->queued;
    pthread_mutex_unlock(&stream->lock);
    return done ? hipSuccess : hipErrorNotReady;
}

hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
    record(__func__);
    (void)flags;
    *event = calloc(1, sizeof **event);
    return *event ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipEventDestroy(hipEvent_t event)
{
    record(__func__);
    free(event);
    return hipSuccess;
}

/* The event stands for everything queued on STREAM so far. */
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
    record(__func__);
    if (!stream || !started(stream)) {
        event->stream = NULL;
        return hipSuccess;
    }
    pthread_mutex_lock(&stream->lock);
    event->stream = stream;
    event->at = stream->queued;
    pthread_mutex_unlock(&stream->lock);
    return hipSuccess;
}

hipError_t hipEventQuery(hipEvent_t event)
{
    record(__func__);
    return idle(event->stream, event->at) ? hipSuccess : hipErrorNotReady;
}

hipError_t hipEventSynchronize(hipEvent_t event)
{
    record(__func__);
    hipStream_t s = event->stream;
    if (!s)
        return hipSuccess;
    pthread_mutex_lock(&s->lock);
    while (s->done < event->at)
        pthread_cond_wait(&s->changed, &s->lock);
    pthread_mutex_unlock(&s->lock);
    return hipSuccess;
}

hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags)
{
    record(__func__);
    if (flags)
        return hipErrorInvalidValue;
    /* A control ($DEVRT_HIPFAKE_PLANT=drop_waits): a backend that orders nothing. */
    const char *plant = getenv("DEVRT_HIPFAKE_PLANT");
    if (!event->stream || event->stream == stream || (plant && !strcmp(plant, "drop_waits")))
        return hipSuccess;
    struct op *op = calloc(1, sizeof *op);
    op->kind = OP_WAIT;
    op->other = event->stream;
    op->until = event->at;
    return queue(stream, op);
}

hipError_t hipMemsetAsync(void *at, int value, size_t size, hipStream_t stream)
{
    record(__func__);
    struct op *op = calloc(1, sizeof *op);
    *op = (struct op){.kind = OP_FILL8, .at = at, .value = (uint32_t)value, .count = size};
    return queue(stream, op);
}

hipError_t hipMemsetD32Async(hipDeviceptr_t at, int value, size_t count, hipStream_t stream)
{
    record(__func__);
    /*
     * The control of the hipfake tests ($DEVRT_HIPFAKE_PLANT=drop_fills): the fills that
     * point a module's state at a launch's record are lost, as a backend that forgot them
     * would lose them; a launch's exception then lands in another launch's record.
     */
    const char *plant = getenv("DEVRT_HIPFAKE_PLANT");
    if (plant && !strcmp(plant, "drop_fills"))
        return hipSuccess;
    struct op *op = calloc(1, sizeof *op);
    *op = (struct op){.kind = OP_FILL32, .at = at, .value = (uint32_t)value, .count = count};
    return queue(stream, op);
}

/*
 * A kernel of an image loaded from memory, with its arguments copied now, as HIP copies
 * them at launch: sizes from the signature DEVRT_KERNELn recorded, through its caller where
 * it has one (a struct by value), else through libffi.
 */
static hipError_t launch_queued(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                unsigned by, unsigned bz, hipStream_t stream, void **params,
                                void **extra)
{
    struct fake_gpu_module *m = f->module->module;
    char symbol[300];
    snprintf(symbol, sizeof symbol, "%s%s", DEVRT_EMU_SIGNATURE_PREFIX, f->name);
    const struct devrt_emu_signature *signature = fake_gpu_symbol(m, symbol);
    if (extra || !signature || signature->count > DEVRT_EMU_MAX_PARAMETERS)
        return hipErrorInvalidValue;
    struct op *op = calloc(1, sizeof *op);
    op->kind = OP_LAUNCH;
    op->enter = (devrt_emu_enter_fn *)fake_gpu_symbol(m, DEVRT_EMU_ENTER_SYMBOL);
    op->kernel = (void (*)(void))fake_gpu_symbol(m, f->name);
    snprintf(symbol, sizeof symbol, "%s%s", DEVRT_EMU_CALL_PREFIX, f->name);
    op->call = (devrt_emu_call_fn *)fake_gpu_symbol(m, symbol);
    size_t total = 0;
    for (uint32_t i = 0; i < signature->count; ++i)
        total += (signature->size[i] + 63u) / 64u * 64u;
    op->bytes = aligned_alloc(64, total ? total : 64);
    bool callable = true;
    for (uint32_t i = 0, at = 0; i < signature->count; ++i) {
        op->values[i] = memcpy(op->bytes + at, params[i], signature->size[i]);
        at += (signature->size[i] + 63u) / 64u * 64u;
        op->types[i] = devrt_emu_ffi_type(harness_sized_arg_type(signature->size[i]));
        callable = callable && op->types[i];
    }
    if (!op->call && (!callable || ffi_prep_cif(&op->cif, FFI_DEFAULT_ABI, signature->count,
                                                &ffi_type_void, op->types) != FFI_OK)) {
        free(op->bytes);
        free(op);
        return hipErrorInvalidValue;
    }
    memcpy(op->grid, (uint32_t[]){gx, gy, gz}, sizeof op->grid);
    memcpy(op->block, (uint32_t[]){bx, by, bz}, sizeof op->block);
    return queue(stream, op);
}

const char *hipGetErrorString(hipError_t error)
{
    return error == hipSuccess ? "no error" : "fake HIP error";
}

hipError_t hipGetDeviceCount(int *count)
{
    record(__func__);
    *count = 1;
    return hipSuccess;
}

hipError_t hipGetDevice(int *device)
{
    record(__func__);
    *device = 0;
    return hipSuccess;
}

hipError_t hipSetDevice(int device)
{
    record(__func__);
    return device == 0 ? hipSuccess : hipErrorInvalidDevice;
}

hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attribute, int device)
{
    record(__func__);
    if (device != 0 || attribute != hipDeviceAttributeWarpSize)
        return hipErrorInvalidValue;
    *value = (int)wave_size();
    return hipSuccess;
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *properties, int device)
{
    record(__func__);
    if (device != 0)
        return hipErrorInvalidDevice;
    memset(properties, 0, sizeof *properties);
    const char *target = getenv("DEVRT_HIPFAKE_TARGET");
    snprintf(properties->gcnArchName, sizeof properties->gcnArchName, "%s",
             target && *target ? target : "gfx90a");
    snprintf(properties->name, sizeof properties->name, "fake HIP GPU");
    properties->totalGlobalMem = (size_t)1 << 30;
    properties->warpSize = (int)wave_size();
    return hipSuccess;
}

hipError_t hipDeviceSynchronize(void)
{
    record(__func__);
    fake_gpu_synchronize();
    return hipSuccess;
}

hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
    record(__func__);
    *stream = calloc(1, sizeof **stream);
    (*stream)->flags = flags;
    pthread_mutex_init(&(*stream)->lock, NULL);
    pthread_cond_init(&(*stream)->changed, NULL);
    return hipSuccess;
}

hipError_t hipStreamCreate(hipStream_t *stream)
{
    return hipStreamCreateWithFlags(stream, 0);
}

hipError_t hipStreamDestroy(hipStream_t stream)
{
    record(__func__);
    if (!started(stream)) {
        pthread_cond_destroy(&stream->changed);
        pthread_mutex_destroy(&stream->lock);
        free(stream);
        return hipSuccess;
    }
    /* The queue's thread frees it once its operations have run (a kernel may run on). */
    pthread_mutex_lock(&stream->lock);
    stream->stop = true;
    pthread_cond_broadcast(&stream->changed);
    pthread_mutex_unlock(&stream->lock);
    return hipSuccess;
}

/* fake_gpu has one queue: every launch is on it. */
hipError_t hipStreamSynchronize(hipStream_t stream)
{
    record(__func__);
    if (stream && started(stream))
        return drain(stream);
    if (!stream || !(stream->flags & hipStreamNonBlocking))
        fake_gpu_synchronize();
    return hipSuccess;
}

hipError_t hipModuleLoad(hipModule_t *module, const char *path)
{
    record(__func__);
    const char *error;
    struct fake_gpu_module *m;
    if (fake_gpu_load(path, &m, &error) != 0)
        return hipErrorFileNotFound;
    *module = calloc(1, sizeof **module);
    (*module)->module = m;
    (*module)->copy = -1;
    return hipSuccess;
}

/* Loads a private copy of BYTES (or of the file PATH): every module has a state of its own. */
static int load_copy(const void *bytes, size_t size, const char *path, hipModule_t module)
{
    int copy = memfd_create("fake-hip-image", MFD_CLOEXEC);
    FILE *in = path ? fopen(path, "rb") : NULL;
    bool written = copy >= 0 && (path ? in != NULL : true);
    if (written && !path) {
        written = write(copy, bytes, size) == (ssize_t)size;
    } else if (written) {
        char buffer[65536];
        size_t n;
        while (written && (n = fread(buffer, 1, sizeof buffer, in)) > 0)
            written = write(copy, buffer, n) == (ssize_t)n;
    }
    if (in)
        fclose(in);
    char name[64];
    snprintf(name, sizeof name, "/proc/self/fd/%d", copy);
    const char *error;
    if (!written || fake_gpu_load(name, &module->module, &error) != 0) {
        if (copy >= 0)
            close(copy);
        return -1;
    }
    module->copy = copy;
    return 0;
}

/* The first image of $DEVRT_HIPFAKE_IMAGES that loads and defines __devrt_state. */
static int load_named_image(hipModule_t module)
{
    const char *list = getenv("DEVRT_HIPFAKE_IMAGES");
    char path[4096];
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ":");
        if (n && n < sizeof path) {
            memcpy(path, p, n);
            path[n] = '\0';
            if (load_copy(NULL, 0, path, module) == 0) {
                if (fake_gpu_symbol(module->module, "__devrt_state"))
                    return 0;
                fake_gpu_unload(module->module);
                close(module->copy);
            }
        }
        p += n + (p[n] == ':');
    }
    return -1;
}

hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
    record(__func__);
    const Elf64_Ehdr *header = image;
    if (!image || memcmp(header->e_ident, ELFMAG, SELFMAG) != 0)
        return hipErrorInvalidImage;
    hipModule_t m = calloc(1, sizeof *m);
    m->copy = -1;
    m->queued = true;
    int loaded;
    if (header->e_machine == EM_AMDGPU) {
        loaded = load_named_image(m);
    } else {
        /* A host shared object: its size is where its section headers end. */
        size_t size = header->e_shoff + (size_t)header->e_shnum * header->e_shentsize;
        loaded = load_copy(image, size, NULL, m);
    }
    if (loaded != 0 || !fake_gpu_symbol(m->module, DEVRT_EMU_ENTER_SYMBOL)) {
        if (loaded == 0) {
            fake_gpu_unload(m->module);
            close(m->copy);
        }
        free(m);
        return hipErrorInvalidImage;
    }
    *module = m;
    return hipSuccess;
}

hipError_t hipModuleUnload(hipModule_t module)
{
    record(__func__);
    fake_gpu_unload(module->module);
    if (module->copy >= 0)
        close(module->copy);
    free(module);
    return hipSuccess;
}

hipError_t hipModuleGetGlobal(hipDeviceptr_t *address, size_t *size, hipModule_t module,
                              const char *name)
{
    record(__func__);
    return fake_gpu_global(module->module, name, address, size) == 0 ? hipSuccess
                                                                     : hipErrorNotFound;
}

hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *name)
{
    record(__func__);
    if (module->queued && !fake_gpu_symbol(module->module, name))
        return hipErrorNotFound;
    *function = calloc(1, sizeof **function);
    (*function)->module = module;
    snprintf((*function)->name, sizeof(*function)->name, "%s", name);
    return hipSuccess;
}

/* The kernel's parameters' sizes come from the signature its emulation image records. */
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz,
                                 unsigned int shared, hipStream_t stream, void **params,
                                 void **extra)
{
    record(__func__);
    (void)shared;
    if (f->module->queued)
        return launch_queued(f, gx, gy, gz, bx, by, bz, stream, params, extra);
    char symbol[300];
    snprintf(symbol, sizeof symbol, "%s%s", DEVRT_EMU_SIGNATURE_PREFIX, f->name);
    void *address;
    size_t size;
    if (extra || fake_gpu_global(f->module->module, symbol, &address, &size) != 0)
        return hipErrorInvalidValue;
    const struct devrt_emu_signature *signature = address;
    if (signature->count > DEVRT_EMU_MAX_PARAMETERS)
        return hipErrorInvalidValue;
    struct devrt_arg args[DEVRT_EMU_MAX_PARAMETERS] = {{0}};
    for (uint32_t i = 0; i < signature->count; ++i) {
        /* Scalars and pointers only: the fake GPU calls kernels through libffi. */
        args[i].type = harness_sized_arg_type(signature->size[i]);
        if (args[i].type == DEVRT_ARG_BYTES)
            return hipErrorInvalidValue;
        memcpy(&args[i].value, params[i], signature->size[i]);
    }
    const uint32_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    int launched = fake_gpu_launch(f->module->module, f->name, grid, block, args, signature->count);
    free(f); /* attach_test looks a function up for each launch */
    return launched == 0 ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipMalloc(void **ptr, size_t size)
{
    record(__func__);
    *ptr = fake_gpu_alloc(size);
    return *ptr ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipFree(void *ptr)
{
    record(__func__);
    fake_gpu_free(ptr);
    return hipSuccess;
}

hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
    record(__func__);
    if (!(flags & hipHostMallocMapped))
        return hipErrorInvalidValue; /* the fake device sees only mapped host memory */
    *ptr = fake_gpu_alloc(size);
    return *ptr ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipHostFree(void *ptr)
{
    record(__func__);
    fake_gpu_free(ptr);
    return hipSuccess;
}

hipError_t hipHostGetDevicePointer(void **device, void *host, unsigned int flags)
{
    record(__func__);
    void *start;
    size_t size;
    if (flags || fake_gpu_range(host, &start, &size) != 0)
        return hipErrorInvalidValue;
    *device = host;
    return hipSuccess;
}

hipError_t hipPointerGetAttribute(void *data, hipPointer_attribute attribute, hipDeviceptr_t ptr)
{
    record(__func__);
    void *start;
    size_t size;
    if (fake_gpu_range(ptr, &start, &size) != 0)
        return hipErrorInvalidValue;
    if (attribute == HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR)
        *(void **)data = start;
    else if (attribute == HIP_POINTER_ATTRIBUTE_RANGE_SIZE)
        *(size_t *)data = size;
    else
        return hipErrorInvalidValue;
    return hipSuccess;
}

hipError_t hipMemcpyWithStream(void *dst, const void *src, size_t size, hipMemcpyKind kind,
                               hipStream_t stream)
{
    record(__func__);
    if (kind != hipMemcpyDefault)
        return hipErrorInvalidValue;
    if (!stream || !(stream->flags & hipStreamNonBlocking)) {
        record("blocking copy");
        return hipErrorNotReady;
    }
    if (started(stream))
        drain(stream); /* hipMemcpyWithStream copies after what the stream holds */
    return fake_gpu_copy(dst, src, size) == 0 ? hipSuccess : hipErrorInvalidValue;
}

/* What ROCr knows: HIP's allocations, and the code object's segments it loaded. */
hsa_status_t hsa_amd_pointer_info(const void *ptr, hsa_amd_pointer_info_t *info,
                                  void *(*alloc)(size_t), uint32_t *num_agents,
                                  hsa_agent_t **accessible)
{
    record(__func__);
    (void)alloc;
    if (num_agents || accessible)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    void *start;
    size_t size;
    uint32_t known = info->size;
    memset(info, 0, known);
    info->size = known;
    if (fake_gpu_range(ptr, &start, &size) != 0 && fake_gpu_image_range(ptr, &start, &size) != 0) {
        info->type = HSA_EXT_POINTER_TYPE_UNKNOWN;
        return HSA_STATUS_SUCCESS;
    }
    info->type = HSA_EXT_POINTER_TYPE_HSA;
    info->agentBaseAddress = start;
    info->hostBaseAddress = start;
    info->sizeInBytes = size;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_copy(void *dst, const void *src, size_t size)
{
    record(__func__);
    void *start;
    size_t length;
    /* Both ends must be the runtime's: the staging buffer, and what pointer_info placed. */
    if (fake_gpu_range(dst, &start, &length) != 0 ||
        (fake_gpu_range(src, &start, &length) != 0 &&
         fake_gpu_image_range(src, &start, &length) != 0))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    /* As a copy engine copies: the bytes, whatever a sanitizer thinks of the host's globals. */
    return fake_gpu_copy(dst, src, size) == 0 ? HSA_STATUS_SUCCESS
                                              : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}
