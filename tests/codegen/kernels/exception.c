/*
 * The exception path against the same kernel without it: each kernel below is one of two
 * bodies with one raise form in it, and its body's *_none kernel is the same work without
 * the raise, so the difference between the two is what raising costs a kernel. The two
 * bodies keep different values alive across the raise: a 64-bit global id and a 32-bit
 * value (the lanes that do not raise store after it), and a 32-bit workitem id and a 64-bit
 * value read twice.
 *
 * CONTROL_OUT_OF_LINE, for the test's control only, raises through a call that is not
 * inlined: the calling convention's registers and stack, which the check must refuse.
 */
#include <devrt/devrt.h>

#ifdef CONTROL_OUT_OF_LINE
__attribute__((noinline)) static void raise_out_of_line(uint32_t code, const char *message,
                                                        uint64_t value)
{
    devrt_signal_exception_at(code, message, __FILE__, __LINE__, value);
}
#define RAISE_AT(code, message, value) raise_out_of_line((code), (message), (value))
#else
#define RAISE_AT(code, message, value)                                                             \
    devrt_signal_exception_at((code), (message), __FILE__, (uint32_t)__LINE__, (value))
#endif

/* The raise forms, by the name the check reports; a raise's argument is the lane's value. */
#define RAISE_none(v) ((void)0)
#define RAISE_signal(v) devrt_signal_exception()
#define RAISE_code(v) devrt_signal_exception_code(DEVRT_EXCEPTION_DOMAIN, "negative input")
#define RAISE_throw(v) DEVRT_THROW(DEVRT_EXCEPTION_DOMAIN, "negative input")
#define RAISE_at_value(v) RAISE_AT(DEVRT_EXCEPTION_BOUNDS, "out of range", (uint64_t)(v))

#ifdef CONTROL_OUT_OF_LINE
/* The call replaces every form, so that the control fails whichever form it reads first. */
#undef RAISE_signal
#undef RAISE_code
#undef RAISE_throw
#define RAISE_signal(v) RAISE_AT(DEVRT_EXCEPTION_UNKNOWN, NULL, 0)
#define RAISE_code(v) RAISE_AT(DEVRT_EXCEPTION_DOMAIN, "negative input", 0)
#define RAISE_throw(v) RAISE_AT(DEVRT_EXCEPTION_DOMAIN, "negative input", 0)
#endif

#define GLOBAL_KERNEL(form)                                                                        \
    DEVRT_KERNEL2(global_##form, const int32_t *, in, int32_t *, out)                              \
    {                                                                                              \
        uint64_t i = devrt_global_id(DEVRT_X);                                                     \
        int32_t value = in[i];                                                                     \
        if (value < 0)                                                                             \
            RAISE_##form(value);                                                                   \
        out[i] = value * 2;                                                                        \
    }

#define LOCAL_KERNEL(form)                                                                         \
    DEVRT_KERNEL2(local_##form, const uint64_t *, in, uint64_t *, out)                             \
    {                                                                                              \
        uint32_t i = devrt_workitem_id(DEVRT_X);                                                   \
        if (in[i] == 0)                                                                            \
            RAISE_##form(i);                                                                       \
        out[i] = in[i];                                                                            \
    }

#define BOTH(form) GLOBAL_KERNEL(form) LOCAL_KERNEL(form)

BOTH(none)
BOTH(signal)
BOTH(code)
BOTH(throw)
BOTH(at_value)
