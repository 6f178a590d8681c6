/*
 * How the emulation calls a kernel through libffi: the ffi type of each kernel argument's
 * devrt type. Shared with the fake GPU API the attach tests stand up (tests/attach), which
 * calls its kernels the same way.
 */
#ifndef DEVRT_EMU_FFI_H
#define DEVRT_EMU_FFI_H

#include <ffi.h>

#include <devrt/host.h>

/* NULL where the type alone does not give the ffi type: an unknown one, or bytes. */
static inline ffi_type *devrt_emu_ffi_type(enum devrt_arg_type type)
{
    switch (type) {
    case DEVRT_ARG_POINTER: return &ffi_type_pointer;
    case DEVRT_ARG_I32: return &ffi_type_sint32;
    case DEVRT_ARG_U32: return &ffi_type_uint32;
    case DEVRT_ARG_I64: return &ffi_type_sint64;
    case DEVRT_ARG_U64: return &ffi_type_uint64;
    case DEVRT_ARG_F32: return &ffi_type_float;
    case DEVRT_ARG_F64: return &ffi_type_double;
    case DEVRT_ARG_I8: return &ffi_type_sint8;
    case DEVRT_ARG_U8: return &ffi_type_uint8;
    case DEVRT_ARG_I16: return &ffi_type_sint16;
    case DEVRT_ARG_U16: return &ffi_type_uint16;
    case DEVRT_ARG_BYTES: return NULL; /* its ffi type would need the fields' types */
    }
    return NULL;
}

#endif
