/*
 * devrt_printf("%d %f %s\n", i, x, s) the way clang lowers printf onto ockl's hostcall
 * printf: the format and each string go by append_string_n with their length (0 for a
 * NULL string), the other arguments as 64-bit words by append_args, the last call marked.
 */
#include "cost.h"
#include "ockl.h"

static uint64_t length_with_nul(const char *s)
{
    if (!s)
        return 0;
    uint64_t n = 0;
    while (s[n])
        ++n;
    return n + 1;
}

COST_KERNEL cost_ockl_printf(const double *xs, const char *s)
{
    static const char format[] = "%d %f %s\n";
    int i = (int)COST_INDEX;
    double x = xs[i];
    uint64_t bits;
    __builtin_memcpy(&bits, &x, sizeof bits);
    uint64_t desc = __ockl_printf_begin(0);
    desc = __ockl_printf_append_string_n(desc, format, sizeof format, 0);
    desc = __ockl_printf_append_args(desc, 2, (uint64_t)(int64_t)i, bits, 0, 0, 0, 0, 0, 0);
    __ockl_printf_append_string_n(desc, s, length_with_nul(s), 1);
}
