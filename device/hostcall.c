/* Host calls: services that an embedding runtime registers with the host by number. */
#include "rpc_client.h"

uint64_t devrt_hostcall_data(uint32_t service, const void *data, uint32_t size)
{
    struct devrt_rpc_port port = devrt_rpc_open();
    uint64_t result = 0;
    uint32_t status = DEVRT_RPC_REFUSED;
    if (devrt_rpc_send(&port, DEVRT_RPC_HOSTCALL, DEVRT_RPC_WANT_REPLY, service, data, size))
        status = devrt_rpc_receive(&port, &result);
    devrt_rpc_close(&port);
    if (status != DEVRT_RPC_OK)
        devrt_signal_exception_at(DEVRT_EXCEPTION_DEVICE_ERROR, "host call refused", __FILE__,
                                  __LINE__, service);
    return result;
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
    struct devrt_rpc_port port = devrt_rpc_open();
    uint64_t result = 0;
    uint32_t status = DEVRT_RPC_REFUSED;
    if (devrt_rpc_send(&port, DEVRT_RPC_ECHO, DEVRT_RPC_WANT_REPLY, 0, data, size))
        status = devrt_rpc_receive(&port, &result);
    devrt_rpc_close(&port);
    if (status != DEVRT_RPC_OK)
        devrt_signal_exception_at(DEVRT_EXCEPTION_DEVICE_ERROR, "echo refused", __FILE__,
                                  __LINE__, size);
    return result;
}
