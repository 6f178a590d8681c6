/*
 * The server's own cost per printf line, without a device: this program plays a GPU whose
 * warps are 32 lanes wide and sends the emulation device's server exactly the packets
 * devrt_printf("lane %u line %u value %f\n", lane, line, lane * 0.5) sends from a warp
 * (two packets per request). The emulation backend cannot send such requests itself: its
 * waves are one lane wide. The figure that matters is the server thread's CPU time per
 * line, read from its own clock, so the client's share of the two cores does not count.
 *
 *   printf_server_bench IMAGE [REQUESTS]
 *
 * IMAGE is any emulation image: the module only gives the server a channel to serve.
 */
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <devrt/output.h>
#include <devrt/rpc.h>

#include "harness.h"
#include "runtime.h"

#define LANES 32u
#define WORDS (2 * DEVRT_RPC_PACKET_BYTES / 8)

static const char format[] = "lane %u line %u value %f\n";
static size_t bytes;

/* The words of one lane's message, as the device's output stream lays them out. */
static void lane_message(uint64_t *words, uint32_t lane, uint32_t line)
{
    struct devrt_rpc_first_packet first = {DEVRT_RPC_OPEN_LENGTH, DEVRT_OUTPUT_CONTEXT_PRINTF};
    uint32_t length = sizeof format - 1;
    size_t n = 0;
    memset(words, 0, WORDS * 8);
    memcpy(&words[n++], &first, sizeof first);
    words[n++] = DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_FORMAT, 0, length);
    words[n++] = (uint64_t)(uintptr_t)format;
    memcpy(&words[n], format, length);
    n += (length + 7) / 8;
    double value = lane * 0.5;
    words[n++] = DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_U64, 0, 0);
    words[n++] = lane;
    words[n++] = DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_U64, 0, 0);
    words[n++] = line;
    words[n++] = DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_F64, 0, 0);
    memcpy(&words[n++], &value, sizeof value);
    words[n++] = DEVRT_OUTPUT_TAG_WORD(DEVRT_OUTPUT_END, 0, 0);
}

/* As the device rings: the futex only when the server says it sleeps. */
static void ring(devrt_device *device)
{
    __atomic_fetch_add(&device->doorbell->count, 1u, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&device->doorbell->sleeping, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &device->doorbell->count, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void post(devrt_device *device, struct devrt_rpc_channel *channel, uint32_t port,
                 uint32_t flags)
{
    channel->buffers[port].header = (struct devrt_rpc_header){
        .opcode = DEVRT_RPC_PRINTF, .flags = flags, .lane_mask = (1ull << LANES) - 1};
    uint32_t outbox = __atomic_load_n(&channel->outbox[port], __ATOMIC_RELAXED);
    __atomic_store_n(&channel->outbox[port], devrt_rpc_flip(DEVRT_RPC_CLIENT, outbox, DEVRT_RPC_OK),
                     __ATOMIC_RELEASE);
    ring(device);
}

static double thread_seconds(pthread_t thread)
{
    clockid_t clock;
    struct timespec t;
    if (pthread_getcpuclockid(thread, &clock) != 0 || clock_gettime(clock, &t) != 0)
        return 0;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Send REQUESTS warp requests over every port, two packets each, and wait for the server. */
static void run(devrt_device *device, devrt_module *module, const char *label, uint32_t requests)
{
    struct devrt_rpc_channel *channel = &module->host_channel;
    uint32_t ports = channel->port_count;
    /* Per port: 0 when free, else the request whose first packet the server has. */
    uint32_t *sent = calloc(ports, sizeof *sent);
    if (!sent) {
        fprintf(stderr, "no memory\n");
        exit(1);
    }
    bytes = 0;
    uint32_t started = 0, done = 0;
    double cpu = thread_seconds(device->server.thread);
    double start = harness_seconds();
    while (done < requests) {
        for (uint32_t port = 0; port < ports && done < requests; ++port) {
            uint32_t inbox = __atomic_load_n(&channel->inbox[port], __ATOMIC_ACQUIRE);
            if (!devrt_rpc_owns(DEVRT_RPC_CLIENT, inbox,
                                __atomic_load_n(&channel->outbox[port], __ATOMIC_RELAXED)))
                continue; /* the server has it */
            struct devrt_rpc_packet *packet = channel->buffers[port].packet;
            uint64_t words[WORDS];
            if (sent[port] == 0 && started < requests) {
                for (uint32_t lane = 0; lane < LANES; ++lane) {
                    lane_message(words, started * LANES + lane, 0);
                    memcpy(&packet[lane], words, DEVRT_RPC_PACKET_BYTES);
                }
                sent[port] = ++started;
                post(device, channel, port, DEVRT_RPC_MORE);
            } else if (sent[port] != 0) {
                for (uint32_t lane = 0; lane < LANES; ++lane) {
                    lane_message(words, (sent[port] - 1) * LANES + lane, 0);
                    memcpy(&packet[lane], &words[WORDS / 2], DEVRT_RPC_PACKET_BYTES);
                }
                sent[port] = 0;
                done++;
                post(device, channel, port, 0);
            }
        }
    }
    devrt_server_drain(device, module, true, DEVRT_DRAIN_ENDED);
    devrt_output_flush(module);
    double elapsed = harness_seconds() - start;
    cpu = thread_seconds(device->server.thread) - cpu;
    if (module->request_errors) { /* a figure for refused requests would mean nothing */
        fprintf(stderr, "the server refused a request: %s\n", module->request_error);
        exit(1);
    }
    double lines = (double)requests * LANES;
    printf("| %s, %u requests x %u lanes | %.3f us | %.0f lines/s | %.1f MB/s |\n", label, requests,
           LANES, cpu / lines * 1e6, lines / elapsed, bytes ? (double)bytes / elapsed / 1e6 : 0.0);
    free(sent);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: printf_server_bench IMAGE [REQUESTS]\n");
        return 2;
    }
    uint32_t requests = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 20000;
    devrt_device *device;
    devrt_module *module;
    if (devrt_device_open(DEVRT_BACKEND_EMU, 0, NULL, &device) != DEVRT_SUCCESS) {
        fprintf(stderr, "cannot open the emu device: %s\n", devrt_last_error());
        return 1;
    }
    device->wave_size = LANES; /* before the load: the channel states it to the device */
    if (devrt_module_load(device, argv[1], &module) != DEVRT_SUCCESS) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], devrt_last_error());
        return 1;
    }
    printf("| measure (32-lane requests, no device) | server CPU per line | lines per second "
           "| output |\n|---|---|---|---|\n");
    devrt_module_set_output_callback(module, harness_count_output, &bytes);
    run(device, module, "printf, to a callback", requests);
    FILE *sink = fopen("/dev/null", "w");
    devrt_module_set_output_file(module, sink);
    run(device, module, "printf, to a FILE (/dev/null)", requests);
    devrt_module_set_output_file(module, stdout);
    fclose(sink);
    devrt_module_unload(module);
    devrt_device_close(device);
    return 0;
}
