/*
 * devrt device API. Include it from kernel code compiled for amdgcn-amd-amdhsa or
 * nvptx64-nvidia-cuda, from the host-emulation build (DEVRT_EMU defined), or from plain
 * host code, where the same functions are declared and libdevrt_host.a defines them as
 * trapping stubs.
 */
#ifndef DEVRT_DEVRT_H
#define DEVRT_DEVRT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi.h"
#include "output.h"

#if defined(__AMDGCN__)
#define DEVRT_TARGET_AMDGCN 1
#elif defined(__NVPTX__)
#define DEVRT_TARGET_NVPTX 1
#elif defined(DEVRT_EMU)
#define DEVRT_TARGET_EMU 1
#else
#define DEVRT_TARGET_HOST 1
#endif

#if defined(DEVRT_TARGET_EMU)
#include "emu.h"
/*
 * Every translation unit of an emulation image that includes this header refers to
 * __devrt_emu_enter, so that the image links what loading it needs (the lane binding and
 * __devrt_state) even when its kernels call nothing of devrt.
 */
__attribute__((used)) static devrt_emu_enter_fn *const __devrt_emu_enter_link = __devrt_emu_enter;
#endif

/*
 * Calls into the runtime may communicate between lanes, so on a GPU every one is
 * convergent: the optimizer must not move a call into or out of divergent control flow.
 */
#if defined(DEVRT_TARGET_AMDGCN) || defined(DEVRT_TARGET_NVPTX)
#define DEVRT_DEVICE_FUNCTION __attribute__((convergent))
#else
#define DEVRT_DEVICE_FUNCTION
#endif

/*
 * GPU compilers default to hidden visibility, and a hidden declaration in a kernel would
 * hide the library's exported state global when the two are linked.
 */
#if defined(DEVRT_TARGET_AMDGCN) || defined(DEVRT_TARGET_NVPTX)
#define DEVRT_DEVICE_VARIABLE __attribute__((visibility("protected")))
#else
#define DEVRT_DEVICE_VARIABLE
#endif

/* Kernels are found by their names: C++ must not mangle them. */
#ifdef __cplusplus
#define DEVRT_EXTERN_C extern "C"
#else
#define DEVRT_EXTERN_C
#endif

#if defined(DEVRT_TARGET_AMDGCN)
#define DEVRT_KERNEL DEVRT_EXTERN_C __attribute__((amdgpu_kernel, visibility("protected")))
#elif defined(DEVRT_TARGET_NVPTX)
#define DEVRT_KERNEL DEVRT_EXTERN_C __attribute__((nvptx_kernel, visibility("default")))
#elif defined(DEVRT_TARGET_EMU)
#define DEVRT_KERNEL DEVRT_EXTERN_C __attribute__((visibility("default")))
#else
#define DEVRT_KERNEL DEVRT_EXTERN_C
#endif

/*
 * DEVRT_KERNELn(name, type1, param1, ..., typen, paramn) begins the definition of a kernel
 * of n parameters, n up to 8. The emulation build also exports the parameters' sizes
 * (struct devrt_emu_signature) and their kinds and names (struct devrt_emu_parameters), so
 * the runtime refuses arguments that do not fit the kernel before it calls it, and a
 * function that calls the kernel with its arguments' bytes (devrt_emu_call_fn), so that the
 * compiler passes each as the host ABI wants, structs by value included; GPU code objects
 * record their parameters themselves. DEVRT_KERNEL alone is the attribute, for kernels
 * written as plain functions, whose arguments the emulation backend cannot check and passes
 * through libffi, scalars and pointers only. A parameter of array type (a typedef of one)
 * is not supported: C makes it a pointer, while the emulation would record and pass the
 * array's size.
 */
#if defined(DEVRT_TARGET_EMU)
#ifdef __cplusplus
#define DEVRT_EMU_DECLARE extern "C"
#define DEVRT_EMU_VALUE(t, i) (*static_cast<__typeof__(t) *>(__devrt_emu_values[i]))
#else
#define DEVRT_EMU_DECLARE extern
#define DEVRT_EMU_VALUE(t, i) (*(__typeof__(t) *)__devrt_emu_values[i])
#endif
#define DEVRT_EMU_LIST(...) __VA_ARGS__
/* SIZES, KINDS and NAMES: each parameter's, as a parenthesized list. */
#define DEVRT_KERNEL_SIGNATURE(name, types, call, count, sizes, kinds, names)                      \
    DEVRT_KERNEL void name types;                                                                  \
    DEVRT_EMU_DECLARE const struct devrt_emu_signature __devrt_signature_##name;                   \
    DEVRT_EXTERN_C __attribute__((visibility("default")))                                          \
    const struct devrt_emu_signature __devrt_signature_##name = {count, {DEVRT_EMU_LIST sizes}};   \
    DEVRT_EMU_DECLARE const struct devrt_emu_parameters __devrt_parameters_##name;                 \
    DEVRT_EXTERN_C __attribute__((visibility("default")))                                          \
    const struct devrt_emu_parameters __devrt_parameters_##name = {                                \
        count, {DEVRT_EMU_LIST kinds}, {DEVRT_EMU_LIST names}};                                    \
    DEVRT_EXTERN_C __attribute__((visibility("default"))) devrt_emu_call_fn __devrt_call_##name;   \
    DEVRT_EXTERN_C void __devrt_call_##name(void *const *__devrt_emu_values)                       \
    {                                                                                              \
        (void)__devrt_emu_values;                                                                  \
        name call;                                                                                 \
    }
#else
#define DEVRT_KERNEL_SIGNATURE(name, types, call, count, sizes, kinds, names)
#endif

#define DEVRT_KERNEL0(name)                                                                        \
    DEVRT_KERNEL_SIGNATURE(name, (void), (), 0, (0), (0), (""))                                    \
    DEVRT_KERNEL void name(void)
#define DEVRT_KERNEL1(name, t1, p1)                                                                \
    DEVRT_KERNEL_SIGNATURE(name, (t1), (DEVRT_EMU_VALUE(t1, 0)), 1, (sizeof(t1)),                  \
                           (DEVRT_EMU_KIND(t1)), (#p1))                                            \
    DEVRT_KERNEL void name(t1 p1)
#define DEVRT_KERNEL2(name, t1, p1, t2, p2)                                                        \
    DEVRT_KERNEL_SIGNATURE(name, (t1, t2), (DEVRT_EMU_VALUE(t1, 0), DEVRT_EMU_VALUE(t2, 1)), 2,    \
                           (sizeof(t1), sizeof(t2)), (DEVRT_EMU_KIND(t1), DEVRT_EMU_KIND(t2)),     \
                           (#p1, #p2))                                                             \
    DEVRT_KERNEL void name(t1 p1, t2 p2)
#define DEVRT_KERNEL3(name, t1, p1, t2, p2, t3, p3)                                                \
    DEVRT_KERNEL_SIGNATURE(                                                                        \
        name, (t1, t2, t3),                                                                        \
        (DEVRT_EMU_VALUE(t1, 0), DEVRT_EMU_VALUE(t2, 1), DEVRT_EMU_VALUE(t3, 2)), 3,               \
        (sizeof(t1), sizeof(t2), sizeof(t3)),                                                      \
        (DEVRT_EMU_KIND(t1), DEVRT_EMU_KIND(t2), DEVRT_EMU_KIND(t3)), (#p1, #p2, #p3))             \
    DEVRT_KERNEL void name(t1 p1, t2 p2, t3 p3)
#define DEVRT_KERNEL4(name, t1, p1, t2, p2, t3, p3, t4, p4)                                        \
    DEVRT_KERNEL_SIGNATURE(                                                                        \
        name, (t1, t2, t3, t4),                                                                    \
        (DEVRT_EMU_VALUE(t1, 0), DEVRT_EMU_VALUE(t2, 1), DEVRT_EMU_VALUE(t3, 2),                   \
         DEVRT_EMU_VALUE(t4, 3)),                                                                  \
        4, (sizeof(t1), sizeof(t2), sizeof(t3), sizeof(t4)),                                       \
        (DEVRT_EMU_KIND(t1), DEVRT_EMU_KIND(t2), DEVRT_EMU_KIND(t3), DEVRT_EMU_KIND(t4)),          \
        (#p1, #p2, #p3, #p4))                                                                      \
    DEVRT_KERNEL void name(t1 p1, t2 p2, t3 p3, t4 p4)
#define DEVRT_KERNEL5(name, t1, p1, t2, p2, t3, p3, t4, p4, t5, p5)                                \
    DEVRT_KERNEL_SIGNATURE(name, (t1, t2, t3, t4, t5),                                             \
                           (DEVRT_EMU_VALUE(t1, 0), DEVRT_EMU_VALUE(t2, 1),                        \
                            DEVRT_EMU_VALUE(t3, 2), DEVRT_EMU_VALUE(t4, 3),                        \
                            DEVRT_EMU_VALUE(t5, 4)),                                               \
                           5, (sizeof(t1), sizeof(t2), sizeof(t3), sizeof(t4), sizeof(t5)),        \
                           (DEVRT_EMU_KIND(t1), DEVRT_EMU_KIND(t2), DEVRT_EMU_KIND(t3),            \
                            DEVRT_EMU_KIND(t4), DEVRT_EMU_KIND(t5)),                               \
                           (#p1, #p2, #p3, #p4, #p5))                                              \
    DEVRT_KERNEL void name(t1 p1, t2 p2, t3 p3, t4 p4, t5 p5)
#define DEVRT_KERNEL6(name, t1, p1, t2, p2, t3, p3, t4, p4, t5, p5, t6, p6)                        \
    DEVRT_KERNEL_SIGNATURE(                                                                        \
        name, (t1, t2, t3, t4, t5, t6),                                                            \
        (DEVRT_EMU_VALUE(t1, 0), DEVRT_EMU_VALUE(t2, 1), DEVRT_EMU_VALUE(t3, 2),                   \
         DEVRT_EMU_VALUE(t4, 3), DEVRT_EMU_VALUE(t5, 4), DEVRT_EMU_VALUE(t6, 5)),                  \
        6, (sizeof(t1), sizeof(t2), sizeof(t3), sizeof(t4), sizeof(t5), sizeof(t6)),               \
        (DEVRT_EMU_KIND(t1), DEVRT_EMU_KIND(t2), DEVRT_EMU_KIND(t3), DEVRT_EMU_KIND(t4),           \
         DEVRT_EMU_KIND(t5), DEVRT_EMU_KIND(t6)),                                                  \
        (#p1, #p2, #p3, #p4, #p5, #p6))                                                            \
    DEVRT_KERNEL void name(t1 p1, t2 p2, t3 p3, t4 p4, t5 p5, t6 p6)
#define DEVRT_KERNEL7(name, t1, p1, t2, p2, t3, p3, t4, p4, t5, p5, t6, p6, t7, p7)                \
    DEVRT_KERNEL_SIGNATURE(                                                                        \
        name, (t1, t2, t3, t4, t5, t6, t7),                                                        \
        (DEVRT_EMU_VALUE(t1, 0), DEVRT_EMU_VALUE(t2, 1), DEVRT_EMU_VALUE(t3, 2),                   \
         DEVRT_EMU_VALUE(t4, 3), DEVRT_EMU_VALUE(t5, 4), DEVRT_EMU_VALUE(t6, 5),                   \
         DEVRT_EMU_VALUE(t7, 6)),                                                                  \
        7, (sizeof(t1), sizeof(t2), sizeof(t3), sizeof(t4), sizeof(t5), sizeof(t6), sizeof(t7)),   \
        (DEVRT_EMU_KIND(t1), DEVRT_EMU_KIND(t2), DEVRT_EMU_KIND(t3), DEVRT_EMU_KIND(t4),           \
         DEVRT_EMU_KIND(t5), DEVRT_EMU_KIND(t6), DEVRT_EMU_KIND(t7)),                              \
        (#p1, #p2, #p3, #p4, #p5, #p6, #p7))                                                       \
    DEVRT_KERNEL void name(t1 p1, t2 p2, t3 p3, t4 p4, t5 p5, t6 p6, t7 p7)
#define DEVRT_KERNEL8(name, t1, p1, t2, p2, t3, p3, t4, p4, t5, p5, t6, p6, t7, p7, t8, p8)        \
    DEVRT_KERNEL_SIGNATURE(                                                                        \
        name, (t1, t2, t3, t4, t5, t6, t7, t8),                                                    \
        (DEVRT_EMU_VALUE(t1, 0), DEVRT_EMU_VALUE(t2, 1), DEVRT_EMU_VALUE(t3, 2),                   \
         DEVRT_EMU_VALUE(t4, 3), DEVRT_EMU_VALUE(t5, 4), DEVRT_EMU_VALUE(t6, 5),                   \
         DEVRT_EMU_VALUE(t7, 6), DEVRT_EMU_VALUE(t8, 7)),                                          \
        8,                                                                                         \
        (sizeof(t1), sizeof(t2), sizeof(t3), sizeof(t4), sizeof(t5), sizeof(t6), sizeof(t7),       \
         sizeof(t8)),                                                                              \
        (DEVRT_EMU_KIND(t1), DEVRT_EMU_KIND(t2), DEVRT_EMU_KIND(t3), DEVRT_EMU_KIND(t4),           \
         DEVRT_EMU_KIND(t5), DEVRT_EMU_KIND(t6), DEVRT_EMU_KIND(t7), DEVRT_EMU_KIND(t8)),          \
        (#p1, #p2, #p3, #p4, #p5, #p6, #p7, #p8))                                                  \
    DEVRT_KERNEL void name(t1 p1, t2 p2, t3 p3, t4 p4, t5 p5, t6 p6, t7 p7, t8 p8)

/* Dimensions for the grid functions. */
#define DEVRT_X 0u
#define DEVRT_Y 1u
#define DEVRT_Z 2u

/*
 * One devrt_printf call while it streams to the host. The devrt_printf macro makes one per
 * call and every function it calls is inlined, so on a GPU it lives in registers. The
 * fields are the runtime's own.
 */
struct devrt_printf_state {
    struct devrt_rpc_channel *channel;
    struct devrt_rpc_buffer *buffer;
    uint32_t port;
    uint32_t outbox; /* the port's mailbox word after our last flip */
    uint32_t slot;   /* the next word of each lane's packet, the same in every lane */
    uint32_t status; /* 0, or the server refused and the rest of the call is dropped */
    uint32_t opcode;
    uint32_t reserved;
    uint64_t lanes; /* the lanes that called, taken once: their steps name each other */
};

#ifdef __cplusplus
extern "C" {
#endif

#define DEVRT_FUNCTION(ret, name, params) DEVRT_DEVICE_FUNCTION ret name params;
#define DEVRT_NORETURN(name, params)                                                               \
    DEVRT_DEVICE_FUNCTION __attribute__((noreturn)) void name params;
#define DEVRT_VARIABLE(type, name) extern DEVRT_DEVICE_VARIABLE type name;
#include "symbols.def"
#undef DEVRT_FUNCTION
#undef DEVRT_NORETURN
#undef DEVRT_VARIABLE

#ifdef __cplusplus
}
#endif

/*
 * devrt_printf(format, ...) on a device target is this macro: no C variadic call (which
 * puts its arguments in scratch memory on amdgcn), but one typed append per argument, so
 * the arguments stay in registers and the host learns each one's type and checks it
 * against the format. `(devrt_printf)(format, ...)` calls the variadic function instead.
 * Host code (the stubs) sees the plain declarations only.
 */
#if !defined(DEVRT_TARGET_HOST) && !defined(DEVRT_NO_PRINTF_MACRO)
#ifdef __cplusplus
/*
 * C++ has neither _Generic nor compound literals: overloads pick the append, and the
 * state is a temporary, which lives to the end of the full expression, the whole call.
 * Convergent and always inlined, as the appends they call: no pass may move them across
 * divergent control flow. Any other pointer (to functions, to volatile data) is a pointer,
 * as in C; nullptr is a null pointer. Scoped enums have no append: cast them.
 */
#define DEVRT_PRINTF_WRAPPER DEVRT_DEVICE_FUNCTION __attribute__((always_inline)) static inline
#define DEVRT_PRINTF_APPEND_AS(ctype, append)                                                      \
    DEVRT_PRINTF_WRAPPER struct devrt_printf_state *devrt_printf_append_any(                       \
        struct devrt_printf_state *state, ctype x)                                                 \
    {                                                                                              \
        return append(state, x);                                                                   \
    }
DEVRT_PRINTF_APPEND_AS(bool, devrt_printf_append_u64)
DEVRT_PRINTF_APPEND_AS(char, devrt_printf_append_i64)
DEVRT_PRINTF_APPEND_AS(signed char, devrt_printf_append_i64)
DEVRT_PRINTF_APPEND_AS(short, devrt_printf_append_i64)
DEVRT_PRINTF_APPEND_AS(int, devrt_printf_append_i64)
DEVRT_PRINTF_APPEND_AS(long, devrt_printf_append_i64)
DEVRT_PRINTF_APPEND_AS(long long, devrt_printf_append_i64)
DEVRT_PRINTF_APPEND_AS(unsigned char, devrt_printf_append_u64)
DEVRT_PRINTF_APPEND_AS(unsigned short, devrt_printf_append_u64)
DEVRT_PRINTF_APPEND_AS(unsigned int, devrt_printf_append_u64)
DEVRT_PRINTF_APPEND_AS(unsigned long, devrt_printf_append_u64)
DEVRT_PRINTF_APPEND_AS(unsigned long long, devrt_printf_append_u64)
DEVRT_PRINTF_APPEND_AS(float, devrt_printf_append_f64)
DEVRT_PRINTF_APPEND_AS(double, devrt_printf_append_f64)
DEVRT_PRINTF_APPEND_AS(long double, devrt_printf_append_f64)
DEVRT_PRINTF_APPEND_AS(char *, devrt_printf_append_str)
DEVRT_PRINTF_APPEND_AS(const char *, devrt_printf_append_str)
DEVRT_PRINTF_APPEND_AS(decltype(nullptr), devrt_printf_append_ptr)
#undef DEVRT_PRINTF_APPEND_AS
template <class T>
DEVRT_PRINTF_WRAPPER struct devrt_printf_state *
devrt_printf_append_any(struct devrt_printf_state *state, T *x)
{
    return devrt_printf_append_ptr(
        state, const_cast<const void *>(reinterpret_cast<const volatile void *>(x)));
}
DEVRT_PRINTF_WRAPPER struct devrt_printf_state *
devrt_printf_state_here(struct devrt_printf_state &&state)
{
    return &state;
}
#undef DEVRT_PRINTF_WRAPPER
#define DEVRT_PRINTF_APPEND(state, x) devrt_printf_append_any((state), (x))
#define DEVRT_PRINTF_BEGIN(c, f)                                                                   \
    devrt_printf_begin(devrt_printf_state_here(devrt_printf_state{}), (c), (f))
#else
#define DEVRT_PRINTF_APPEND(state, x)                                                              \
    _Generic((x),                                                                                  \
        _Bool: devrt_printf_append_u64,                                                            \
        char: devrt_printf_append_i64,                                                             \
        signed char: devrt_printf_append_i64,                                                      \
        short: devrt_printf_append_i64,                                                            \
        int: devrt_printf_append_i64,                                                              \
        long: devrt_printf_append_i64,                                                             \
        long long: devrt_printf_append_i64,                                                        \
        unsigned char: devrt_printf_append_u64,                                                    \
        unsigned short: devrt_printf_append_u64,                                                   \
        unsigned int: devrt_printf_append_u64,                                                     \
        unsigned long: devrt_printf_append_u64,                                                    \
        unsigned long long: devrt_printf_append_u64,                                               \
        float: devrt_printf_append_f64,                                                            \
        double: devrt_printf_append_f64,                                                           \
        long double: devrt_printf_append_f64,                                                      \
        char *: devrt_printf_append_str,                                                           \
        const char *: devrt_printf_append_str,                                                     \
        default: devrt_printf_append_ptr)((state), (x))
#endif

/*
 * The number of arguments after the format, up to 32; from 33 to 64 TOO_MANY, which names
 * DEVRT_PRINTF_TOO_MANY, a compile error that says so.
 */
#define DEVRT_PRINTF_PICK(_f, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15,    \
                          _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29,    \
                          _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43,    \
                          _44, _45, _46, _47, _48, _49, _50, _51, _52, _53, _54, _55, _56, _57,    \
                          _58, _59, _60, _61, _62, _63, _64, n, ...)                               \
    n
#define DEVRT_PRINTF_COUNT(...)                                                                    \
    DEVRT_PRINTF_PICK(__VA_ARGS__, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY,     \
                      TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY,        \
                      TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY,        \
                      TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY,        \
                      TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, 32, 31, 30, 29, 28, 27,    \
                      26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, \
                      6, 5, 4, 3, 2, 1, 0, _)
#define DEVRT_PRINTF_CAT_(a, b) a##b
#define DEVRT_PRINTF_CAT(a, b) DEVRT_PRINTF_CAT_(a, b)
#define DEVRT_PRINTF_APPLY_1(s, a) DEVRT_PRINTF_APPEND(s, a)
#define DEVRT_PRINTF_APPLY_2(s, a, ...) DEVRT_PRINTF_APPLY_1(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_3(s, a, ...) DEVRT_PRINTF_APPLY_2(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_4(s, a, ...) DEVRT_PRINTF_APPLY_3(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_5(s, a, ...) DEVRT_PRINTF_APPLY_4(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_6(s, a, ...) DEVRT_PRINTF_APPLY_5(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_7(s, a, ...) DEVRT_PRINTF_APPLY_6(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_8(s, a, ...) DEVRT_PRINTF_APPLY_7(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_9(s, a, ...) DEVRT_PRINTF_APPLY_8(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_10(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_9(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_11(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_10(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_12(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_11(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_13(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_12(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_14(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_13(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_15(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_14(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_16(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_15(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_17(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_16(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_18(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_17(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_19(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_18(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_20(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_19(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_21(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_20(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_22(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_21(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_23(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_22(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_24(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_23(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_25(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_24(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_26(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_25(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_27(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_26(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_28(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_27(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_29(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_28(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_30(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_29(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_31(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_30(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#define DEVRT_PRINTF_APPLY_32(s, a, ...)                                                           \
    DEVRT_PRINTF_APPLY_31(DEVRT_PRINTF_APPEND(s, a), __VA_ARGS__)
#ifndef __cplusplus
#define DEVRT_PRINTF_BEGIN(c, f) devrt_printf_begin(&(struct devrt_printf_state){0}, (c), (f))
#endif
#define DEVRT_PRINTF_0(c, f) devrt_printf_end(DEVRT_PRINTF_BEGIN(c, f))
#define DEVRT_PRINTF_1(c, f, ...)                                                                  \
    devrt_printf_end(DEVRT_PRINTF_APPLY_1(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_2(c, f, ...)                                                                  \
    devrt_printf_end(DEVRT_PRINTF_APPLY_2(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_3(c, f, ...)                                                                  \
    devrt_printf_end(DEVRT_PRINTF_APPLY_3(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_4(c, f, ...)                                                                  \
    devrt_printf_end(DEVRT_PRINTF_APPLY_4(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_5(c, f, ...)                                                                  \
    devrt_printf_end(DEVRT_PRINTF_APPLY_5(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_6(c, f, ...)                                                                  \
    devrt_printf_end(DEVRT_PRINTF_APPLY_6(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_7(c, f, ...)                                                                  \
    devrt_printf_end(DEVRT_PRINTF_APPLY_7(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_8(c, f, ...)                                                                  \
    devrt_printf_end(DEVRT_PRINTF_APPLY_8(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_9(c, f, ...)                                                                  \
    devrt_printf_end(DEVRT_PRINTF_APPLY_9(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_10(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_10(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_11(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_11(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_12(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_12(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_13(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_13(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_14(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_14(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_15(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_15(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_16(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_16(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_17(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_17(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_18(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_18(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_19(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_19(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_20(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_20(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_21(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_21(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_22(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_22(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_23(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_23(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_24(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_24(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_25(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_25(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_26(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_26(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_27(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_27(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_28(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_28(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_29(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_29(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_30(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_30(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_31(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_31(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_32(c, f, ...)                                                                 \
    devrt_printf_end(DEVRT_PRINTF_APPLY_32(DEVRT_PRINTF_BEGIN(c, f), __VA_ARGS__))
#define DEVRT_PRINTF_TOO_MANY(c, f, ...) (devrt_printf_takes_at_most_32_arguments_after_its_format)
/* printf to an output context (devrt_output_context(), devrt_printf_output_context()). */
#define devrt_output_printf(context, ...)                                                          \
    DEVRT_PRINTF_CAT(DEVRT_PRINTF_, DEVRT_PRINTF_COUNT(__VA_ARGS__))((context), __VA_ARGS__)
#define devrt_printf(...) devrt_output_printf(devrt_printf_output_context(), __VA_ARGS__)
#endif

/* Raise an exception with a message and the caller's source location. */
#define DEVRT_THROW(code, message)                                                                 \
    devrt_signal_exception_at((code), (message), __FILE__, (uint32_t)__LINE__, 0)

#endif
