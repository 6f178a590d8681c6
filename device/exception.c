/*
 * Exceptions: record the first one of a launch and end the wave. The queue is never
 * trapped, so the process survives and the host reports what happened.
 */
#include "arch/arch.h"

static uint32_t flat_workitem(void)
{
    return devrt_arch_workitem_id(0) +
           devrt_arch_workgroup_size(0) *
               (devrt_arch_workitem_id(1) +
                devrt_arch_workgroup_size(1) * devrt_arch_workitem_id(2));
}

static uint64_t flat_workgroup(void)
{
    return devrt_arch_workgroup_id(0) +
           (uint64_t)devrt_arch_num_workgroups(0) *
               (devrt_arch_workgroup_id(1) +
                (uint64_t)devrt_arch_num_workgroups(1) * devrt_arch_workgroup_id(2));
}

static uint64_t raising_lane_u64(uint64_t value)
{
    return (uint64_t)devrt_arch_raising_lane_value((uint32_t)(value >> 32)) << 32 |
           devrt_arch_raising_lane_value((uint32_t)value);
}

static const char *raising_lane_string(const char *string)
{
    return (const char *)(uintptr_t)raising_lane_u64((uint64_t)(uintptr_t)string);
}

DEVRT_ARCH_INLINE void devrt_signal_exception_at(uint32_t code, const char *message,
                                                 const char *file, uint32_t line, uint64_t value)
{
    /*
     * On amdgcn the lanes that raise here together raise the first active one's exception
     * (devrt_arch_raising_lane_value): one lane's record is written whichever lane wins the
     * claim, so its values sit in SGPRs rather than in every lane's VGPRs, and the path
     * stays within its budget of VGPRs over the kernel's own (docs/performance.md). The
     * record's address is read as data no kernel changes, into SGPRs too: the host moves
     * it only between launches.
     */
    struct devrt_state *state = __devrt_state;
    struct devrt_exception_record *record = DEVRT_ARCH_READ_ONLY(state)->exception;
    if (code == DEVRT_EXCEPTION_NONE || code >= DEVRT_EXCEPTION_CODE_COUNT)
        code = DEVRT_EXCEPTION_UNKNOWN;
    code = devrt_arch_raising_lane_value(code);
    message = raising_lane_string(message);
    file = raising_lane_string(file);
    line = devrt_arch_raising_lane_value(line);
    value = raising_lane_u64(value);
    uint32_t workitem = devrt_arch_raising_lane_value(flat_workitem());

    /*
     * The claim holds the record address of the launch that raised last: a lane of this
     * launch wins by swapping this launch's record in (device memory, device scope: only
     * this launch's lanes race for it; the host orders launches).
     */
    uint64_t mine = (uint64_t)(uintptr_t)record;
    uint64_t expected =
        devrt_atomic_load(&state->exception_claim, __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE);
    if (expected != mine && devrt_atomic_cas(&state->exception_claim, &expected, mine,
                                             __ATOMIC_RELAXED, DEVRT_SCOPE_DEVICE)) {
        record->line = line;
        record->message = (uint64_t)(uintptr_t)message;
        record->file = (uint64_t)(uintptr_t)file;
        record->value = value;
        /* The detail's data and the word's are never in VGPRs at once. */
        devrt_arch_schedule_apart();
        record->word = DEVRT_EXCEPTION_WORD(code, workitem, flat_workgroup());
        /* Pairs with the host's acquire load of detail_ready (describe_exception). */
        devrt_atomic_store(&record->detail_ready, 1u, __ATOMIC_RELEASE, DEVRT_SCOPE_SYSTEM);
    }
    devrt_atomic_fence(__ATOMIC_RELEASE, DEVRT_SCOPE_SYSTEM);
    devrt_arch_end_wave();
}

DEVRT_ARCH_INLINE void devrt_signal_exception_code(uint32_t code, const char *message)
{
    devrt_signal_exception_at(code, message, NULL, 0, 0);
}

DEVRT_ARCH_INLINE void devrt_signal_exception(void)
{
    devrt_signal_exception_at(DEVRT_EXCEPTION_UNKNOWN, NULL, NULL, 0, 0);
}
