/* Status names and the per-thread message of the last failure. */
#include <stdarg.h>
#include <stdio.h>

#include <devrt/abi.h>

#include "codeobject.h"

static _Thread_local char last_error[1024];

int devrt_fail(int status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(last_error, sizeof last_error, format, args);
    va_end(args);
    return status;
}

const char *devrt_last_error(void)
{
    return last_error;
}

const char *devrt_status_string(int status)
{
    switch (status) {
    case DEVRT_SUCCESS: return "success";
    case DEVRT_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case DEVRT_ERROR_NO_DEVICE: return "no device";
    case DEVRT_ERROR_OUT_OF_MEMORY: return "out of memory";
    case DEVRT_ERROR_IMAGE: return "cannot load image";
    case DEVRT_ERROR_ABI_MISMATCH: return "device library ABI mismatch";
    case DEVRT_ERROR_NO_KERNEL: return "no such kernel";
    case DEVRT_ERROR_LAUNCH: return "launch failed";
    case DEVRT_ERROR_EXCEPTION: return "kernel raised an exception";
    case DEVRT_ERROR_DEVICE_REQUEST: return "kernel sent a malformed request";
    case DEVRT_ERROR_BACKEND: return "backend error";
    case DEVRT_ERROR_ARGUMENTS: return "arguments do not fit the kernel";
    case DEVRT_ERROR_TIMEOUT: return "kernel ran past its timeout";
    case DEVRT_ERROR_DEVICE_LOST: return "device lost";
    default: return "unknown status";
    }
}

const char *devrt_exception_name(uint32_t code)
{
    static const char *const names[DEVRT_EXCEPTION_CODE_COUNT] = {
        [DEVRT_EXCEPTION_NONE] = "no exception",
        [DEVRT_EXCEPTION_UNKNOWN] = "an exception",
        [DEVRT_EXCEPTION_BOUNDS] = "a bounds error",
        [DEVRT_EXCEPTION_DOMAIN] = "a domain error",
        [DEVRT_EXCEPTION_OVERFLOW] = "an overflow error",
        [DEVRT_EXCEPTION_INEXACT] = "an inexact error",
        [DEVRT_EXCEPTION_ARGUMENT] = "an argument error",
        [DEVRT_EXCEPTION_DIVIDE] = "a divide error",
        [DEVRT_EXCEPTION_DIMENSION_MISMATCH] = "a dimension mismatch",
        [DEVRT_EXCEPTION_OUT_OF_MEMORY] = "an out-of-memory error",
        [DEVRT_EXCEPTION_DOUBLE_FREE] = "a double free",
        [DEVRT_EXCEPTION_INVALID_POINTER] = "an invalid pointer",
        [DEVRT_EXCEPTION_DEVICE_ERROR] = "a device error",
    };
    return code < DEVRT_EXCEPTION_CODE_COUNT ? names[code] : "an exception of unknown code";
}
