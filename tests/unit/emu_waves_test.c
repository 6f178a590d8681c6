/*
 * The wave scheduler alone (host/backends/emu_waves.c), as a program other than libdevrt
 * uses it: the lanes of a kernel that spins until released, stopped from another thread
 * through the grid's cancel flag, a stop that neither a deadline nor the kernel asks for.
 *
 *   emu_waves_test IMAGE cancel    cancel after 50 ms: STOPPED, and no lane ran past the spin
 *   emu_waves_test IMAGE release   (the control) release after 50 ms: DONE, every lane ran
 *   emu_waves_chain_test IMAGE chain
 *                                  this copy of the scheduler and libdevrt.so's in one process,
 *                                  each installing its stop signal handler over the other's:
 *                                  cancel as above, a launch of libdevrt with a timeout (the
 *                                  runtime's handler installed last, over this copy's), then
 *                                  cancel again, whose signals reach this copy's handler only
 *                                  through the runtime's. Each must stop its own lanes.
 *
 * No wall-clock limit is asserted: a loaded machine may start the lanes late.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "emu_waves.h"

#ifdef EMU_WAVES_TEST_CHAIN
#include <devrt/host.h>
#endif

#define GROUPS 3u
#define BLOCK 40u /* a full wave of 32 and a partial one */

struct run {
    struct devrt_emu_grid grid;
    enum devrt_emu_grid_result result;
};

static void *run_grid(void *arg)
{
    struct run *run = arg;
    run->result = devrt_emu_run_grid(&run->grid);
    return NULL;
}

/* Runs spin_bare of IMAGE on this copy's lanes, cancelled or released after 50 ms. */
static int run_spin(const char *path, bool cancel_it)
{
    void *image = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!image) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    devrt_emu_enter_fn *enter = (devrt_emu_enter_fn *)dlsym(image, DEVRT_EMU_ENTER_SYMBOL);
    devrt_emu_call_fn *call = (devrt_emu_call_fn *)dlsym(image, DEVRT_EMU_CALL_PREFIX "spin_bare");
    if (!enter || !call) {
        fprintf(stderr, "%s: no %s or spin_bare's caller\n", path, DEVRT_EMU_ENTER_SYMBOL);
        return 1;
    }
    uint32_t release = 0, ran = 0;
    uint32_t *release_arg = &release, *ran_arg = &ran;
    void *values[] = {&release_arg, &ran_arg};
    bool cancel = false;
    struct run run = {.grid = {.enter = enter,
                               .call = call,
                               .values = values,
                               .block = {BLOCK, 1, 1},
                               .grid = {GROUPS, 1, 1},
                               .wave_size = 32,
                               .cancel = &cancel}};
    pthread_t thread;
    if (pthread_create(&thread, NULL, run_grid, &run) != 0) {
        fprintf(stderr, "cannot start the thread that runs the grid\n");
        return 1;
    }
    nanosleep(&(struct timespec){0, 50000000}, NULL);
    if (cancel_it)
        __atomic_store_n(&cancel, true, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&release, 1u, __ATOMIC_RELAXED);
    pthread_join(thread, NULL);
    uint32_t lanes = __atomic_load_n(&ran, __ATOMIC_RELAXED);
    enum devrt_emu_grid_result expected = cancel_it ? DEVRT_EMU_GRID_STOPPED : DEVRT_EMU_GRID_DONE;
    uint32_t expected_lanes = cancel_it ? 0 : GROUPS * BLOCK;
    printf("%s: result %d (expected %d), %u lanes ran past the spin (expected %u)\n",
           cancel_it ? "cancel" : "release", (int)run.result, (int)expected, lanes, expected_lanes);
    dlclose(image);
    return run.result == expected && lanes == expected_lanes ? 0 : 1;
}

#ifdef EMU_WAVES_TEST_CHAIN
/* The same kernel launched through libdevrt, never released, past a timeout of 100 ms. */
static int launch_with_timeout(const char *path)
{
    devrt_device *device;
    devrt_module *module;
    if (devrt_device_open(DEVRT_BACKEND_EMU, 0, NULL, &device) != DEVRT_SUCCESS ||
        devrt_module_load(device, path, &module) != DEVRT_SUCCESS) {
        fprintf(stderr, "libdevrt: %s\n", devrt_last_error());
        return 1;
    }
    uint32_t *words = devrt_mem_alloc(device, 2 * sizeof *words);
    const struct devrt_launch_config config = {
        .grid = {GROUPS, 1, 1}, .block = {BLOCK, 1, 1}, .timeout_ns = 100000000u};
    struct devrt_arg args[] = {DEVRT_ARG_PTR(&words[0]), DEVRT_ARG_PTR(&words[1])};
    int status = devrt_launch(module, "spin_bare", &config, args, 2, NULL);
    printf("libdevrt: %s (expected %s), %u lanes ran past the spin (expected 0)\n",
           devrt_status_string(status), devrt_status_string(DEVRT_ERROR_TIMEOUT), words[1]);
    bool held = status == DEVRT_ERROR_TIMEOUT && words[1] == 0;
    devrt_mem_free(device, words);
    devrt_device_close(device);
    return held ? 0 : 1;
}
#endif

int main(int argc, char **argv)
{
#ifdef EMU_WAVES_TEST_CHAIN
    if (argc == 3 && !strcmp(argv[2], "chain")) {
        int failed = run_spin(argv[1], true);
        failed |= launch_with_timeout(argv[1]);
        failed |= run_spin(argv[1], true);
        return failed;
    }
#endif
    if (argc != 3 || (strcmp(argv[2], "cancel") && strcmp(argv[2], "release"))) {
        fprintf(stderr, "usage: %s IMAGE cancel|release\n", argv[0]);
        return 2;
    }
    return run_spin(argv[1], !strcmp(argv[2], "cancel"));
}
