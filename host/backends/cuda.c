/*
 * The CUDA backend: NVIDIA GPUs (sm_70 and newer) through the CUDA driver API.
 *
 * - Images are PTX text (kernels linked with devrt-nvptx.bc); the driver compiles them for
 *   the GPU at load (cuModuleLoadDataEx), and __devrt_state is found with
 *   cuModuleGetGlobal.
 * - Device memory (the state block, the ports' state words) comes from cuMemAlloc. Host-visible
 *   memory (mailboxes, buffers, the doorbell, devrt_mem_alloc) is page-locked host memory
 *   mapped into the device's address space (cuMemHostAlloc with DEVICEMAP); the runtime
 *   needs unified addressing, under which the device sees it at the host's address.
 * - Kernels run on a stream of their own that does not synchronize with the legacy
 *   default stream, and the runtime's copies use another, so that the server can read
 *   device memory while a kernel waits for it.
 * - The driver library is opened with dlopen when a device is opened, not linked
 *   (vendor_library.h): one build runs on machines without an NVIDIA driver, where opening
 *   a device fails with DEVRT_ERROR_NO_DEVICE and the nvptx tests skip.
 *
 * The doorbell. A GPU cannot interrupt a host thread the way an HSA signal does, so the
 * device sets a word in host memory (doorbell->count) after each request and the server
 * polls it while it waits (devrt_polled_wait_doorbell, server.c).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <devrt/cuda.h>

#include "cuda_driver.h"
#include "memory_cache.h"
#include "backend.h"
#include "kernel_cache.h"
#include "codeobject.h"
#include "vendor_library.h"

/*
 * At most this many bytes of freed memory, pinned host memory and device memory together,
 * are kept for the next module load, per device opened (docs/runtime.md, "Loading a module").
 */
#define DEVRT_CUDA_CACHED_BYTES (64u << 20)
#define DEVRT_CUDA_HOST_SIZES 64

/* cuda.h renames some functions to versioned symbols (cuMemAlloc is cuMemAlloc_v2). */
#define DEVRT_CUDA_NAME_(name) #name
#define DEVRT_CUDA_NAME(name) DEVRT_CUDA_NAME_(name)

static struct devrt_cuda_driver cu;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

/* libcuda.so.1, or the file $DEVRT_CUDA_LIBRARY names (a test's stand-in). */
static const struct devrt_vendor_library cuda_library = {
    .what = "the NVIDIA driver",
    .variable = "DEVRT_CUDA_LIBRARY",
    .files = (const char *const[]){"libcuda.so.1", NULL},
};

static void open_driver(void)
{
    static const struct devrt_vendor_symbol symbols[] = {
#define X(fn) {DEVRT_CUDA_NAME(fn), &cu.fn, false},
        DEVRT_CUDA_FUNCTIONS(X)
#undef X
#if CUDA_VERSION >= 12040
            {"cuFuncGetParamInfo", &cu.param_info, true},
        {"cuModuleGetFunctionCount", &cu.function_count, true},
        {"cuModuleEnumerateFunctions", &cu.functions, true},
        {"cuFuncLoad", &cu.load_function, true},
#endif
        {DEVRT_CUDA_NAME(cuStreamWriteValue64), &cu.write_value, true},
        {DEVRT_CUDA_NAME(cuDeviceGetPCIBusId), &cu.bus_id, true},
    };
    cu.library = devrt_vendor_library_open(&cuda_library, symbols, sizeof symbols / sizeof *symbols,
                                           cu.error, sizeof cu.error);
}

const struct devrt_cuda_driver *devrt_cuda_open_driver(void)
{
    pthread_once(&cu_once, open_driver);
    return &cu;
}

struct cuda_backend {
    CUdevice device;
    CUcontext context;
    CUstream launch; /* kernels: the default stream's */
    CUstream copy;   /* the runtime's copies and fills */
    CUevent *events; /* spare events for asynchronous launches (under the launches' lock) */
    size_t event_count, event_capacity;
    /*
     * Memory freed by an unloaded module, kept for the next load of one (cache, under
     * cache_lock): pinning host memory and allocating device memory are the driver's
     * slowest calls at a load. zero_pending: a fill of device memory is queued on the copy
     * stream and not yet waited for.
     */
    pthread_mutex_t cache_lock;
    struct devrt_memory_cache cache;
    /*
     * The sizes of mapped host memory handed out (under cache_lock), which the driver will
     * not tell cuda_free (measured on the H200: each load pinned its 4 MiB of RPC buffers
     * anew, 2 ms). Allocations past the table's room are freed, not kept.
     */
    struct cuda_host_size {
        void *ptr;
        size_t size;
    } host_sizes[DEVRT_CUDA_HOST_SIZES];
    size_t host_size_count;
    bool zero_pending;
    char name[256];
    int major, minor; /* compute capability */
};

struct cuda_module {
    CUmodule module;
    struct devrt_kernel_cache kernels; /* with the parameters' sizes where the driver tells */
};

static int cuda_failed(int status, CUresult result, const char *what)
{
    const char *text = NULL;
    if (cu.cuGetErrorString)
        cu.cuGetErrorString(result, &text);
    return devrt_fail(status, "CUDA: %s: %s (%d)", what, text ? text : "unknown error",
                      (int)result);
}

/* cuda_failed, for the backend's other files (cuda_driver.h). */
int devrt_cuda_failed(int status, CUresult result, const char *what)
{
    return cuda_failed(status, result, what);
}

/* The errors of a kernel's fault, which the driver keeps for the context (and process). */
static bool sticky(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE: return true;
    default: return false;
    }
}

/* Every thread that calls the driver (the caller's, the server's) binds the context. */
static struct cuda_backend *bind(devrt_device *device)
{
    struct cuda_backend *b = devrt_device_backend_state(device);
    cu.cuCtxSetCurrent(b->context);
    return b;
}

static bool host_visible(enum devrt_memory memory)
{
    return memory == DEVRT_MEMORY_HOST || memory == DEVRT_MEMORY_HOST_RAW;
}

/* A block freed earlier, as large or a little larger, of the same memory; or NULL. */
static void *take_cached(struct cuda_backend *b, size_t size, enum devrt_memory memory,
                         size_t *taken)
{
    pthread_mutex_lock(&b->cache_lock);
    void *ptr = devrt_memory_cache_take(&b->cache, size, host_visible(memory), taken);
    pthread_mutex_unlock(&b->cache_lock);
    return ptr;
}

/*
 * Zero device memory with a fill queued on the copy stream, not waited for here: the
 * runtime's copies, which follow on that stream, wait for it, and so does the next launch
 * (cuda_enqueue), so that a module load waits once, not once per allocation.
 */
static int zero_device(struct cuda_backend *b, CUdeviceptr ptr, size_t size)
{
    if (cu.cuMemsetD8Async(ptr, 0, size, b->copy) != CUDA_SUCCESS)
        return -1;
    __atomic_store_n(&b->zero_pending, true, __ATOMIC_RELAXED);
    return 0;
}

static void remember_host_size(struct cuda_backend *b, void *ptr, size_t size)
{
    pthread_mutex_lock(&b->cache_lock);
    if (b->host_size_count < DEVRT_CUDA_HOST_SIZES)
        b->host_sizes[b->host_size_count++] = (struct cuda_host_size){ptr, size};
    pthread_mutex_unlock(&b->cache_lock);
}

/* The size remember_host_size kept for PTR, forgotten now; 0 if none. */
static size_t forget_host_size(struct cuda_backend *b, void *ptr)
{
    size_t size = 0;
    pthread_mutex_lock(&b->cache_lock);
    for (size_t i = 0; i < b->host_size_count; ++i)
        if (b->host_sizes[i].ptr == ptr) {
            size = b->host_sizes[i].size;
            b->host_sizes[i] = b->host_sizes[--b->host_size_count];
            break;
        }
    pthread_mutex_unlock(&b->cache_lock);
    return size;
}

/* Pinned host memory that the device sees at the host's address (unified addressing). */
void *devrt_cuda_map_host(size_t size)
{
    void *ptr = NULL;
    if (cu.cuMemHostAlloc(&ptr, size, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) !=
        CUDA_SUCCESS)
        return NULL;
    CUdeviceptr mapped = 0;
    if (cu.cuMemHostGetDevicePointer(&mapped, ptr, 0) != CUDA_SUCCESS ||
        (void *)(uintptr_t)mapped != ptr) {
        cu.cuMemFreeHost(ptr);
        return NULL;
    }
    return ptr;
}

static void *cuda_alloc(devrt_device *device, size_t size, enum devrt_memory memory)
{
    struct cuda_backend *b = bind(device);
    size_t taken = 0;
    void *cached = take_cached(b, size, memory, &taken);
    if (cached) {
        if (host_visible(memory))
            remember_host_size(b, cached, taken);
        if (memory == DEVRT_MEMORY_HOST)
            memset(cached, 0, size);
        else if (memory == DEVRT_MEMORY_DEVICE &&
                 zero_device(b, (CUdeviceptr)(uintptr_t)cached, size) != 0)
            return cu.cuMemFree((CUdeviceptr)(uintptr_t)cached), NULL;
        return cached;
    }
    if (!host_visible(memory)) {
        CUdeviceptr ptr = 0;
        if (cu.cuMemAlloc(&ptr, size) != CUDA_SUCCESS)
            return NULL;
        if (memory == DEVRT_MEMORY_DEVICE && zero_device(b, ptr, size) != 0) {
            cu.cuMemFree(ptr);
            return NULL;
        }
        return (void *)(uintptr_t)ptr;
    }
    void *ptr = devrt_cuda_map_host(size);
    if (!ptr)
        return NULL;
    if (memory == DEVRT_MEMORY_HOST)
        memset(ptr, 0, size);
    remember_host_size(b, ptr, size);
    return ptr;
}

static void release_memory(void *ptr, bool host)
{
    if (!host)
        cu.cuMemFree((CUdeviceptr)(uintptr_t)ptr);
    else
        cu.cuMemFreeHost(ptr);
}

/* Blocks the cache let go, freed outside its lock (a free of pinned memory takes a while). */
static void release_blocks(const struct devrt_memory_block *blocks, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        release_memory(blocks[i].ptr, blocks[i].kind);
}

/* Kept for the next load while there is room; the size is the driver's, asked for once. */
static void cuda_free(devrt_device *device, void *ptr, enum devrt_memory memory)
{
    if (!ptr)
        return;
    struct cuda_backend *b = bind(device);
    CUdeviceptr start = 0, at = (CUdeviceptr)(uintptr_t)ptr;
    size_t size = 0;
    bool known;
    if (host_visible(memory)) {
        size = forget_host_size(b, ptr);
        start = at;
        known = size != 0;
    } else {
        known = cu.cuMemGetAddressRange(&start, &size, at) == CUDA_SUCCESS;
    }
    if (known && start == at) {
        struct devrt_memory_block gone[DEVRT_MEMORY_CACHE_ENTRIES + 1];
        pthread_mutex_lock(&b->cache_lock);
        size_t count = devrt_memory_cache_keep(
            &b->cache, (struct devrt_memory_block){ptr, size, host_visible(memory)}, gone);
        pthread_mutex_unlock(&b->cache_lock);
        release_blocks(gone, count);
        return;
    }
    release_memory(ptr, host_visible(memory));
}

/*
 * Is [address, address + size) inside one allocation the driver knows (device memory, a
 * module's globals, or mapped host memory)? A unified copy would take an address it does
 * not know for pageable host memory and fault on it.
 */
int devrt_cuda_known_range(uintptr_t address, size_t size, bool *host)
{
    CUdeviceptr start = 0;
    size_t length = 0;
    unsigned int type = 0;
    CUdeviceptr ptr = (CUdeviceptr)address;
    if (cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr) != CUDA_SUCCESS)
        return -1;
    /* Where the driver can say how far the allocation reaches, the copy must stay inside. */
    if (cu.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, ptr) ==
            CUDA_SUCCESS &&
        cu.cuPointerGetAttribute(&length, CU_POINTER_ATTRIBUTE_RANGE_SIZE, ptr) == CUDA_SUCCESS &&
        (address < start || size > length || address - start > length - size))
        return -1;
    *host = type == CU_MEMORYTYPE_HOST;
    return 0;
}

/*
 * A copy between host memory and the device address `device_side` (src when reading, dst
 * when writing). Where the driver cannot place the address, the copy names its direction
 * (device to host, host to device): the driver then refuses an address that is no device
 * memory with an error instead of reading or writing the host's.
 */
int devrt_cuda_copy_on(CUstream stream, void *dst, const void *src, size_t size, bool read)
{
    bool host = false;
    CUresult r;
    if (devrt_cuda_known_range((uintptr_t)(read ? src : dst), size, &host) == 0) {
        if (host) {
            memcpy(dst, src, size);
            return 0;
        }
        r = cu.cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, size,
                             stream);
    } else if (read) {
        r = cu.cuMemcpyDtoHAsync(dst, (CUdeviceptr)(uintptr_t)src, size, stream);
    } else {
        r = cu.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dst, src, size, stream);
    }
    return r == CUDA_SUCCESS && cu.cuStreamSynchronize(stream) == CUDA_SUCCESS ? 0 : -1;
}

static int copy(devrt_device *device, void *dst, const void *src, size_t size, bool read)
{
    if (size == 0)
        return 0;
    struct cuda_backend *b = bind(device);
    if (devrt_cuda_copy_on(b->copy, dst, src, size, read) != 0)
        return -1;
    __atomic_store_n(&b->zero_pending, false, __ATOMIC_RELAXED);
    return 0;
}

static int cuda_read(devrt_device *device, void *dst, const void *src, size_t size)
{
    return copy(device, dst, src, size, true);
}

static int cuda_write(devrt_device *device, void *dst, const void *src, size_t size)
{
    return copy(device, dst, src, size, false);
}

static int cuda_open(devrt_device *device, int index)
{
    pthread_once(&cu_once, open_driver);
    if (!cu.library)
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "CUDA: %s", cu.error);
    CUresult r = cu.cuInit(0);
    if (r != CUDA_SUCCESS)
        return cuda_failed(DEVRT_ERROR_NO_DEVICE, r, "the driver did not start (no NVIDIA GPU?)");
    int count = 0;
    cu.cuDeviceGetCount(&count);
    if (index < 0 || index >= count)
        return devrt_fail(DEVRT_ERROR_NO_DEVICE, "CUDA: no NVIDIA GPU %d (found %d)", index, count);

    struct cuda_backend *b = calloc(1, sizeof *b);
    if (!b)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for the CUDA backend");
    int major = 0, unified = 0, maps = 0, warp = 32;
    r = cu.cuDeviceGet(&b->device, index);
    if (r == CUDA_SUCCESS) {
        cu.cuDeviceGetName(b->name, sizeof b->name, b->device);
        cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, b->device);
        cu.cuDeviceGetAttribute(&b->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, b->device);
        b->major = major;
        pthread_mutex_init(&b->cache_lock, NULL);
        b->cache.limit = DEVRT_CUDA_CACHED_BYTES;
        cu.cuDeviceGetAttribute(&unified, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, b->device);
        cu.cuDeviceGetAttribute(&maps, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, b->device);
        cu.cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, b->device);
    }
    if (r != CUDA_SUCCESS) {
        free(b);
        return cuda_failed(DEVRT_ERROR_NO_DEVICE, r, "cannot open the device");
    }
    if (major < 7 || !unified || !maps) {
        int status = devrt_fail(DEVRT_ERROR_NO_DEVICE,
                                "CUDA: %s lacks what devrt needs (sm_70 or newer, unified "
                                "addressing, mapped host memory)",
                                b->name);
        free(b);
        return status;
    }
    /*
     * The launching thread sleeps until its kernel is done instead of spinning a core; it
     * fails harmlessly when the primary context is active already with other flags.
     */
    cu.cuDevicePrimaryCtxSetFlags(b->device, CU_CTX_SCHED_BLOCKING_SYNC);
    r = cu.cuDevicePrimaryCtxRetain(&b->context, b->device);
    if (r != CUDA_SUCCESS) {
        free(b);
        if (sticky(r))
            return cuda_failed(DEVRT_ERROR_DEVICE_LOST, r,
                               "a kernel faulted this GPU earlier in the process, and the driver "
                               "keeps the fault for the process's lifetime (even after the "
                               "primary context's reset): only a new process can use the GPU "
                               "again; cuDevicePrimaryCtxRetain");
        return cuda_failed(DEVRT_ERROR_BACKEND, r, "cannot take the device's primary context");
    }
    cu.cuCtxSetCurrent(b->context);
    devrt_device_set_backend_state(device, b);
    devrt_device_set_wave_size(device, (uint32_t)warp);
    r = cu.cuStreamCreate(&b->launch, CU_STREAM_NON_BLOCKING);
    if (r == CUDA_SUCCESS)
        r = cu.cuStreamCreate(&b->copy, CU_STREAM_NON_BLOCKING);
    struct devrt_rpc_doorbell *doorbell =
        r == CUDA_SUCCESS ? cuda_alloc(device, sizeof *doorbell, DEVRT_MEMORY_HOST) : NULL;
    devrt_device_set_doorbell(device, doorbell);
    if (!doorbell) {
        int failure = r != CUDA_SUCCESS
                          ? cuda_failed(DEVRT_ERROR_BACKEND, r, "cannot create streams")
                          : devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY,
                                       "CUDA: no mapped host memory for the doorbell");
        if (b->launch)
            cu.cuStreamDestroy(b->launch);
        if (b->copy)
            cu.cuStreamDestroy(b->copy);
        cu.cuDevicePrimaryCtxRelease(b->device);
        free(b);
        devrt_device_set_backend_state(device, NULL);
        return failure;
    }
    return DEVRT_SUCCESS;
}

static void cuda_close(devrt_device *device)
{
    struct cuda_backend *b = bind(device);
    cuda_free(device, devrt_device_doorbell(device), DEVRT_MEMORY_HOST);
    for (size_t i = 0; i < b->event_count; ++i)
        cu.cuEventDestroy(b->events[i]);
    free(b->events);
    struct devrt_memory_block gone[DEVRT_MEMORY_CACHE_ENTRIES];
    release_blocks(gone, devrt_memory_cache_drain(&b->cache, gone));
    pthread_mutex_destroy(&b->cache_lock);
    cu.cuStreamDestroy(b->launch);
    cu.cuStreamDestroy(b->copy);
    cu.cuDevicePrimaryCtxRelease(b->device);
    /*
     * A fault left the context unusable. The reset is what the driver offers; on driver 580
     * (CUDA 13.0) the fault outlives it, and the next open says so (docs/runtime.md).
     */
    if (devrt_device_is_lost(device))
        cu.cuDevicePrimaryCtxReset(b->device);
    free(b);
}

/*
 * Since CUDA 12.2 the driver loads a module's kernels lazily, at their first launch, and that
 * load may wait for every kernel running in the context: a first launch from a module would
 * then wait behind a kernel that ran on past its timeout, or behind a kernel of another module
 * that waits for it. So every kernel is loaded now, while the load may take its time. Drivers
 * older than 12.4 lack the calls: their kernels stay lazy unless CUDA_MODULE_LOADING=EAGER.
 */
static CUresult load_kernels(CUmodule module)
{
#if CUDA_VERSION >= 12040
    unsigned count = 0;
    /* DEVRT_CUDA_LAZY_KERNELS keeps the driver's way: the control of the test that shows it. */
    if (!cu.function_count || !cu.functions || !cu.load_function ||
        getenv("DEVRT_CUDA_LAZY_KERNELS"))
        return CUDA_SUCCESS;
    CUresult r = cu.function_count(&count, module);
    if (r != CUDA_SUCCESS || !count)
        return r;
    CUfunction *functions = malloc(count * sizeof *functions);
    if (!functions)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r = cu.functions(functions, count, module);
    for (unsigned i = 0; r == CUDA_SUCCESS && i < count; ++i)
        r = cu.load_function(functions[i]);
    free(functions);
    return r;
#else
    (void)module;
    return CUDA_SUCCESS;
#endif
}

static int cuda_load(devrt_module *module, struct devrt_state ***state_variable)
{
    bind(devrt_module_device(module));
    const char *path = devrt_module_path(module);
    struct cuda_module *m = calloc(1, sizeof *m);
    if (!m)
        return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for a module");
    devrt_kernel_cache_init(&m->kernels);
    char log[2048] = "";
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(uintptr_t)sizeof log};
    CUresult r = cu.cuModuleLoadDataEx(&m->module, devrt_module_image(module), 2, options, values);
    if (r != CUDA_SUCCESS) {
        devrt_kernel_cache_free(&m->kernels);
        free(m);
        if (!log[0]) {
            cuda_failed(DEVRT_ERROR_IMAGE, r, "cuModuleLoadDataEx");
            snprintf(log, sizeof log, "%s", devrt_last_error());
        }
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s: the driver cannot load it as PTX: %s", path, log);
    }
    r = load_kernels(m->module);
    if (r != CUDA_SUCCESS) {
        cu.cuModuleUnload(m->module);
        devrt_kernel_cache_free(&m->kernels);
        free(m);
        return cuda_failed(DEVRT_ERROR_IMAGE, r, "loading the module's kernels (cuFuncLoad)");
    }
    CUdeviceptr address = 0;
    size_t bytes = 0;
    r = cu.cuModuleGetGlobal(&address, &bytes, m->module, DEVRT_STATE_SYMBOL);
    if (r != CUDA_SUCCESS || bytes != sizeof(struct devrt_state *)) {
        cu.cuModuleUnload(m->module);
        devrt_kernel_cache_free(&m->kernels);
        free(m);
        return devrt_fail(DEVRT_ERROR_IMAGE, "%s: no %s in it (does it link devrt-nvptx.bc?)", path,
                          DEVRT_STATE_SYMBOL);
    }
    *state_variable = (struct devrt_state **)(uintptr_t)address;
    devrt_module_set_backend_state(module, m);
    return DEVRT_SUCCESS;
}

static void cuda_unload(devrt_module *module)
{
    struct cuda_module *m = devrt_module_backend_state(module);
    bind(devrt_module_device(module));
    cu.cuModuleUnload(m->module);
    devrt_kernel_cache_free(&m->kernels);
    free(m);
}

/*
 * With a driver that can tell (CUDA 12.4 and newer), the sizes of the kernel's parameters,
 * so that arguments that do not fit are refused. No test runs this where devrt is developed
 * (no NVIDIA GPU there); devrt_check_arguments, which takes the sizes, is tested on the
 * other backends.
 */
static uint32_t *param_sizes(CUfunction function, size_t *count)
{
    *count = 0;
#if CUDA_VERSION >= 12040
    if (!cu.param_info)
        return NULL;
    size_t offset, size;
    while (cu.param_info(function, *count, &offset, &size) == CUDA_SUCCESS)
        ++*count;
    uint32_t *sizes = malloc((*count ? *count : 1) * sizeof *sizes);
    for (size_t i = 0; sizes && i < *count; ++i)
        sizes[i] = cu.param_info(function, i, &offset, &size) == CUDA_SUCCESS ? (uint32_t)size : 0;
    return sizes;
#else
    (void)function;
    return NULL;
#endif
}

/* The kernel, looked up in the driver on its first launch only. */
static int find_kernel(devrt_module *module, const char *kernel, struct devrt_kernel_entry **out)
{
    struct cuda_module *m = devrt_module_backend_state(module);
    struct devrt_kernel_entry *k = devrt_kernel_cache_find(&m->kernels, kernel);
    if (!k) {
        CUfunction function;
        if (cu.cuModuleGetFunction(&function, m->module, kernel) != CUDA_SUCCESS)
            return devrt_fail(DEVRT_ERROR_NO_KERNEL, "%s: no kernel %s", devrt_module_path(module),
                              kernel);
        size_t count;
        uint32_t *sizes = param_sizes(function, &count);
        k = devrt_kernel_cache_add(&m->kernels, kernel, function, sizes, count);
        if (!k)
            return devrt_fail(DEVRT_ERROR_OUT_OF_MEMORY, "no memory for kernel %s", kernel);
    }
    *out = k;
    return DEVRT_SUCCESS;
}

/* Back to the spares (under the launches' lock). */
static void give_event(struct cuda_backend *b, CUevent event)
{
    if (b->event_count == b->event_capacity) {
        size_t capacity = b->event_capacity ? 2 * b->event_capacity : 64;
        CUevent *grown = realloc(b->events, capacity * sizeof *grown);
        if (!grown) {
            cu.cuEventDestroy(event);
            return;
        }
        b->events = grown;
        b->event_capacity = capacity;
    }
    b->events[b->event_count++] = event;
}

static CUevent take_event(struct cuda_backend *b)
{
    if (b->event_count)
        return b->events[--b->event_count];
    CUevent event = NULL;
    if (cu.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        return NULL;
    return event;
}

static int cuda_describe_kernel(devrt_module *module, const char *kernel,
                                struct devrt_kernel_description *description)
{
    struct devrt_kernel_entry *k;
    int status = find_kernel(module, kernel, &k);
    if (status != DEVRT_SUCCESS)
        return status;
    description->param_sizes = k->sizes;
    description->param_count = k->count;
    /* Without the sizes the driver would read a parameter's bytes past what was given. */
    if (!k->sizes)
        description->no_bytes_by_value =
            "which needs the parameters' sizes from the driver (CUDA 12.4 and newer)";
    return DEVRT_SUCCESS;
}

static CUstream stream_of(const struct devrt_launch_entry *entry)
{
    if (entry->stream->backend)
        return entry->stream->backend;
    const struct cuda_backend *b = devrt_device_backend_state(devrt_module_device(entry->module));
    return b->launch;
}

/*
 * After BEFORE, by its event. A synchronous launch without a timeout has none (its wait is
 * its stream's): an event recorded on its stream now stands for it, since its kernel is
 * queued there already; what another thread queued there after it is waited for too,
 * which orders more than needed and never less. The stand-in is an event of its own,
 * destroyed at once (the wait keeps its record, and the driver frees it once complete),
 * not a spare: a spare may be recorded again while this record is pending.
 */
static int cuda_order_after(struct devrt_launch_entry *entry,
                            const struct devrt_launch_entry *before)
{
    bind(devrt_module_device(entry->module));
    CUevent event = before->backend[0], stand_in = NULL;
    CUresult r = CUDA_SUCCESS;
    if (!event) {
        r = cu.cuEventCreate(&stand_in, CU_EVENT_DISABLE_TIMING);
        if (r == CUDA_SUCCESS)
            r = cu.cuEventRecord(stand_in, stream_of(before));
        event = stand_in;
    }
    if (r == CUDA_SUCCESS)
        r = cu.cuStreamWaitEvent(stream_of(entry), event, 0);
    if (stand_in)
        cu.cuEventDestroy(stand_in);
    if (r != CUDA_SUCCESS)
        return cuda_failed(DEVRT_ERROR_LAUNCH, r, "ordering a launch after the module's last");
    return DEVRT_SUCCESS;
}

/* A write on the launch's stream, so in order with the module's earlier kernels. */
static int cuda_point_state(struct devrt_launch_entry *entry)
{
    bind(devrt_module_device(entry->module));
    CUstream stream = stream_of(entry);
    CUdeviceptr where = (CUdeviceptr)(uintptr_t)&devrt_module_state(entry->module)->exception;
    uint64_t value = (uint64_t)(uintptr_t)entry->slot;
    CUresult r =
        cu.write_value ? cu.write_value(stream, where, value, 0) : CUDA_ERROR_NOT_SUPPORTED;
    if (r != CUDA_SUCCESS) /* little-endian halves */
        r = cu.cuMemsetD32Async(where, (unsigned)value, 1, stream) == CUDA_SUCCESS
                ? cu.cuMemsetD32Async(where + 4, (unsigned)(value >> 32), 1, stream)
                : CUDA_ERROR_NOT_SUPPORTED;
    if (r != CUDA_SUCCESS)
        return cuda_failed(DEVRT_ERROR_LAUNCH, r, "pointing the state at a launch's record");
    return DEVRT_SUCCESS;
}

/* The kernel on its stream, then an event that the wait waits for (asynchronous launches
   and those with a timeout; a synchronous one waits for its stream). */
static int cuda_submit(struct devrt_launch_entry *entry, const struct devrt_arg *args,
                       size_t arg_count)
{
    devrt_module *module = entry->module;
    struct cuda_backend *b = bind(devrt_module_device(module));
    CUstream stream = stream_of(entry);
    struct devrt_kernel_entry *k = NULL;
    int status = find_kernel(module, entry->kernel, &k);
    if (status != DEVRT_SUCCESS)
        return status;
    CUresult r = CUDA_SUCCESS;
    /* Fills of memory the kernel may use come first (zero_device). */
    if (__atomic_exchange_n(&b->zero_pending, false, __ATOMIC_RELAXED))
        r = cu.cuStreamSynchronize(b->copy);
    if (r != CUDA_SUCCESS)
        return cuda_failed(DEVRT_ERROR_LAUNCH, r, "waiting for the fills before a launch");
    void *params[arg_count ? arg_count : 1];
    for (size_t i = 0; i < arg_count; ++i)
        params[i] = (void *)devrt_arg_data(&args[i]); /* the driver copies each at launch */
    r = cu.cuLaunchKernel((CUfunction)k->function, entry->config.grid[0], entry->config.grid[1],
                          entry->config.grid[2], entry->config.block[0], entry->config.block[1],
                          entry->config.block[2], 0, stream, params, NULL);
    if (r != CUDA_SUCCESS)
        return cuda_failed(DEVRT_ERROR_LAUNCH, r, entry->kernel);
    entry->backend[0] = NULL;
    /*
     * A synchronous launch waits for the whole stream, which other threads' launches share;
     * one with a timeout waits for its own event, so that their kernels, queued after it,
     * do not count against its time.
     */
    if (entry->id || entry->config.timeout_ns) {
        CUevent event = take_event(b);
        if (!event || cu.cuEventRecord(event, stream) != CUDA_SUCCESS) {
            /* The kernel is queued: its wait falls back to the whole stream. */
            if (event)
                give_event(b, event);
            event = NULL;
        }
        entry->backend[0] = event;
    }
    return DEVRT_SUCCESS;
}

/*
 * Until DEADLINE (devrt_now_ns), polled: the driver has no wait with a timeout. The polls
 * start at 50 us apart and grow to 1 ms, so a launch of a few microseconds costs little
 * more than the synchronize would.
 */
static CUresult wait_until(CUevent event, CUstream stream, uint64_t deadline)
{
    struct timespec pause = {0, 50000};
    for (;;) {
        CUresult r = event ? cu.cuEventQuery(event) : cu.cuStreamQuery(stream);
        if (r != CUDA_ERROR_NOT_READY || devrt_now_ns() >= deadline)
            return r;
        nanosleep(&pause, NULL);
        if (pause.tv_nsec < 1000000)
            pause.tv_nsec *= 2;
    }
}

static int cuda_complete(struct devrt_launch_entry *entry, uint64_t deadline)
{
    devrt_device *device = devrt_module_device(entry->module);
    struct cuda_backend *b = bind(device);
    CUstream stream = entry->stream->backend ? entry->stream->backend : b->launch;
    CUevent event = entry->backend[0];
    CUresult r = deadline ? wait_until(event, stream, deadline)
                 : event  ? cu.cuEventSynchronize(event)
                          : cu.cuStreamSynchronize(stream);
    if (r == CUDA_ERROR_NOT_READY)
        return devrt_fail(DEVRT_ERROR_TIMEOUT,
                          "kernel %s ran past its timeout of %.3f s; CUDA cannot stop a kernel "
                          "without destroying the context, so it runs on, and the module's later "
                          "launches wait for it",
                          entry->kernel, (double)entry->config.timeout_ns / 1e9);
    if (r != CUDA_SUCCESS) {
        /*
         * A fault is sticky: the driver refuses the context's later work too, until the
         * primary context is reset (cuda_close).
         */
        const char *text = NULL;
        cu.cuGetErrorString(r, &text);
        char what[600];
        if (entry->id)
            snprintf(what, sizeof what, "kernel %s (launch %" PRIu64 ") faulted: CUDA: %s (%d)",
                     entry->kernel, entry->id, text ? text : "unknown error", (int)r);
        else
            snprintf(what, sizeof what, "kernel %s faulted: CUDA: %s (%d)", entry->kernel,
                     text ? text : "unknown error", (int)r);
        return devrt_device_mark_lost(device, what);
    }
    return DEVRT_SUCCESS;
}

static void cuda_release(struct devrt_launch_entry *entry)
{
    struct cuda_backend *b = devrt_device_backend_state(entry->stream->device);
    CUevent event = entry->backend[0];
    entry->backend[0] = NULL;
    if (event)
        give_event(b, event);
}

static int cuda_stream_create(devrt_stream *stream)
{
    bind(stream->device);
    CUstream s = NULL;
    CUresult r = cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS)
        return cuda_failed(DEVRT_ERROR_BACKEND, r, "cannot create a stream");
    stream->backend = s;
    return DEVRT_SUCCESS;
}

static void cuda_stream_destroy(devrt_stream *stream)
{
    bind(stream->device);
    cu.cuStreamDestroy((CUstream)stream->backend);
}

/* The memory size needs a driver function devrt does not otherwise use: left unknown. */
static void cuda_describe(const devrt_device *device, struct devrt_device_info *info)
{
    const struct cuda_backend *b = devrt_device_backend_state(device);
    snprintf(info->name, sizeof info->name, "sm_%d%d %.100s", b->major, b->minor, b->name);
}

/* The GPU's PCI address ("0000:3b:00.0", hex in either case), then sysfs's list for it. */
static int cuda_local_cpus(const devrt_device *device, char *list, size_t size)
{
    const struct cuda_backend *b = devrt_device_backend_state(device);
    char id[64];
    unsigned domain, bus, slot, function;
    if (!cu.bus_id || cu.bus_id(id, (int)sizeof id, b->device) != CUDA_SUCCESS ||
        sscanf(id, "%x:%x:%x.%x", &domain, &bus, &slot, &function) != 4)
        return -1;
    return devrt_pci_local_cpus("/sys", domain, bus, slot, function, list, size);
}

const struct devrt_backend_ops devrt_cuda_backend = {
    .open = cuda_open,
    .close = cuda_close,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .read = cuda_read,
    /* The copy stream's copies run on the copy engines, beside any kernel. */
    .read_serving = cuda_read,
    .write = cuda_write,
    .load = cuda_load,
    .unload = cuda_unload,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .describe_kernel = cuda_describe_kernel,
    .order_after = cuda_order_after,
    .point_state = cuda_point_state,
    .state_in_stream_order = true,
    .submit = cuda_submit,
    .complete = cuda_complete,
    .release = cuda_release,
    .arm_doorbell = devrt_polled_arm_doorbell,
    .wait_doorbell = devrt_polled_wait_doorbell,
    .ring_doorbell = devrt_polled_ring_doorbell,
    .describe = cuda_describe,
    .local_cpus = cuda_local_cpus,
};
