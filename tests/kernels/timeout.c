/*
 * A kernel that runs until the host says (tests/emu/timeout_test.c): every lane prints a
 * line and counts it in *printed, then spins on *release, a bare loop with no call into
 * devrt, and counts itself
 * once released. The host sets the word while the kernel runs: an atomic load without a
 * scope is system-scoped, so a GPU reads it anew each time round.
 */
#include <devrt/devrt.h>

DEVRT_KERNEL3(spin, uint32_t *, release, uint32_t *, ran, uint32_t *, printed)
{
    devrt_printf("lane %u before the spin\n", (uint32_t)devrt_global_id(DEVRT_X));
    __atomic_fetch_add(printed, 1u, __ATOMIC_RELAXED);
    while (!__atomic_load_n(release, __ATOMIC_RELAXED))
        ;
    __atomic_fetch_add(ran, 1u, __ATOMIC_RELAXED);
}

/*
 * Spins until released, then prints a line and counts itself: output that comes only after
 * the host has seen the launch's timeout (timeout_test's free_context).
 */
DEVRT_KERNEL2(spin_then_print, uint32_t *, release, uint32_t *, ran)
{
    while (!__atomic_load_n(release, __ATOMIC_RELAXED))
        ;
    devrt_printf("lane %u after the spin\n", (uint32_t)devrt_global_id(DEVRT_X));
    __atomic_fetch_add(ran, 1u, __ATOMIC_RELAXED);
}

/*
 * Every workitem counts itself in *started; then workitem 0 raises, and the others spin until
 * released and count themselves in *ran: a launch that both raises and runs past its timeout.
 */
DEVRT_KERNEL3(raise_then_spin, uint32_t *, release, uint32_t *, ran, uint32_t *, started)
{
    __atomic_fetch_add(started, 1u, __ATOMIC_RELAXED);
    if (devrt_global_id(DEVRT_X) == 0)
        devrt_signal_exception_code(DEVRT_EXCEPTION_ARGUMENT, "raised before the spin");
    while (!__atomic_load_n(release, __ATOMIC_RELAXED))
        ;
    __atomic_fetch_add(ran, 1u, __ATOMIC_RELAXED);
}

/* Counts itself in *marked: a launch whose start the host can see. */
DEVRT_KERNEL1(mark, uint32_t *, marked)
{
    __atomic_fetch_add(marked, 1u, __ATOMIC_RELAXED);
}

/*
 * Begins a line longer than one packet, so that its port is taken and the first packet sent,
 * counts itself in *printed, then spins until released and ends the line: a kernel that a
 * fault catches holding a port with its output half sent.
 */
DEVRT_KERNEL2(spin_holding_port, uint32_t *, release, uint32_t *, printed)
{
    struct devrt_printf_state state = {0};
    struct devrt_printf_state *held = devrt_printf_begin(
        &state, devrt_printf_output_context(),
        "a line longer than one packet, whose first packet is sent before the spin and the "
        "rest after it: lane %u\n");
    held = devrt_printf_append_u64(held, devrt_global_id(DEVRT_X));
    __atomic_fetch_add(printed, 1u, __ATOMIC_RELAXED);
    while (!__atomic_load_n(release, __ATOMIC_RELAXED))
        ;
    devrt_printf_end(held);
}

/*
 * Counts itself in *started, then executes the target's trap instruction (s_trap on AMD
 * GPUs, trap on NVIDIA's): the runtime's own report of a kernel that aborts. Launched only on
 * GPUs: on the emulation the trap is the process's own.
 */
DEVRT_KERNEL1(trap, uint32_t *, started)
{
    __atomic_fetch_add(started, 1u, __ATOMIC_RELAXED);
    __builtin_trap();
}
