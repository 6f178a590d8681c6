/*
 * The kernels of bench-launch: one that does nothing, one that calls the heap once, and on
 * NVIDIA GPUs the same with CUDA's own malloc (which PTX may call as an external function).
 */
#include <devrt/devrt.h>

DEVRT_KERNEL0(empty) {}

DEVRT_KERNEL0(heap_once)
{
    char *p = devrt_malloc(16);
    if (p) {
        *(volatile char *)p = 1;
        devrt_free(p);
    }
}

#ifdef __NVPTX__
void *malloc(size_t size);
void free(void *ptr);

DEVRT_KERNEL0(heap_once_cuda)
{
    char *p = malloc(16);
    if (p) {
        *(volatile char *)p = 1;
        free(p);
    }
}
#endif
