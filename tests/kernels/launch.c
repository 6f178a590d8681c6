/*
 * Kernels for asynchronous launches (tests/emu/launch_test.c); built for every backend.
 * Each launch carries a tag: its lines name it, and its lanes count themselves in ran[tag].
 */
#include <devrt/devrt.h>

/* Lane 0 prints three lines, then raises if told to; every other lane counts itself. */
DEVRT_KERNEL3(tagged, uint32_t, tag, uint32_t, raise, uint32_t *, ran)
{
    uint64_t id = devrt_global_id(DEVRT_X);
    if (id == 0) {
        for (uint32_t line = 0; line < 3; ++line)
            devrt_printf("launch %u line %u\n", tag, line);
        if (raise)
            devrt_signal_exception_code(DEVRT_EXCEPTION_BOUNDS, "raised by a tagged launch");
    }
    __atomic_fetch_add(&ran[tag], 1u, __ATOMIC_RELAXED);
}

/* Nothing: what a launch costs by itself (tests/bench/launch). */
DEVRT_KERNEL0(empty) {}

/* Every lane takes BYTES from the heap and keeps them: the module's heap holds them. */
DEVRT_KERNEL2(hold, uint32_t, bytes, uint32_t *, failed)
{
    if (!devrt_malloc(bytes))
        __atomic_fetch_add(failed, 1u, __ATOMIC_RELAXED);
}
