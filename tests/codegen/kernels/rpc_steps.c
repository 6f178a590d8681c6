/*
 * The RPC client's steps, one kernel each, built from the device's own inline steps
 * (device/rpc_client.h, device/arch/) so that the memory-model test can read each step's
 * instructions apart from the others'.
 */
#include "rpc_client.h"

/* The hand-over names the launch's record from the kernel state, which the library's
   state.c defines; these kernels are built without the library. */
__attribute__((visibility("protected"))) struct devrt_state *__devrt_state;

/* The send (this lane's packet, then the header) and the outbox flip. */
DEVRT_KERNEL3(step_hand_over, struct devrt_rpc_channel *, channel, uint32_t, index, uint32_t,
              outbox)
{
    struct devrt_rpc_buffer *buffer = &DEVRT_ARCH_READ_ONLY(channel)->buffers[index];
    buffer->packet[devrt_arch_lane_id()].word[0] = devrt_arch_lane_id();
    devrt_rpc_hand_over_in(channel, buffer, index, outbox, devrt_arch_active_mask(), DEVRT_RPC_ECHO,
                           DEVRT_RPC_WANT_REPLY);
}

/* The doorbell. */
DEVRT_KERNEL1(step_doorbell, struct devrt_rpc_doorbell *, doorbell)
{
    devrt_arch_ring_doorbell(doorbell);
}

/*
 * The poll for the inbox's hand-back, the acquire after it, and reading a reply packet (a
 * streamed message's next packet, the heap's reply).
 */
DEVRT_KERNEL4(step_hand_back, struct devrt_rpc_channel *, channel, uint32_t, index, uint32_t,
              outbox, uint64_t *, out)
{
    devrt_rpc_wait(channel, index, outbox);
    out[devrt_arch_lane_id()] =
        DEVRT_ARCH_READ_ONLY(channel)->buffers[index].packet[devrt_arch_lane_id()].word[0];
}

/* The poll of a lane's reply slot, which reads the word, and the acquire after it. */
DEVRT_KERNEL4(step_reply, struct devrt_rpc_channel *, channel, uint32_t, index, uint32_t, count,
              uint64_t *, out)
{
    uint64_t word;
    uint32_t status =
        devrt_rpc_wait_word(&DEVRT_ARCH_READ_ONLY(channel)->buffers[index], count, &word);
    out[devrt_arch_lane_id()] = word + status;
}

/* A whole post: the flip, then the doorbell, whose order the test checks. */
DEVRT_KERNEL3(step_post, struct devrt_rpc_channel *, channel, uint32_t, index, uint32_t, outbox)
{
    struct devrt_rpc_buffer *buffer = &DEVRT_ARCH_READ_ONLY(channel)->buffers[index];
    buffer->packet[devrt_arch_lane_id()].word[0] = devrt_arch_lane_id();
    devrt_rpc_post_in(channel, buffer, index, outbox, devrt_arch_active_mask(), DEVRT_RPC_ECHO,
                      DEVRT_RPC_WANT_REPLY);
}
