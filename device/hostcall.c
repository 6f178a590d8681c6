/* Host calls: services that an embedding runtime registers with the host by number. */
#include "rpc_client.h"

/* One request and its one-word reply; a refusal is the device's error to report. */
static uint64_t call(uint32_t opcode, uint32_t arg, const void *data, uint32_t size,
                     const char *refused)
{
    struct devrt_rpc_port port = devrt_rpc_open();
    uint64_t result = 0;
    uint32_t status = DEVRT_RPC_REFUSED;
    if (devrt_rpc_send(&port, opcode, DEVRT_RPC_WANT_WORD, arg, data, size))
        status = devrt_rpc_receive(&port, &result);
    devrt_rpc_close(&port);
    if (status != DEVRT_RPC_OK)
        devrt_signal_exception_at(DEVRT_EXCEPTION_DEVICE_ERROR, refused, __FILE__, __LINE__, arg);
    return result;
}

uint64_t devrt_hostcall_data(uint32_t service, const void *data, uint32_t size)
{
    return call(DEVRT_RPC_HOSTCALL, service, data, size, "host call refused");
}

uint64_t devrt_hostcall(uint32_t service, uint64_t arg0, uint64_t arg1, uint64_t arg2,
                        uint64_t arg3)
{
    uint64_t args[4] = {arg0, arg1, arg2, arg3};
    return devrt_hostcall_data(service, args, sizeof args);
}

/*
 * Sends a message of `size` bytes and returns the server's checksum of what arrived, so
 * tests and benchmarks can check a round trip of any length end to end.
 */
uint64_t devrt_rpc_echo(const void *data, uint32_t size)
{
    return call(DEVRT_RPC_ECHO, 0, data, size, "echo refused");
}
