#include "helper.h"

uint32_t twice_of(uint32_t x)
{
    return 2 * x;
}
