/* What the printf tests hand their kernels: shared by tests/kernels/printf.c and the hosts. */
#ifndef DEVRT_TEST_PRINTF_ENTRIES_H
#define DEVRT_TEST_PRINTF_ENTRIES_H

#include <stdint.h>

/* The C type a conversion's value is passed as. */
enum printf_kind { K_INT, K_UINT, K_LL, K_ULL, K_DOUBLE, K_LDOUBLE, K_STR, K_PTR, K_NONE };

struct printf_entry {
    const char *format;
    uint32_t kind;  /* enum printf_kind */
    uint32_t stars; /* `*` arguments before the value: 0, 1 or 2 */
    int32_t star[2];
    uint32_t variadic; /* through (devrt_printf) rather than the macro */
    uint32_t pad;
    union {
        int64_t i;
        uint64_t u;
        double d;
        const char *s;
        const void *p;
    } value;
};

#endif
