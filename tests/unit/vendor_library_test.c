/*
 * The vendor libraries' loader (host/backends/vendor_library.h) against the library that
 * $DEVRT_TEST_VENDOR_LIBRARY names (vendor_fake_library.c): opened, it prints "vendor:
 * opened" with whether the optional function was found, and exits 0; refused, it prints
 * "vendor: " and the loader's message and exits 1.
 */
#include <stdio.h>

#include "vendor_library.h"

static struct {
    int (*a)(void), (*b)(void), (*c)(void), (*d)(void), (*e)(void);
} fns;

int main(void)
{
    const struct devrt_vendor_library library = {
        .what = "the test's vendor library",
        .variable = "DEVRT_TEST_VENDOR_LIBRARY",
        .files = (const char *const[]){"libdevrt-absent-vendor.so", NULL},
    };
    const struct devrt_vendor_symbol symbols[] = {
        {"vendor_a", &fns.a, false}, {"vendor_b", &fns.b, false}, {"vendor_c", &fns.c, false},
        {"vendor_d", &fns.d, false}, {"vendor_e", &fns.e, true},
    };
    char error[768];
    void *handle = devrt_vendor_library_open(&library, symbols, sizeof symbols / sizeof *symbols,
                                             error, sizeof error);
    if (!handle) {
        if (fns.a || fns.c)
            printf("vendor: the functions found are left set after the refusal\n");
        printf("vendor: %s\n", error);
        return 1;
    }
    int sum = fns.a() + fns.b() + fns.c() + fns.d();
    printf("vendor: opened (sum %d), optional vendor_e %s\n", sum, fns.e ? "found" : "absent");
    return 0;
}
