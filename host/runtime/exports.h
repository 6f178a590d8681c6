/*
 * What libdevrt.so exports: the functions that the host's public headers declare, and
 * nothing else. The shared library's sources are compiled with hidden visibility and this
 * header forced in before their first line (host/runtime/CMakeLists.txt), so that these
 * declarations alone are default and each definition takes its visibility from them. A
 * function declared in one of these headers is exported with no other edit; libdevrt.map
 * gives every export the version node. tests/api/check_exports.py holds the library to the
 * headers' functions (tests/api/public_names.py, HOST_LIBRARY: the same four headers).
 */
#ifndef DEVRT_EXPORTS_H
#define DEVRT_EXPORTS_H

/* The system's headers that the public ones include, first: only devrt's are made default. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#pragma GCC visibility push(default)
#include <devrt/attach.h>
#include <devrt/cuda.h>
#include <devrt/hip.h>
#include <devrt/host.h>
#pragma GCC visibility pop

#endif
