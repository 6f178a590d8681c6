/*
 * devrt's heap and printf against CUDA's own (the driver's device malloc, free and
 * vprintf, which PTX may call as external functions), in one PTX image.
 */
#include <devrt/devrt.h>

void *malloc(size_t size);
void free(void *ptr);
int vprintf(const char *format, void *arguments);

/* samples[lane * rounds + i]: nanoseconds for one allocation and its free. */
DEVRT_KERNEL void malloc_free(uint64_t *samples, uint32_t *failures, uint32_t rounds, uint32_t size,
                              uint32_t cuda)
{
    uint64_t lane = devrt_global_id(DEVRT_X);
    for (uint32_t i = 0; i < rounds; ++i) {
        uint64_t start = devrt_clock();
        char *p = cuda ? malloc(size) : devrt_malloc(size);
        if (p) {
            *(volatile char *)p = (char)i;
            if (cuda)
                free(p);
            else
                devrt_free(p);
        } else {
            __atomic_fetch_add(failures, 1u, __ATOMIC_RELAXED);
        }
        samples[lane * rounds + i] = devrt_clock() - start;
    }
}

struct line_arguments {
    uint32_t lane;
    uint32_t line;
    double value;
};

/* Each lane prints `lines` lines of three arguments. */
DEVRT_KERNEL void print_lines(uint32_t lines, uint32_t cuda)
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
