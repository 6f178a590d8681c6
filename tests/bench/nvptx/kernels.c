/*
 * devrt's heap and printf against CUDA's own (the driver's device malloc, free and
 * vprintf, which PTX may call as external functions), in one PTX image. Each measure has
 * one kernel per side, built from the same inline body, so that the two run the same
 * loop and neither pays for the other's code.
 */
#include <devrt/devrt.h>

void *malloc(size_t size);
void free(void *ptr);
int vprintf(const char *format, void *arguments);

/* Allocations that returned NULL since the last take_nulls, in device memory. */
static uint32_t null_count;

/* 16 to 256 bytes in steps of 16, from a hash of the lane and the round. */
static inline size_t block_size(uint32_t lane, uint32_t round)
{
    uint32_t h = lane * 0x9e3779b1u ^ round * 0x85ebca77u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    return 16 * (1 + (size_t)(h >> 28));
}

/* Each lane allocates a block, writes a byte of it and frees it, ROUNDS times. */
__attribute__((always_inline)) static inline void malloc_free(uint32_t rounds, bool cuda)
{
    uint32_t lane = (uint32_t)devrt_global_id(DEVRT_X);
    uint32_t nulls = 0;
    for (uint32_t i = 0; i < rounds; ++i) {
        size_t size = block_size(lane, i);
        char *p = cuda ? malloc(size) : devrt_malloc(size);
        if (p) {
            *(volatile char *)p = (char)i;
            if (cuda)
                free(p);
            else
                devrt_free(p);
        } else {
            ++nulls;
        }
    }
    if (nulls)
        __atomic_fetch_add(&null_count, nulls, __ATOMIC_RELAXED);
}

DEVRT_KERNEL1(heap_devrt, uint32_t, rounds)
{
    malloc_free(rounds, false);
}

DEVRT_KERNEL1(heap_cuda, uint32_t, rounds)
{
    malloc_free(rounds, true);
}

/* One lane: *count = the NULLs counted since the last call, and the count starts again. */
DEVRT_KERNEL1(take_nulls, uint32_t *, count)
{
    *count = __atomic_exchange_n(&null_count, 0u, __ATOMIC_RELAXED);
}

struct line_arguments {
    uint32_t lane;
    uint32_t line;
    double value;
};

/* Each lane prints LINES lines of three arguments. */
__attribute__((always_inline)) static inline void print_lines(uint32_t lines, bool cuda)
{
    uint32_t lane = (uint32_t)devrt_global_id(DEVRT_X);
    for (uint32_t line = 0; line < lines; ++line) {
        if (cuda) {
            struct line_arguments arguments = {lane, line, lane * 0.5};
            vprintf("lane %u line %u value %f\n", &arguments);
        } else {
            devrt_printf("lane %u line %u value %f\n", lane, line, lane * 0.5);
        }
    }
}

DEVRT_KERNEL1(printf_devrt, uint32_t, lines)
{
    print_lines(lines, false);
}

DEVRT_KERNEL1(printf_cuda, uint32_t, lines)
{
    print_lines(lines, true);
}

/*
 * Bulk output: each lane writes LINES lines of BYTES bytes from its own slice of SLICES
 * (STRIDE bytes apart; the host filled them, a newline last and a NUL after it for
 * printf's %s), devrt's raw output against CUDA's printf.
 */
DEVRT_KERNEL4(bulk_devrt, const char *, slices, uint32_t, bytes, uint32_t, stride, uint32_t, lines)
{
    const char *line = slices + devrt_global_id(DEVRT_X) * stride;
    for (uint32_t i = 0; i < lines; ++i)
        devrt_output_write(devrt_output_context(), line, bytes);
}

DEVRT_KERNEL4(bulk_cuda, const char *, slices, uint32_t, bytes, uint32_t, stride, uint32_t, lines)
{
    const char *line = slices + devrt_global_id(DEVRT_X) * stride;
    (void)bytes;
    for (uint32_t i = 0; i < lines; ++i)
        vprintf("%s", &line);
}
