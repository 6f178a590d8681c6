/*
 * Fault injection into a device's RPC server, for tests only (docs/reliability.md). The
 * runtime has no fault code: its server calls hooks through one pointer
 * (host/runtime/fault_hooks.h), NULL until a test calls devrt_faults_set, which installs
 * this library's. The server then loses doorbells, stalls, delays hand-backs, lifts its
 * output bound or runs a planted bug, as the settings say. Tests link this library
 * (devrt_test_faults) and the static runtime.
 */
#ifndef DEVRT_FAULTS_H
#define DEVRT_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <devrt/host.h>

/*
 * Not a fault: the times of one hand-back (CLOCK_MONOTONIC, ns), so that the RPC benchmark
 * can split the server's turn into its steps (docs/performance.md). It shares the hooks.
 */
struct devrt_server_timeline_entry {
    uint64_t woke;    /* the doorbell wait returned; 0 when the look followed a busy one */
    uint64_t pass;    /* the pass or the look at the ready rings began, the lock held */
    uint64_t seen;    /* it saw the port's flip */
    uint64_t read;    /* the packets are read and checked */
    uint64_t handled; /* the handler has run; 0 for a packet that is not a message's last */
    uint64_t handed;  /* the replies and the inbox store are written: the device may see them */
};

struct devrt_fault_settings {
    /* The next N rings that wake the sleeping server are lost: it sleeps out its poll. */
    uint32_t drop_doorbells;
    /*
     * The control of the lost doorbell: the poll that recovers it is off, and the server
     * sleeps until the settings change.
     */
    bool no_poll_recovery;
    uint32_t stall_ms;           /* the server's next pass starts this much later (once) */
    uint32_t hand_back_delay_us; /* every hand-back of a port waits this long */
    /*
     * The bound on the bytes the server holds for unfinished messages (docs/output.md); 0
     * keeps the default, DEVRT_SERVER_BUFFER_BUDGET.
     */
    size_t buffer_budget;
    bool unbounded_buffer; /* the control of the bound: it is off */
    /*
     * For the control of the bound: the server takes no message's last packet until it holds
     * this many bytes of unfinished messages, so that many messages are unfinished at once
     * however the machine schedules the waves. A failsafe gives up after hold_limit_ms (the
     * statistics say whether the bytes were reached or the hold gave up).
     */
    size_t hold_ends_until;
    uint32_t hold_limit_ms;
    /* The control of the drain of an ended kernel: it keeps to the bound as if it ran on. */
    bool drain_keeps_bound;
    /* A planted bug for the fuzzer to find: a refused message is not forgotten. */
    bool keep_refused_message;
    /* A planted leak for the leak check to find: an unloaded module's struct is not freed. */
    bool leak_unloaded_modules;
    /*
     * Long raw writes stream their bytes packet by packet, in the modules loaded and to be
     * loaded, as on a backend whose server cannot copy while it serves (HSA): the tests of
     * the bound on unfinished messages need messages of many packets.
     */
    bool stream_output;
    /*
     * Not a fault: called as a launch of MODULE that raised is concluded, before its module's
     * ports are taken back, so that a test can queue a launch in between (rpc_test).
     */
    void (*before_reclaim)(devrt_module *module, void *arg);
    void *before_reclaim_arg;
    /*
     * Not a fault: count the launches' waits (launch_events below), so that a test can wait
     * until a launch is held behind another, or a wait and an unload are under way, instead
     * of sleeping long enough for it.
     */
    bool count_launch_events;
    /*
     * A stop on a condition, not a clock: once *stop_after (the test's flag, set from its
     * output callback, for instance, once a line has ended) reads true, the next packet the
     * server defers for the bound stops the running launch as its timeout would on the
     * emulation (stats.stopped says that it did), and from then on the server holds every
     * packet of the running kernel: the deferred port still waits on the bound when the
     * kernel is known to have ended, however late the stopped lanes notice.
     */
    const bool *stop_after;
    /*
     * The control of the ready ring (include/devrt/rpc.h): modules loaded while it is set
     * get none, and the server finds their requests by passes over every port alone.
     */
    bool no_ready_ring;
    /* The test of the ring: the server makes no pass over every port, and finds requests
       through the ready rings alone. */
    bool ring_only;
    /* Where to record each hand-back's times, up to timeline_capacity of them. */
    struct devrt_server_timeline_entry *timeline;
    size_t timeline_capacity;
};

struct devrt_fault_stats {
    uint32_t doorbells_dropped;
    /*
     * The last lost ring: the server passes that took no packet of the request after it
     * slept out its poll (0 when the first pass served it), and the time from the ring to
     * the hand-back of the first packet taken after it. recovered: that has happened.
     */
    bool recovered;
    uint64_t recovery_passes;
    uint64_t recovery_ns;
    uint32_t stalls;
    uint64_t delayed_hand_backs;
    /* The server's buffers of unfinished messages (the bound's subject), now and at most. */
    size_t buffered_bytes, buffered_peak, buffer_bound;
    uint64_t deferred_packets; /* packets left for a later pass because of the bound */
    uint64_t deferred_unread;  /* of those, left again without a read of their port */
    uint64_t packets_taken;    /* packets the server took since the settings were set */
    uint64_t found_by_ring;    /* of those, found through a ready ring, not a pass */
    /* Favoured messages replaced after a poll interval without a packet: each may hold up
       to a request more than the bound's usual excess (docs/output.md, "Memory"). */
    uint64_t stale_favourites;
    /* Checks of an ended kernel's packets that met the bound: each taken at once, or,
       with drain_keeps_bound, checked again each pass until the favour comes to it. */
    uint64_t packets_after_end;
    uint64_t stale_after_end;        /* of the stale favourites, those while it was drained */
    bool hold_reached, hold_gave_up; /* hold_ends_until's outcome */
    /* count_launch_events: launches held behind an earlier one before they could go; waits
       that took a launch to conclude it; unloads that waited for such a wait */
    uint64_t launches_held, waits_taken, detach_waits;
    bool stopped;            /* stop_after stopped the launch */
    size_t timeline_entries; /* entries written into settings.timeline */
};

/* Replace the device's fault settings (zeroed: none); the statistics start over. */
void devrt_faults_set(devrt_device *device, const struct devrt_fault_settings *settings);
void devrt_faults_get(devrt_device *device, struct devrt_fault_stats *stats);

#endif
