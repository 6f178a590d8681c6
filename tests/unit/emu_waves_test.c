/*
 * The wave scheduler alone (host/backends/emu_waves.c), as a program other than libdevrt
 * uses it: the lanes of a kernel that spins until released, stopped from another thread
 * through the grid's cancel flag, a stop that neither a deadline nor the kernel asks for.
 *
 *   emu_waves_test IMAGE cancel    cancel after 50 ms: STOPPED, and no lane ran past the spin
 *   emu_waves_test IMAGE release   (the control) release after 50 ms: DONE, every lane ran
 *
 * No wall-clock limit is asserted: a loaded machine may start the lanes late.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "emu_waves.h"

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

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "cancel") && strcmp(argv[2], "release"))) {
        fprintf(stderr, "usage: %s IMAGE cancel|release\n", argv[0]);
        return 2;
    }
    bool cancel_it = !strcmp(argv[2], "cancel");
    void *image = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!image) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    devrt_emu_enter_fn *enter = (devrt_emu_enter_fn *)dlsym(image, DEVRT_EMU_ENTER_SYMBOL);
    devrt_emu_call_fn *call = (devrt_emu_call_fn *)dlsym(image, DEVRT_EMU_CALL_PREFIX "spin_bare");
    if (!enter || !call) {
        fprintf(stderr, "%s: no %s or spin_bare's caller\n", argv[1], DEVRT_EMU_ENTER_SYMBOL);
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
    printf("%s: result %d (expected %d), %u lanes ran past the spin (expected %u)\n", argv[2],
           (int)run.result, (int)expected, lanes, expected_lanes);
    return run.result == expected && lanes == expected_lanes ? 0 : 1;
}
