/*
 * The bound on what the server holds for unfinished messages (docs/output.md, "Memory").
 * A message takes host memory as its packets arrive and gives it back when it ends, and
 * every port streams at once: without a bound the server would hold, at worst, the longest
 * message of every lane of every port (1024 ports x 64 lanes x 1 MiB). Over the budget the
 * server takes no packet that announces another (DEVRT_RPC_MORE), except from one favoured
 * message, and leaves the port with the device, which waits for it: backpressure. Nothing
 * is dropped, only taken later. A message's last packet is always taken: it ends the
 * message and frees its memory, and a lane's next message, which may go through another
 * port, must not pass it. Nor is anything held back from a kernel that has ended (a lane
 * stopped past a timeout, a raise): no packet will finish its messages, the drain forgets
 * them, and holding its ports would only make the drain wait a poll interval per port for
 * the favour to come round.
 */
#include "runtime.h"

void devrt_backpressure_account(struct devrt_server *server, size_t freed, size_t taken)
{
    server->buffered = server->buffered - freed + taken;
    if (server->buffered > server->buffered_peak)
        server->buffered_peak = server->buffered;
}

/* A packet left with the device for the bound, to be looked at again by a later pass. */
static void defer(struct devrt_server *server)
{
    server->deferred_packets++;
    server->deferred_since_pass = true;
    devrt_faults_deferred(server);
}

/* The pass's clock, read once a pass: a pass over the budget may defer a packet of every
   port. */
static uint64_t pass_clock(struct devrt_server *server)
{
    if (!server->pass_ns)
        server->pass_ns = devrt_now_ns();
    return server->pass_ns;
}

/* Whether the favoured message sent a packet within the last poll interval. */
static bool favour_fresh(struct devrt_server *server)
{
    return server->favoured &&
           pass_clock(server) - server->favoured_ns < DEVRT_SERVER_POLL_MS * 1000000ull;
}

bool devrt_backpressure_admits(struct devrt_server *server, struct devrt_port_state *port,
                               uint32_t flags, bool ended)
{
    if (!ended && devrt_faults_hold_all(server))
        return false;
    if (!(flags & DEVRT_RPC_MORE))
        return !devrt_faults_hold_end(server);
    port->deferred = false;
    bool favoured = server->favoured == port;
    if (!favoured && server->buffered < server->buffer_budget)
        return true;
    if (ended) {
        server->packets_after_end++;
        if (!server->drain_keeps_bound)
            return true;
    }
    /*
     * The favoured message always goes on, so that one message at a time ends and memory
     * comes back. Its wave may have ended in the middle of it (a lane raised); after a poll
     * interval without a packet from it, another message takes its place.
     */
    if (!favoured && !favour_fresh(server)) {
        server->stale_favourites += server->favoured != NULL;
        server->stale_after_end += server->favoured != NULL && ended;
        server->favoured = port;
        favoured = true;
    }
    if (favoured) {
        server->favoured_ns = pass_clock(server);
        return true;
    }
    port->deferred = true;
    defer(server);
    return false;
}

/*
 * A deferred port's packet stays as it was (the device keeps the port and waits for it to be
 * taken), and admits would defer it again while the budget is spent and another message is
 * favoured and fresh: a pass then leaves it without reading the port. In a flood most ports
 * are deferred, hundreds of them, and the favoured message sends about a packet a pass.
 */
bool devrt_backpressure_skips(struct devrt_server *server, const struct devrt_port_state *port,
                              bool ended)
{
    if (!port->deferred || ended || server->favoured == port ||
        server->buffered < server->buffer_budget || !favour_fresh(server))
        return false;
    server->deferred_unread++;
    defer(server);
    return true;
}

void devrt_backpressure_message_ended(struct devrt_server *server, struct devrt_port_state *port)
{
    /* A message forgotten before its packet was taken (a drain, an unload) leaves no
       deferred packet: the port's next packet is a new holder's. */
    port->deferred = false;
    if (server->favoured == port)
        server->favoured = NULL;
}
