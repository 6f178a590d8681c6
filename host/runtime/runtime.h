/*
 * Internals of the host runtime shared by its parts (host/runtime/: the API, the server,
 * launches, the heap) and by the tools and tests that look inside. It includes backend.h,
 * the seam; the backends include backend.h alone, never this header, and reach struct
 * devrt_device and struct devrt_module, defined here, through backend.h's accessors.
 */
#ifndef DEVRT_RUNTIME_H
#define DEVRT_RUNTIME_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <devrt/abi.h>
#include <devrt/heap.h>
#include <devrt/host.h>
#include <devrt/rpc.h>

#include "backend.h"
#include "codeobject.h"
#include "fault_hooks.h"
#include "placement.h"
#include "text.h"

struct devrt_hostcall_entry {
    uint32_t service;
    devrt_hostcall_fn *fn;
    void *context;
};

struct devrt_server {
    pthread_t thread;
    pthread_mutex_t lock; /* guards modules, hostcalls, passes and stop */
    pthread_cond_t pass_done;
    uint64_t passes;
    bool stop;
    devrt_module *modules; /* every module of the device, linked by next */
    struct devrt_hostcall_entry *hostcalls;
    size_t hostcall_count;
    /* The server thread's own, kept between requests: */
    struct devrt_text output;   /* output units (output.c) */
    struct devrt_text window;   /* raw writes read from the device, one copy (output.c) */
    struct devrt_text scratch;  /* one raw write read from the device (output.c) */
    struct devrt_spare *spares; /* lane buffers for the next messages (message_assembly.c) */
    uint32_t spare_count;
    /* The bound on the buffers of unfinished messages (backpressure.c), under lock. */
    size_t buffer_budget; /* SIZE_MAX: no bound (a fault's control) */
    size_t buffered, buffered_peak;
    uint64_t deferred_packets, stale_favourites;
    uint64_t deferred_unread; /* of the deferrals, those that did not read the port */
    /* A packet was held back since the last pass: only a pass will take it (server.c). */
    bool deferred_since_pass;
    uint64_t packets_taken;     /* since the fault settings were last set (tests/faults) */
    uint64_t found_by_ring;     /* of those, found through a ready ring, not a pass */
    uint64_t packets_after_end; /* of an ended kernel, over the budget (tests/faults) */
    uint64_t stale_after_end;   /* stale favourites replaced while draining an ended kernel */
    bool drain_keeps_bound;     /* the control of that (tests/faults): the drain waits instead */
    const struct devrt_port_state *favoured; /* the message that goes on over the budget */
    uint64_t favoured_ns;                    /* when it last sent a packet */
    uint64_t pass_ns;                        /* the time of the current pass, 0 until read */
    /* A test's faults (fault_hooks.h): NULL but in a test; set once, under lock. */
    const struct devrt_fault_hooks *fault_hooks;
    uint64_t last_taken_ns; /* when a pass last took a packet: the quiet spell's start */
    /*
     * Kernels that may send requests (atomic): launches queued and not yet known to have
     * ended, kernels past their timeout, attached modules (whose launches devrt does not
     * see). At 0 the server blocks on `work` under idle_lock until it rises or `stopping`.
     */
    int64_t callers;
    bool stopping; /* atomic */
    pthread_mutex_t idle_lock;
    pthread_cond_t work;
    struct devrt_server_cpus placed; /* where the thread runs (placement.c) */
};

/*
 * The longest the idle server sleeps on its doorbell: a lost ring delays a request by at
 * most this much.
 */
#define DEVRT_SERVER_POLL_MS 100u
/* While it spins on the ready rings, the server passes over every port this often. */
#define DEVRT_SERVER_PASS_NS 1000000u
/* The default bound on the bytes of unfinished messages (docs/output.md, "Memory"). */
#define DEVRT_SERVER_BUFFER_BUDGET (16u << 20)

struct devrt_launches {
    pthread_mutex_t lock;   /* guards everything of launch.c: entries, streams, slots */
    pthread_cond_t changed; /* a launch ran (stream threads) */
    uint64_t next_id;
    struct devrt_launch_list launches; /* every launch whose report is untaken */
    devrt_stream *streams;
    devrt_stream *default_stream;
    uint32_t streams_made; /* numbers the streams for the trace */
};

struct devrt_device {
    enum devrt_backend kind; /* AUTO: attached (attach.c) */
    const struct devrt_backend_ops *ops;
    void *backend; /* the backend's own state */
    uint32_t wave_size;
    size_t rpc_ports;
    size_t heap_initial_bytes, heap_max_bytes;
    struct devrt_device_options options; /* as devrt_device_open was given them */
    struct devrt_rpc_doorbell *doorbell; /* host-visible, shared by the device's channels */
    struct devrt_server server;
    struct devrt_launches launches;
    /* Where opening the device spent its time (devrt_device_get_info). */
    uint64_t open_driver_ns, open_runtime_ns;
    /* Set once, by devrt_device_mark_lost: lost_why is written before lost is released. */
    bool lost, lost_claimed;
    char lost_why[512];
    int index;                 /* as opened: the trace's process id */
    struct devrt_trace *trace; /* NULL: off (trace.h) */
};

/* What the server keeps of a message while its packets arrive. */
struct devrt_lane_message {
    uint8_t *data;
    uint32_t length;
    uint32_t received;
    uint32_t arg;
    uint32_t capacity; /* bytes allocated at data */
    bool open;         /* DEVRT_RPC_OPEN_LENGTH: it ends with the request */
};

struct devrt_port_state {
    bool streaming;
    /* The bound left the port's packet with the device, which waits (backpressure.c). */
    bool deferred;
    /* While the port is on the ready ring's pending list (server.c), the outbox value the
       ring last announced for it; 0 off the list. */
    uint32_t announced;
    uint32_t opcode;
    uint64_t lane_mask;
    struct devrt_lane_message lane[DEVRT_RPC_MAX_LANES];
};

/* The host's side of a module's device heap (heap.c). */
struct devrt_module_heap {
    struct devrt_heap *device_heap; /* device memory, in the module's initial state */
    void **chunks; /* every allocation backing the heap, as the backend returned it */
    size_t chunk_count, chunk_capacity;
    char *reserve; /* device memory that new slabs are cut from, front first */
    size_t reserve_bytes, reserve_used;
    size_t reserved_bytes, max_bytes;
    struct devrt_heap_class classes[DEVRT_HEAP_CLASS_COUNT];
};

struct devrt_module {
    devrt_device *device;
    devrt_module *next;
    void *backend;
    char *path;
    FILE *report_file;
    /* Where output goes (output.c); the server writes under output_lock. */
    pthread_mutex_t output_lock;
    FILE *output_file;
    devrt_output_fn *output_fn;
    void *output_context;
    /*
     * The records of launches that returned past their timeout while their kernel ran on:
     * their requests' output is dropped and counted (output.c), so that no output of a
     * launch reaches the program after the launch has returned. Under output_lock.
     */
    const struct devrt_exception_record **muted;
    size_t muted_count, muted_capacity;
    bool muted_all; /* no memory to name one: every launch's output is dropped */
    uint64_t output_dropped;
    struct devrt_state **state_variable;   /* device address of __devrt_state */
    struct devrt_state *state;             /* device memory */
    struct devrt_rpc_channel *channel;     /* device memory, what the device reads */
    void *initial_state;                   /* device memory holding state and channel */
    void *rpc_memory;                      /* host-visible: buffers, then mailboxes */
    struct devrt_rpc_channel host_channel; /* the same pointers, for the server */
    struct devrt_port_state *ports;        /* the server's, one per port */
    size_t ports_bytes;                    /* the mapping of ports */
    /* The server's reading of the ready ring: its position, and the ports announced before
       their flip was seen (those with devrt_port_state.announced set). */
    uint32_t ring_head;
    uint32_t *pending;
    uint32_t pending_count;
    struct devrt_module_heap heap;
    /* The image as read from path, until the module is unloaded (backend.h: load). */
    void *image;
    size_t image_size;
    /* Launches (launch.c, under device->launches.lock). */
    struct devrt_exception_record *slot;        /* where the state points after the last launch */
    struct devrt_launch_entry *slot_owner;      /* the launch whose record that is, until taken */
    struct devrt_exception_record *raised_slot; /* may be in the claim word: never reused */
    uint64_t raised_order;
    struct devrt_exception_record **free_slots;
    size_t free_slot_count, free_slot_capacity;
    void **slot_chunks;
    size_t slot_chunk_count;
    /* Launches queued (atomic: the server's drain reads it without the lock) and run. */
    uint64_t launches_queued, launches_run;
    struct devrt_launch_entry *last; /* the latest launch, while its report is untaken */
    /* Kernels that ran on past a timeout, latest in the module's order first. */
    struct devrt_launch_entry *runaways;
    bool checking;   /* an attached module's check is under way (devrt_launches_check) */
    bool ports_owed; /* dead waves' ports a raised launch could not take back (conclude) */
    /* The first malformed request of the current launch, set by the server. */
    pthread_mutex_t error_lock;
    uint32_t request_errors;
    char request_error[256];
    /* Packets the server took (under the server's lock), and how many when last drained. */
    uint64_t packets_taken, packets_drained;
    /* Drains under way of kernels that have ended: the bound holds nothing back from them. */
    uint32_t ended_drains;
    uint64_t trace_served_ns;      /* devrt_server_served_ns, under the server's lock */
    struct devrt_module_info info; /* where its load spent its time */
    /* Attached to a module the program loaded (attach.c): the program launches its kernels. */
    bool attached, detaching;
};

/* A request as the server hands it to the handler of its opcode. */
struct devrt_request {
    devrt_module *module;
    uint32_t opcode;
    uint64_t lane_mask;
    uint64_t record; /* the sending launch's exception record (devrt_rpc_header.record) */
    struct devrt_lane_message *lane;
    struct devrt_rpc_packet *reply; /* one per lane, zeroed */
    char error[256];                /* a handler that refuses says why here */
    /* What an output handler wrote, for the trace: units (lines, writes) and their bytes. */
    uint32_t units;
    uint64_t bytes;
};

typedef int devrt_request_handler(struct devrt_request *request);

/* device.c: a device of OPS whose backend state is BACKEND (NULL: OPS->open makes it). */
int devrt_device_create(enum devrt_backend kind, const struct devrt_backend_ops *ops, void *backend,
                        int index, const struct devrt_device_options *options,
                        devrt_device **device);

/* server.c */
/* Starts the device's server thread, placed as placement.c chooses. */
int devrt_server_start(devrt_device *device);
/* The CPU time the server thread has used, by its own clock; 0 if it cannot be read. */
uint64_t devrt_server_cpu_ns(const devrt_device *device);
/* Whether a port of SERVER's modules holds a request it has not served; under its lock. */
bool devrt_server_has_request(const struct devrt_server *server);
/* DELTA more (or fewer) kernels may send DEVICE's server requests (devrt_server.callers). */
void devrt_server_expect(devrt_device *device, int64_t delta);
void devrt_server_stop(devrt_device *device);
void devrt_server_attach(devrt_device *device, devrt_module *module);
void devrt_server_detach(devrt_device *device, devrt_module *module);
/*
 * Wait until the server has taken every request the module's kernels sent. ENDED: no
 * launch of the module runs any more, so a message left half-received is an error; that
 * holds while the module's launches_queued is QUEUED (a launch queued since may run), or
 * throughout with DEVRT_DRAIN_ENDED (no launch of the module can start before the drain
 * ends).
 */
#define DEVRT_DRAIN_ENDED UINT64_MAX
void devrt_server_drain(devrt_device *device, devrt_module *module, bool ended, uint64_t queued);
/* When the server last finished a request of MODULE while the trace was on (trace.h). */
uint64_t devrt_server_served_ns(devrt_device *device, devrt_module *module);
/* After a drained launch that raised: unlock the ports that ended waves left locked. */
int devrt_server_reclaim_ports(devrt_device *device, devrt_module *module);

/* backpressure.c: the server's bound on the buffers of unfinished messages */
/* The buffers of unfinished messages lost FREED bytes and gained TAKEN. */
void devrt_backpressure_account(struct devrt_server *server, size_t freed, size_t taken);
/*
 * Whether the server takes a packet with FLAGS from PORT now, or leaves it for later.
 * ENDED: the port's kernel has ended (a drain), and will never send what would finish it.
 */
bool devrt_backpressure_admits(struct devrt_server *server, struct devrt_port_state *port,
                               uint32_t flags, bool ended);
/* Whether PORT's packet, which the bound left with the device, would be left again: the
   server need not read it. */
bool devrt_backpressure_skips(struct devrt_server *server, const struct devrt_port_state *port,
                              bool ended);
void devrt_backpressure_message_ended(struct devrt_server *server, struct devrt_port_state *port);

/*
 * The server's fault hooks (fault_hooks.h), each nothing but a test of the pointer where no
 * test installed them. Acquire: the server thread reads the pointer outside its lock, and
 * the hooks' state must be there when it sees it.
 */
static inline const struct devrt_fault_hooks *devrt_faults_of(const struct devrt_server *server)
{
    return __atomic_load_n(&server->fault_hooks, __ATOMIC_ACQUIRE);
}

/* The doorbell's wait, which loses a ring when a test says so. */
static inline void devrt_faults_wait_doorbell(devrt_device *device, uint64_t armed,
                                              uint32_t timeout_ms)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(&device->server);
    if (hooks)
        hooks->wait_doorbell(device, armed, timeout_ms);
    else
        device->ops->wait_doorbell(device, armed, timeout_ms);
}

/* Just before the server hands a port back: stalls, delays, the lost ring's recovery. */
static inline void devrt_faults_hand_back(struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    if (hooks)
        hooks->hand_back(server);
}

static inline void devrt_faults_handed(struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    if (hooks)
        hooks->handed(server);
}

/*
 * A pass began: the timeline's first step, as a look at the rings is (devrt_faults_step).
 * The pass looks at every port unless this says not to (the ready ring's test).
 */
static inline bool devrt_faults_pass(struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    return !hooks || hooks->pass(server);
}

/* A request reached STEP: the timeline's other steps. */
static inline void devrt_faults_step(struct devrt_server *server, enum devrt_server_step step)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    if (hooks)
        hooks->step(server, step);
}

/* A packet deferred for the bound, which a test's stop waits for (tests/faults). */
static inline void devrt_faults_deferred(struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    if (hooks)
        hooks->deferred(server);
}

/* Whether a test holds every packet of a running kernel (once its stop has come). */
static inline bool devrt_faults_hold_all(const struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    return hooks && hooks->hold_all(server);
}

/* The planted bug: a refused message stays. */
static inline bool devrt_faults_keep_refused(const struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    return hooks && hooks->keep_refused(server);
}

/* A test holds messages' last packets back, so that many messages are unfinished at once. */
static inline bool devrt_faults_hold_end(struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    return hooks && hooks->hold_end(server);
}

/* The state's flags for a module of DEVICE: what its backend and the fault settings allow. */
static inline uint32_t devrt_faults_state_flags(devrt_device *device)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(&device->server);
    if (hooks)
        return hooks->state_flags(device);
    return device->ops->read_serving ? DEVRT_STATE_OUTPUT_BY_ADDRESS : 0;
}

/* Whether a module loaded now gets a ready ring (the control of the ring leaves it out). */
static inline bool devrt_faults_ready_ring(devrt_device *device)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(&device->server);
    return !hooks || !hooks->no_ready_ring || !hooks->no_ready_ring(device);
}

/* The planted leak is set: devrt_module_unload keeps the module's struct. */
static inline bool devrt_faults_leak_module(struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    return hooks && hooks->leak_module(server);
}

/* A launch of MODULE that raised is concluded, its ports not yet taken back (launch.c). */
static inline void devrt_faults_before_reclaim(devrt_module *module)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(&module->device->server);
    if (hooks)
        hooks->before_reclaim(module);
}

/* The flag a test sets to stop the running launch (devrt_device_test_stop), or NULL. */
static inline const bool *devrt_faults_stop_flag(struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    return hooks ? hooks->stop_flag(server) : NULL;
}

/* EVENT happened to a launch of MODULE; the launches' lock may be held. */
static inline void devrt_faults_launch_event(devrt_module *module, enum devrt_launch_event event)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(&module->device->server);
    if (hooks)
        hooks->launch_event(module, event);
}

/* The server is told to stop, its lock held: a server a fault holds asleep must wake. */
static inline void devrt_faults_stop(struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    if (hooks)
        hooks->stop(server);
}

/* The server thread has ended: the hooks' state goes with it. */
static inline void devrt_faults_release(struct devrt_server *server)
{
    const struct devrt_fault_hooks *hooks = devrt_faults_of(server);
    if (hooks)
        hooks->release(server);
}

/* launch.c */
void devrt_launches_init(devrt_device *device);
void devrt_launches_fini(devrt_device *device);
/* The module's first record; the state points at it at load. NULL with the error set. */
struct devrt_exception_record *devrt_launches_attach(devrt_module *module);
/* Waits for the module's launches and keeps their reports; frees its records. */
/* Returns whether a kernel of MODULE still runs, past its timeout, which the backend cannot
   end: its code and memory must then be left to it. */
bool devrt_launches_detach(devrt_module *module);
/*
 * The report of what the module's kernels raised since the last check, once they have
 * ended (launched by someone else: attach.c); the next check starts with a clean record.
 */
int devrt_launches_check(devrt_module *module, const char *kernel,
                         const struct devrt_launch_config *config,
                         struct devrt_launch_report *report);

/* module.c */
/* ARGS against what KERNEL takes, as the backend's describe_kernel says (module.c). */
int devrt_check_launch_args(devrt_module *module, const char *kernel, const struct devrt_arg *args,
                            size_t arg_count);
int devrt_validate_launch(devrt_module *module, const char *kernel,
                          const struct devrt_launch_config *config, const struct devrt_arg *args,
                          size_t arg_count);
/*
 * RECORD's exception as a report. READ_STRINGS false: its message and file stay in device
 * memory, whose copy may wait behind a kernel that runs on (a backend's copy is GPU work).
 */
void devrt_describe_exception(devrt_module *module, const char *kernel,
                              const struct devrt_launch_config *config,
                              const struct devrt_exception_record *record, bool read_strings,
                              struct devrt_launch_report *report);

/* heap.c */
/*
 * A module's heap: plan sets its sizes and returns the bytes of the tables it keeps in
 * device memory (zeroed, placed by the caller); attach lays out the control block in HEAP,
 * to be written at DEVICE_HEAP, its tables at TABLES, and takes the first reserve.
 */
size_t devrt_heap_plan(devrt_module *module);
int devrt_heap_attach(devrt_module *module, struct devrt_heap *heap, struct devrt_heap *device_heap,
                      void *tables);
void devrt_heap_detach(devrt_module *module);
/* After lanes were stopped, none running: free every grow lock they may have held. */
int devrt_heap_reclaim_locks(devrt_module *module);
devrt_request_handler devrt_serve_heap_grow;

/* output.c: the handlers of DEVRT_RPC_OUTPUT and DEVRT_RPC_PRINTF */
int devrt_serve_output(struct devrt_request *request);
int devrt_serve_printf(struct devrt_request *request);
/* Flush the module's output file, if it has one. */
void devrt_output_flush(devrt_module *module);
/*
 * The launch of RECORD has returned while its kernel runs on: from now on its output is
 * dropped and counted. Once this returns, no unit of it is being written either.
 */
void devrt_output_mute(devrt_module *module, const struct devrt_exception_record *record);

/* clock.c (devrt_now_ns and devrt_deadline: backend.h) */
/* Sleeps NS nanoseconds, the whole of them through signals. */
void devrt_sleep_ns(uint64_t ns);

#endif
