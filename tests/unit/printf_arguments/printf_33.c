/* devrt_printf with 33 arguments after its format (tests/unit/CMakeLists.txt). */
#include <devrt/devrt.h>

DEVRT_KERNEL0(print_33)
{
    devrt_printf("%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d "
                 "%d %d %d %d %d %d\n",
                 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                 23, 24, 25, 26, 27, 28, 29, 30, 31, 32);
}
