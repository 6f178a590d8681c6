/*
 * A host image that references every device symbol, the way an ahead-of-time build of
 * device helpers does: one function per manifest entry takes the symbol's address, so the
 * image needs each symbol bound when it loads, and devrt-leaks can name the function that
 * references it (image_ref_<symbol>).
 */
#include <devrt/devrt.h>

typedef void (*image_function)(void);

#define DEVRT_FUNCTION(ret, name, params)                                                          \
    image_function image_ref_##name(void)                                                          \
    {                                                                                              \
        return (image_function)name;                                                               \
    }
#define DEVRT_NORETURN(name, params) DEVRT_FUNCTION(void, name, params)
#define DEVRT_VARIABLE(type, name)                                                                 \
    void *image_ref_##name(void)                                                                   \
    {                                                                                              \
        return &name;                                                                              \
    }
#include <devrt/symbols.def>
#undef DEVRT_FUNCTION
#undef DEVRT_NORETURN
#undef DEVRT_VARIABLE

/* A direct call, bound through the PLT, for the load test to make. */
void image_call(void)
{
    devrt_lane_id();
}

/* The host copy of the state global is data, and reads as a null pointer. */
int image_state_is_null(void)
{
    return __devrt_state == NULL;
}
