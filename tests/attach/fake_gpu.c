/* The host GPU API of tests/attach (fake_gpu.h). */
#include "fake_gpu.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <ffi.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <devrt/emu.h>

#include "emu_ffi.h"

struct fake_gpu_module {
    void *handle;
    devrt_emu_enter_fn *enter;
    /* The image's loaded segments: a GPU runtime's own allocations of the code object. */
    struct {
        char *start;
        size_t size;
    } segments[16];
    size_t segment_count;
};

static struct fake_gpu_module *loaded[64];

struct group {
    pthread_mutex_t lock;
    pthread_cond_t released;
    uint32_t live, arrived;
    uint64_t generation;
};

struct lane {
    struct devrt_emu_lane lane; /* first: what the device sees */
    struct group *group;
    jmp_buf ended;
    struct launch *launch;
};

struct launch {
    struct launch *next;
    struct fake_gpu_module *module;
    void (*fn)(void);
    uint32_t grid[3], block[3];
    struct devrt_arg *args;
    size_t arg_count;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct launch *head, *tail;
    bool running; /* a launch is running */
    bool started;
    pthread_t thread;
    uint64_t synchronizations, frees_while_running;
    /* Every allocation not yet freed (kept ones included), for fake_gpu_range. */
    struct allocation {
        char *start;
        size_t size;
    } *allocations;
    size_t allocation_count, allocation_capacity;
} gpu = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

/* dl_iterate_phdr's callback: the segments of the object whose handle is being loaded. */
static int add_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct fake_gpu_module *m = arg;
    struct link_map *map = NULL;
    if (dlinfo(m->handle, RTLD_DI_LINKMAP, &map) != 0 || !map || map->l_addr != info->dlpi_addr)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && m->segment_count < 16; ++i)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            m->segments[m->segment_count].start =
                (char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
            m->segments[m->segment_count++].size = info->dlpi_phdr[i].p_memsz;
        }
    return 1;
}

int fake_gpu_load(const char *path, struct fake_gpu_module **out, const char **error)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        *error = dlerror();
        return -1;
    }
    struct fake_gpu_module *m = calloc(1, sizeof *m);
    m->handle = handle;
    m->enter = (devrt_emu_enter_fn *)dlsym(handle, DEVRT_EMU_ENTER_SYMBOL);
    dl_iterate_phdr(add_segments, m);
    pthread_mutex_lock(&gpu.lock);
    for (size_t i = 0; i < sizeof loaded / sizeof *loaded; ++i)
        if (!loaded[i]) {
            loaded[i] = m;
            break;
        }
    pthread_mutex_unlock(&gpu.lock);
    *out = m;
    return 0;
}

void fake_gpu_unload(struct fake_gpu_module *module)
{
    pthread_mutex_lock(&gpu.lock);
    for (size_t i = 0; i < sizeof loaded / sizeof *loaded; ++i)
        if (loaded[i] == module)
            loaded[i] = NULL;
    pthread_mutex_unlock(&gpu.lock);
    dlclose(module->handle);
    free(module);
}

void *fake_gpu_symbol(struct fake_gpu_module *module, const char *name)
{
    return dlsym(module->handle, name);
}

int fake_gpu_global(struct fake_gpu_module *module, const char *name, void **address, size_t *size)
{
    void *symbol = dlsym(module->handle, name);
    const ElfW(Sym) *entry = NULL;
    Dl_info info;
    if (!symbol || !dladdr1(symbol, &info, (void **)&entry, RTLD_DL_SYMENT) || !entry)
        return -1;
    *address = symbol;
    *size = entry->st_size;
    return 0;
}

static void barrier(struct devrt_emu_lane *public_lane)
{
    struct group *g = ((struct lane *)public_lane)->group;
    pthread_mutex_lock(&g->lock);
    uint64_t generation = g->generation;
    if (++g->arrived == g->live) {
        g->arrived = 0;
        g->generation++;
        pthread_cond_broadcast(&g->released);
    } else {
        while (generation == g->generation)
            pthread_cond_wait(&g->released, &g->lock);
    }
    pthread_mutex_unlock(&g->lock);
}

__attribute__((noreturn)) static void end_wave(struct devrt_emu_lane *public_lane)
{
    longjmp(((struct lane *)public_lane)->ended, 1);
}

/* A wave of one lane meets only itself. */
static void meet(struct devrt_emu_lane *lane, uint64_t mask, int predicate, uint32_t value,
                 struct devrt_emu_meeting *out)
{
    (void)lane;
    (void)mask;
    *out = (struct devrt_emu_meeting){1, predicate ? 1u : 0u, value};
}

static void lane_sleep(struct devrt_emu_lane *lane)
{
    (void)lane;
    sched_yield();
}

static ffi_cif cif;
static void *values[16];

static void *lane_main(void *arg)
{
    struct lane *lane = arg;
    lane->launch->module->enter(&lane->lane);
    if (setjmp(lane->ended) == 0)
        ffi_call(&cif, lane->launch->fn, NULL, values);
    struct group *g = lane->group;
    pthread_mutex_lock(&g->lock);
    g->live--;
    if (g->arrived && g->arrived == g->live) {
        g->arrived = 0;
        g->generation++;
        pthread_cond_broadcast(&g->released);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

/* Every lane of the grid at once, each a thread (the tests' grids are small). */
static void run(struct launch *l)
{
    ffi_type *types[16];
    for (size_t i = 0; i < l->arg_count; ++i) {
        types[i] = devrt_emu_ffi_type(l->args[i].type); /* each known: fake_gpu_launch */
        values[i] = &l->args[i].value;
    }
    ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)l->arg_count, &ffi_type_void, types);
    uint32_t groups = l->grid[0] * l->grid[1] * l->grid[2];
    uint32_t size = l->block[0] * l->block[1] * l->block[2];
    struct group *group = calloc(groups, sizeof *group);
    struct lane *lanes = calloc((size_t)groups * size, sizeof *lanes);
    pthread_t *threads = calloc((size_t)groups * size, sizeof *threads);
    for (uint32_t g = 0; g < groups; ++g) {
        pthread_mutex_init(&group[g].lock, NULL);
        pthread_cond_init(&group[g].released, NULL);
        group[g].live = size;
        for (uint32_t i = 0; i < size; ++i) {
            struct lane *lane = &lanes[(size_t)g * size + i];
            lane->group = &group[g];
            lane->launch = l;
            lane->lane = (struct devrt_emu_lane){
                .workitem = {i % l->block[0], i / l->block[0] % l->block[1],
                             i / l->block[0] / l->block[1]},
                .workgroup = {g % l->grid[0], g / l->grid[0] % l->grid[1],
                              g / l->grid[0] / l->grid[1]},
                .workgroup_size = {l->block[0], l->block[1], l->block[2]},
                .num_workgroups = {l->grid[0], l->grid[1], l->grid[2]},
                .barrier = barrier,
                .end_wave = end_wave,
                .wave_size = 1,
                .meet = meet,
                .sleep = lane_sleep,
            };
        }
    }
    for (size_t i = 0; i < (size_t)groups * size; ++i)
        pthread_create(&threads[i], NULL, lane_main, &lanes[i]);
    for (size_t i = 0; i < (size_t)groups * size; ++i)
        pthread_join(threads[i], NULL);
    for (uint32_t g = 0; g < groups; ++g) {
        pthread_mutex_destroy(&group[g].lock);
        pthread_cond_destroy(&group[g].released);
    }
    free(group);
    free(lanes);
    free(threads);
}

static void *stream_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gpu.lock);
    for (;;) {
        while (!gpu.head)
            pthread_cond_wait(&gpu.changed, &gpu.lock);
        struct launch *l = gpu.head;
        gpu.running = true;
        pthread_mutex_unlock(&gpu.lock);
        run(l);
        pthread_mutex_lock(&gpu.lock);
        gpu.head = l->next;
        if (!gpu.head)
            gpu.tail = NULL;
        gpu.running = false;
        free(l->args);
        free(l);
        pthread_cond_broadcast(&gpu.changed);
    }
    return NULL;
}

int fake_gpu_launch(struct fake_gpu_module *module, const char *kernel, const uint32_t grid[3],
                    const uint32_t block[3], const struct devrt_arg *args, size_t arg_count)
{
    void (*fn)(void) = (void (*)(void))dlsym(module->handle, kernel);
    if (!fn || !module->enter || arg_count > 16)
        return -1;
    for (size_t i = 0; i < arg_count; ++i)
        if (!devrt_emu_ffi_type(args[i].type))
            return -1; /* a struct by value: libffi would need its fields' types */
    struct launch *l = calloc(1, sizeof *l);
    l->module = module;
    l->fn = fn;
    memcpy(l->grid, grid, sizeof l->grid);
    memcpy(l->block, block, sizeof l->block);
    l->args = malloc((arg_count ? arg_count : 1) * sizeof *l->args);
    if (arg_count)
        memcpy(l->args, args, arg_count * sizeof *args);
    l->arg_count = arg_count;
    pthread_mutex_lock(&gpu.lock);
    if (!gpu.started) {
        pthread_create(&gpu.thread, NULL, stream_main, NULL);
        pthread_detach(gpu.thread);
        gpu.started = true;
    }
    if (gpu.tail)
        gpu.tail->next = l;
    else
        gpu.head = l;
    gpu.tail = l;
    pthread_cond_broadcast(&gpu.changed);
    pthread_mutex_unlock(&gpu.lock);
    return 0;
}

void fake_gpu_synchronize(void)
{
    pthread_mutex_lock(&gpu.lock);
    gpu.synchronizations++;
    pthread_cond_broadcast(&gpu.changed);
    while (gpu.head)
        pthread_cond_wait(&gpu.changed, &gpu.lock);
    pthread_mutex_unlock(&gpu.lock);
}

uint64_t fake_gpu_synchronizations(void)
{
    pthread_mutex_lock(&gpu.lock);
    uint64_t n = gpu.synchronizations;
    pthread_mutex_unlock(&gpu.lock);
    return n;
}

void *fake_gpu_alloc(size_t size)
{
    void *ptr = aligned_alloc(256, (size + 255) / 256 * 256);
    if (!ptr)
        return NULL;
    memset(ptr, 0, size);
    pthread_mutex_lock(&gpu.lock);
    if (gpu.allocation_count == gpu.allocation_capacity) {
        gpu.allocation_capacity = gpu.allocation_capacity ? 2 * gpu.allocation_capacity : 64;
        gpu.allocations =
            realloc(gpu.allocations, gpu.allocation_capacity * sizeof *gpu.allocations);
    }
    gpu.allocations[gpu.allocation_count++] = (struct allocation){ptr, size};
    pthread_mutex_unlock(&gpu.lock);
    return ptr;
}

void fake_gpu_free(void *ptr)
{
    if (!ptr)
        return;
    pthread_mutex_lock(&gpu.lock);
    bool running = gpu.head != NULL;
    if (running)
        gpu.frees_while_running++;
    for (size_t i = 0; !running && i < gpu.allocation_count; ++i)
        if (gpu.allocations[i].start == ptr) {
            gpu.allocations[i] = gpu.allocations[--gpu.allocation_count];
            break;
        }
    pthread_mutex_unlock(&gpu.lock);
    if (!running)
        free(ptr);
}

int fake_gpu_range(const void *address, void **start, size_t *size)
{
    const char *p = address;
    int found = -1;
    pthread_mutex_lock(&gpu.lock);
    for (size_t i = 0; i < gpu.allocation_count; ++i) {
        struct allocation a = gpu.allocations[i];
        if (p >= a.start && p < a.start + a.size) {
            *start = a.start;
            *size = a.size;
            found = 0;
            break;
        }
    }
    pthread_mutex_unlock(&gpu.lock);
    return found;
}

int fake_gpu_image_range(const void *address, void **start, size_t *size)
{
    const char *p = address;
    int found = -1;
    pthread_mutex_lock(&gpu.lock);
    for (size_t i = 0; found && i < sizeof loaded / sizeof *loaded; ++i)
        for (size_t j = 0; loaded[i] && j < loaded[i]->segment_count; ++j)
            if (p >= loaded[i]->segments[j].start &&
                p < loaded[i]->segments[j].start + loaded[i]->segments[j].size) {
                *start = loaded[i]->segments[j].start;
                *size = loaded[i]->segments[j].size;
                found = 0;
                break;
            }
    pthread_mutex_unlock(&gpu.lock);
    return found;
}

size_t fake_gpu_live_allocations(void)
{
    pthread_mutex_lock(&gpu.lock);
    size_t n = gpu.allocation_count;
    pthread_mutex_unlock(&gpu.lock);
    return n;
}

uint64_t fake_gpu_frees_while_running(void)
{
    pthread_mutex_lock(&gpu.lock);
    uint64_t n = gpu.frees_while_running;
    pthread_mutex_unlock(&gpu.lock);
    return n;
}

int fake_gpu_copy(void *dst, const void *src, size_t size)
{
    struct iovec local = {dst, size};
    struct iovec remote = {(void *)src, size};
    ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (n == (ssize_t)size)
        return 0;
    if (n < 0 && errno == EPERM) {
        memcpy(dst, src, size);
        return 0;
    }
    return -1;
}
