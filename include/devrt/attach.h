/*
 * Attaching devrt to a module that a program loaded and launches itself (through HIP, the
 * CUDA driver, or a runtime of its own): devrt finds __devrt_state in the module, sets up
 * the state block, the RPC channel and the heap with the program's API, and serves the
 * module's kernels while the program launches them on its own streams.
 *
 *     devrt_module *attached;
 *     devrt_cuda_attach(module, NULL, &attached);      // or devrt_hip_attach (<devrt/hip.h>)
 *     ... the program's own launches, then its own synchronization ...
 *     devrt_attached_check(attached, "kernel", &config, &report);
 *     devrt_detach(attached);
 *
 * The attached module is a devrt_module: its output and report files, its output callback
 * and devrt_heap_stats work as for a loaded one; devrt_launch refuses it.
 */
#ifndef DEVRT_ATTACH_H
#define DEVRT_ATTACH_H

#include <devrt/host.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What an API gives devrt to attach through: a handful of calls on the program's module
 * and device. Each returns 0 (a pointer: non-NULL) on success. devrt calls them from the
 * threads that call devrt_attach, devrt_attached_check and devrt_detach, and from its
 * server thread (the heap grows while a kernel waits), possibly at the same time.
 */
struct devrt_attach_api {
    enum devrt_backend backend; /* what devrt_device_backend-style names call it */
    uint32_t wave_size;         /* lanes per wave of the device */
    /* The module's global NAME: its device address and size in bytes. */
    int (*find_global)(void *context, const char *name, void **address, size_t *size);
    /* Device memory, as it comes; devrt zeroes what needs it. */
    void *(*alloc_device)(void *context, size_t size);
    void (*free_device)(void *context, void *ptr);
    /* Host memory the device reads and writes at the same address (mapped, pinned). */
    void *(*alloc_host)(void *context, size_t size);
    void (*free_host)(void *context, void *ptr);
    /*
     * Copy between any two of: device memory, the module's globals, host memory; done when
     * it returns. It must fail, not fault, on an address that is none of them (devrt reads
     * the strings of exception reports, whose addresses come from the device). It must not
     * wait for the program's kernels: the server copies while they wait for it.
     */
    int (*copy)(void *context, void *dst, const void *src, size_t size);
    /* Wait for every kernel the program launched that may use the module. */
    int (*synchronize)(void *context);
    /* Optional: the attachment is gone; the API's context may be freed. */
    void (*release)(void *context);
};

/*
 * Attach through API (with CONTEXT passed to each call) to the module it knows. NAME names
 * the module in messages. OPTIONS as for devrt_device_open (rpc_ports and the heap's sizes;
 * NULL: defaults). A module without __devrt_state, or whose __devrt_state is no devrt
 * library's, is refused with DEVRT_ERROR_IMAGE or DEVRT_ERROR_ABI_MISMATCH and nothing
 * changes in it; on failure release is called too.
 */
int devrt_attach(const struct devrt_attach_api *api, void *context, const char *name,
                 const struct devrt_device_options *options, devrt_module **module);

/*
 * After the program's own synchronization: the report of the first exception a kernel of
 * the module raised since the last check (or the first malformed request), exactly as
 * devrt_launch reports it, output first, with the line written to the module's report
 * file. KERNEL and CONFIG are the launch the program made, for the report's names and
 * three-dimensional ids; without them the kernel is "(attached)" and the ids are flat, in
 * x. Returns DEVRT_SUCCESS, DEVRT_ERROR_EXCEPTION or DEVRT_ERROR_DEVICE_REQUEST; the next
 * check starts clean. Checks of one module from several threads take turns: one of them
 * reports an exception, the others start clean after it.
 */
int devrt_attached_check(devrt_module *module, const char *kernel,
                         const struct devrt_launch_config *config,
                         struct devrt_launch_report *report);

/*
 * Wait for the program's kernels (the API's synchronize, while still serving them), take
 * every request and flush the output, write the line of an exception no check took, point
 * __devrt_state back where it was, and free everything devrt allocated. If the wait fails
 * (DEVRT_ERROR_BACKEND) nothing is freed and the module stays attached: memory is never
 * freed under a kernel that may still run. devrt_module_unload on an attached module
 * detaches it.
 */
int devrt_detach(devrt_module *module);

#ifdef __cplusplus
}
#endif

#endif
