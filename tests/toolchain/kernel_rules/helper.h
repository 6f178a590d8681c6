#ifndef DEVRT_TEST_KERNEL_RULES_HELPER_H
#define DEVRT_TEST_KERNEL_RULES_HELPER_H

#include <stdint.h>

uint32_t twice_of(uint32_t x);

#endif
