/* The structs struct_kernels.c takes by value, shared with the host test that passes them. */
#ifndef DEVRT_TEST_STRUCT_KERNELS_H
#define DEVRT_TEST_STRUCT_KERNELS_H

#include <stdint.h>

struct devrt_test_point {
    float x, y;
    int32_t n;
};

struct devrt_test_wide {
    double a;
    int64_t b;
    uint8_t c[24];
};

#endif
