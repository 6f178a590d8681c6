/*
 * Where tests inject faults into a device's server (docs/reliability.md): one pointer in
 * struct devrt_server, NULL in every program but a test's, so that the runtime holds no
 * fault code and its server pays a test of that pointer at each hook. The hooks and their
 * state are tests/faults' (faults.c), a library the tests link with the static runtime;
 * devrt_faults_set there installs them. runtime.h has the server's side of each hook.
 */
#ifndef DEVRT_FAULT_HOOKS_H
#define DEVRT_FAULT_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include <devrt/host.h>

struct devrt_server;

/* Where a launch must wait for another thread or kernel (launch.c), which tests wait for. */
enum devrt_launch_event {
    DEVRT_LAUNCH_HELD,        /* a launch waits for an earlier one before it can go */
    DEVRT_LAUNCH_WAIT_TAKEN,  /* a wait has taken a launch and concludes it */
    DEVRT_LAUNCH_DETACH_WAITS /* an unload waits for a wait that has one of its launches */
};

/* The steps of a request that the server's timeline stamps (tests/faults/faults.h). */
enum devrt_server_step {
    DEVRT_SERVER_LOOK,   /* a look at the ready rings began */
    DEVRT_SERVER_SEEN,   /* a port's flip is seen, by a look or a pass */
    DEVRT_SERVER_READ,   /* its packets are read and checked */
    DEVRT_SERVER_HANDLED /* its handler has run (a message's last packet) */
};

struct devrt_fault_hooks {
    /* Waits on the doorbell as the backend would; may lose a ring. */
    void (*wait_doorbell)(devrt_device *device, uint64_t armed, uint32_t timeout_ms);
    /* The server's lock is held in pass, step, keep_refused, hand_back, handed, hold_end,
       deferred and hold_all. */
    bool (*pass)(struct devrt_server *server); /* false: the pass looks at no port */
    void (*step)(struct devrt_server *server, enum devrt_server_step step);
    bool (*keep_refused)(const struct devrt_server *server);
    void (*hand_back)(struct devrt_server *server);
    /* The hand-back is made: the replies and the inbox store are written. */
    void (*handed)(struct devrt_server *server);
    bool (*hold_end)(struct devrt_server *server);
    /* A packet is deferred for the bound; whether every packet is held, a kernel running. */
    void (*deferred)(struct devrt_server *server);
    bool (*hold_all)(const struct devrt_server *server);
    /* Without the server's lock: */
    uint32_t (*state_flags)(devrt_device *device);
    bool (*no_ready_ring)(devrt_device *device); /* NULL or false: modules get one */
    bool (*leak_module)(struct devrt_server *server);
    /* A launch of MODULE that raised is concluded: its ports are about to be taken back. */
    void (*before_reclaim)(devrt_module *module);
    void (*launch_event)(devrt_module *module, enum devrt_launch_event event);
    /* The flag that stops the device's running launch as its timeout would. */
    const bool *(*stop_flag)(struct devrt_server *server);
    /* The server is told to stop, its lock held; it has stopped, and the hooks go. */
    void (*stop)(struct devrt_server *server);
    void (*release)(struct devrt_server *server);
};

#endif
