/*
 * The device's trace (docs/runtime.md, "Tracing"): launches, served requests, output, heap
 * growth, exceptions and the server's sleeps, kept as binary records in a bounded buffer
 * and written as Chrome trace-event JSON, which Perfetto and chrome://tracing open.
 *
 * Off, every hook below costs the load of device->trace and a branch that is never taken:
 * callers test devrt_trace_of first, and read the clock only when it says yes.
 */
#ifndef DEVRT_TRACE_H
#define DEVRT_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

/* The records kept before they are written out, unless DEVRT_TRACE_EVENTS says otherwise. */
#define DEVRT_TRACE_DEFAULT_EVENTS 65536u

/*
 * The device's trace, or NULL while it is off. Set once, before or while launches and the
 * server run, and freed only after both have stopped (devrt_trace_finish): acquire, so
 * that a thread that sees the pointer sees the trace it points at.
 */
static inline struct devrt_trace *devrt_trace_of(const devrt_device *device)
{
    return __atomic_load_n(&device->trace, __ATOMIC_ACQUIRE);
}

/* Whether TRACE is on: the branch the fast path takes is the one predicted. */
#define DEVRT_TRACING(trace) __builtin_expect((trace) != NULL, 0)

/* At devrt_device_create: DEVRT_TRACE=FILE starts the trace; a bad FILE fails the open. */
int devrt_trace_from_environment(devrt_device *device);
/* At devrt_device_close, once the server and the launches have stopped: writes the file. */
void devrt_trace_finish(devrt_device *device);

/* A launch from QUEUED_NS (0: unknown) to END_NS; STARTED_NS 0 where the host cannot see. */
void devrt_trace_launch(struct devrt_trace *trace, const struct devrt_launch_entry *e,
                        uint64_t queued_ns, uint64_t started_ns, uint64_t end_ns, int status);
/* The report line of a launch that raised or sent a malformed request, at AT_NS. */
void devrt_trace_exception(struct devrt_trace *trace, const struct devrt_launch_entry *e,
                           uint64_t at_ns, const char *text);
/* A request the server served (or refused) on PORT, handler and hand-back included. */
void devrt_trace_request(struct devrt_trace *trace, uint64_t start_ns, uint64_t end_ns,
                         uint32_t port, uint32_t opcode, uint64_t lane_mask, uint32_t units,
                         uint64_t bytes, bool refused);
/* The server slept on its doorbell for at most TIMEOUT_MS. */
void devrt_trace_sleep(struct devrt_trace *trace, uint64_t start_ns, uint64_t end_ns,
                       uint32_t timeout_ms);
/* A module's heap grew: RESERVED_BYTES are now reserved for it. */
void devrt_trace_heap(struct devrt_trace *trace, uint64_t at_ns, uint64_t reserved_bytes);

#endif
