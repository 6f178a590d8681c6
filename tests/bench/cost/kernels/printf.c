#include <devrt/devrt.h>
#include "cost.h"

COST_KERNEL cost_printf(const double *xs, const char *s)
{
    int i = (int)COST_INDEX;
    devrt_printf("%d %f %s\n", i, xs[i], s);
}
