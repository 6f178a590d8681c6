/*
 * What every cost kernel shares. The output index comes from the compiler's builtin, not
 * from a runtime, so a kernel costs its own few instructions plus the one call it makes,
 * and a devrt kernel and its ockl counterpart differ only in that call.
 */
#ifndef COST_H
#define COST_H

#include <stdint.h>

#define COST_KERNEL __attribute__((amdgpu_kernel, visibility("protected"))) void
#define COST_INDEX (__builtin_amdgcn_workitem_id_x())

#endif
