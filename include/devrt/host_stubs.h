/*
 * The host side of libdevrt_host.a and libdevrt_shield.a: every device symbol has a host
 * stub there, and a stub that is called writes one line to stderr naming the device
 * function and aborts. An embedding runtime that would rather raise an error of its own
 * installs a handler instead (docs/stubs.md).
 */
#ifndef DEVRT_HOST_STUBS_H
#define DEVRT_HOST_STUBS_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Called with the name of the device symbol whose stub ran, such as "devrt_malloc" or
 * "llvm.amdgcn.mbcnt.lo". The stub has no value to return to its caller, so a handler
 * should not return: it longjmps, throws, or exits. If it returns, the stub aborts.
 */
typedef void (*devrt_host_trap_handler)(const char *symbol);

/*
 * Installs handler for every stub of the image that linked the archive and returns the
 * previous one; NULL restores the default (message and abort). Safe to call from any
 * thread. Each image linked with the archive has its own handler, so a runtime finds this
 * function in the image it loaded, with dlsym.
 */
devrt_host_trap_handler devrt_set_host_trap_handler(devrt_host_trap_handler handler);

/*
 * What every stub calls: reports symbol through the handler, or writes the message and
 * aborts. Exposed so that stubs for further symbols behave the same. Hidden, so that the
 * stubs of an image always reach that image's handler, never one that another loaded
 * image's copy of the archive interposed.
 */
__attribute__((noreturn, visibility("hidden"))) void devrt_host_trap(const char *symbol);

#ifdef __cplusplus
}
#endif

#endif
