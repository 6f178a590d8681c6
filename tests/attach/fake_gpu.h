/*
 * A GPU API of the program's own, on the host: what a HIP or CUDA program does with its
 * runtime (load a module, find a global, allocate, launch on a stream, synchronize), over
 * emulation images, so that attaching runs in CI. Kernels run in waves of one lane, each
 * lane a thread; launches run one after another on one stream thread, as a program's own
 * stream runs them. It also watches devrt: memory freed while a kernel runs is counted,
 * and kept, not freed, so that the test that counts it does not crash.
 */
#ifndef FAKE_GPU_H
#define FAKE_GPU_H

#include <stddef.h>
#include <stdint.h>

#include <devrt/host.h>

struct fake_gpu_module;

/* 0, or -1 with the reason in *error (static). */
int fake_gpu_load(const char *path, struct fake_gpu_module **module, const char **error);
void fake_gpu_unload(struct fake_gpu_module *module);
/* The module's symbol NAME (a kernel, its caller, __devrt_emu_enter), or NULL. */
void *fake_gpu_symbol(struct fake_gpu_module *module, const char *name);
/* The global NAME of the module: its address and size; -1 if it has none. */
int fake_gpu_global(struct fake_gpu_module *module, const char *name, void **address, size_t *size);
/* Queue KERNEL on the stream; ARGS are copied. 0, or -1 if the module lacks the kernel. */
int fake_gpu_launch(struct fake_gpu_module *module, const char *kernel, const uint32_t grid[3],
                    const uint32_t block[3], const struct devrt_arg *args, size_t arg_count);
/* Wait until every launch queued so far has ended. */
void fake_gpu_synchronize(void);
/* How many synchronizations have started waiting: a test sees the detach inside one. */
uint64_t fake_gpu_synchronizations(void);
/* Memory the "device" and the host share; zeroed. */
void *fake_gpu_alloc(size_t size);
void fake_gpu_free(void *ptr);
/* The allocation ADDRESS lies in: 0 with its start and size, or -1. */
int fake_gpu_range(const void *address, void **start, size_t *size);
/* The loaded segment of a module's image ADDRESS lies in: 0 with its start and size, or -1. */
int fake_gpu_image_range(const void *address, void **start, size_t *size);
/* Allocations not freed yet. */
size_t fake_gpu_live_allocations(void);
/* Frees that came while a kernel ran (and were kept instead). */
uint64_t fake_gpu_frees_while_running(void);
/* A copy that fails on an address nobody mapped, as a GPU API's copies do. */
int fake_gpu_copy(void *dst, const void *src, size_t size);

#endif
