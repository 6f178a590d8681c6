/*
 * The host-emulation ABI: how the emulation backend of the host runtime runs a kernel
 * image (a shared object built from kernel C with the device library compiled for the
 * host). Each lane is a host thread; a wave is 1, 32 or 64 of them, scheduled independently
 * (docs/runtime.md). The runtime hands each lane thread a devrt_emu_lane before it calls the
 * kernel function.
 */
#ifndef DEVRT_EMU_H
#define DEVRT_EMU_H

#include <stdint.h>

/*
 * What a rendezvous of lanes of one wave gives each of them: who met, the ballot of their
 * predicates, and the value of the lowest of them.
 */
struct devrt_emu_meeting {
    uint64_t lanes;
    uint64_t ballot;
    uint32_t first;
};

struct devrt_emu_lane {
    uint32_t workitem[3];
    uint32_t workgroup[3];
    uint32_t workgroup_size[3];
    uint32_t num_workgroups[3];
    void *runtime; /* the launch's own bookkeeping; device code does not look inside */
    void (*barrier)(struct devrt_emu_lane *lane);
    __attribute__((noreturn)) void (*end_wave)(struct devrt_emu_lane *lane);
    uint32_t wave_size;
    uint32_t lane_id; /* within the wave */
    /*
     * Meet lanes of the wave: exactly the live lanes of MASK, or with MASK 0 whichever lanes
     * of the wave reach the caller's call site (its whole call stack) together.
     */
    void (*meet)(struct devrt_emu_lane *lane, uint64_t mask, int predicate, uint32_t value,
                 struct devrt_emu_meeting *out);
    /* The lane waits for something other lanes or the host will do (devrt_arch_sleep), on
       waves of any width; a launch past its timeout may end the lane here. */
    void (*sleep)(struct devrt_emu_lane *lane);
};

/*
 * A kernel's parameters as DEVRT_KERNELn records them: how many, and each one's size in
 * bytes. The image exports it as DEVRT_EMU_SIGNATURE_PREFIX followed by the kernel's name.
 */
#define DEVRT_EMU_SIGNATURE_PREFIX "__devrt_signature_"
#define DEVRT_EMU_MAX_PARAMETERS 8u
struct devrt_emu_signature {
    uint32_t count;
    uint32_t size[DEVRT_EMU_MAX_PARAMETERS];
};

/*
 * What else DEVRT_KERNELn records of each parameter, in a symbol of its own
 * (DEVRT_EMU_PARAMETERS_PREFIX followed by the kernel's name), so that images built before
 * it keep their signature as it was and are checked by size alone: its kind, against which
 * the runtime checks each argument's type (docs/runtime.md, "Arguments"), and its name, for
 * the message.
 */
#define DEVRT_EMU_PARAMETERS_PREFIX "__devrt_parameters_"
enum devrt_emu_kind {
    DEVRT_EMU_KIND_UNKNOWN,  /* not recorded: the size alone is checked */
    DEVRT_EMU_KIND_POINTER,  /* any pointer */
    DEVRT_EMU_KIND_SIGNED,   /* a signed integer */
    DEVRT_EMU_KIND_UNSIGNED, /* an unsigned integer, bool */
    DEVRT_EMU_KIND_FLOAT,    /* float, double, _Float16 */
    DEVRT_EMU_KIND_VALUE     /* anything else by value: a struct, union or vector */
};
struct devrt_emu_parameters {
    uint32_t count; /* the signature's */
    uint32_t kind[DEVRT_EMU_MAX_PARAMETERS];
    const char *name[DEVRT_EMU_MAX_PARAMETERS];
};

/*
 * DEVRT_EMU_KIND(type): the kind of a parameter of TYPE, a constant. __builtin_classify_type
 * (GCC and clang, C and C++) tells pointers, integers, enums, bools and floating types from
 * the rest; signedness needs a value the type converts -1 to, which a struct has not, so C
 * asks _Generic (an enum matches its compatible integer type) and C++ a specialization that
 * only integer types instantiate.
 */
#define DEVRT_EMU_CLASS_POINTER 5
#define DEVRT_EMU_CLASS_FLOAT 8
#define DEVRT_EMU_CLASS_BOOL 4
#ifdef __cplusplus
extern "C++" {
template <typename T, int C = __builtin_classify_type(*static_cast<T *>(nullptr))>
struct devrt_emu_kind_of {
    static const uint32_t value = C == DEVRT_EMU_CLASS_POINTER ? DEVRT_EMU_KIND_POINTER
                                  : C == DEVRT_EMU_CLASS_FLOAT ? DEVRT_EMU_KIND_FLOAT
                                  : C == DEVRT_EMU_CLASS_BOOL  ? DEVRT_EMU_KIND_UNSIGNED
                                                               : DEVRT_EMU_KIND_VALUE;
};
template <typename T> struct devrt_emu_kind_of<T, 1> { /* integer (char included) */
    static const uint32_t value =
        static_cast<T>(-1) < static_cast<T>(0) ? DEVRT_EMU_KIND_SIGNED : DEVRT_EMU_KIND_UNSIGNED;
};
/* char, which GCC reserves a class for */
template <typename T> struct devrt_emu_kind_of<T, 2> : devrt_emu_kind_of<T, 1> {
};
template <typename T> struct devrt_emu_kind_of<T, 3> { /* enum: its underlying type's */
    static const uint32_t value = devrt_emu_kind_of<__underlying_type(T)>::value;
};
}
#define DEVRT_EMU_KIND(t) (devrt_emu_kind_of<__typeof__(t)>::value)
#else
#ifdef __CHAR_UNSIGNED__
#define DEVRT_EMU_CHAR_SIGNED 0
#else
#define DEVRT_EMU_CHAR_SIGNED 1
#endif
#define DEVRT_EMU_SIGNED(v)                                                                        \
    _Generic((v),                                                                                  \
        char: DEVRT_EMU_CHAR_SIGNED,                                                               \
        signed char: 1,                                                                            \
        short: 1,                                                                                  \
        int: 1,                                                                                    \
        long: 1,                                                                                   \
        long long: 1,                                                                              \
        default: 0)
#define DEVRT_EMU_KIND_OF(c, v)                                                                    \
    ((c) == DEVRT_EMU_CLASS_POINTER ? DEVRT_EMU_KIND_POINTER                                       \
     : (c) == DEVRT_EMU_CLASS_FLOAT ? DEVRT_EMU_KIND_FLOAT                                         \
     : (c) == DEVRT_EMU_CLASS_BOOL  ? DEVRT_EMU_KIND_UNSIGNED                                      \
     : (c) >= 1 && (c) <= 3 /* integer, char, enum */                                              \
         ? (DEVRT_EMU_SIGNED(v) ? DEVRT_EMU_KIND_SIGNED : DEVRT_EMU_KIND_UNSIGNED)                 \
         : DEVRT_EMU_KIND_VALUE)
/* The operands are not evaluated: no null pointer is read. */
#define DEVRT_EMU_KIND(t)                                                                          \
    DEVRT_EMU_KIND_OF(__builtin_classify_type(*(__typeof__(t) *)0), *(__typeof__(t) *)0)
#endif

/*
 * How DEVRT_KERNELn kernels are called: the image exports DEVRT_EMU_CALL_PREFIX followed by
 * the kernel's name, which takes a pointer to each argument's bytes and calls the kernel, so
 * that the compiler, not the runtime, passes each value as the host ABI wants (a struct by
 * value goes in registers or memory by its fields' types).
 */
#define DEVRT_EMU_CALL_PREFIX "__devrt_call_"
typedef void devrt_emu_call_fn(void *const *values);

/* Exported by every emulation image: binds the calling thread to a lane. */
#define DEVRT_EMU_ENTER_SYMBOL "__devrt_emu_enter"
typedef void devrt_emu_enter_fn(struct devrt_emu_lane *lane);
/* In libdevrt_emu; <devrt/devrt.h> refers to it, so that every kernel image links it. */
#ifdef __cplusplus
extern "C"
#endif
    __attribute__((visibility("default"))) devrt_emu_enter_fn __devrt_emu_enter;

#endif
