/* One round trip through the library: every step of the RPC client, composed as shipped. */
#include <devrt/devrt.h>

DEVRT_KERNEL2(rpc_echo, uint64_t *, out, uint32_t, size)
{
    out[devrt_global_id(DEVRT_X)] = devrt_rpc_echo(out, size);
}
