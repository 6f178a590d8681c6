/*
 * The launch geometry every backend accepts: what devrt_launch checks and the amdgcn dispatch
 * maker checks again, in one place so that the two cannot disagree.
 */
#ifndef DEVRT_GEOMETRY_H
#define DEVRT_GEOMETRY_H

#include <stdint.h>

#include <devrt/host.h>

/* The exception word's fields (abi.h) bound both: a workitem's index within its workgroup
   has 16 bits, though no GPU runs more than 1024, and a workgroup's index 40. */
#define DEVRT_MAX_WORKGROUP_WORKITEMS 1024u
#define DEVRT_MAX_GRID_WORKGROUPS (UINT64_C(1) << 40)

/* Which limit a geometry breaks, the first in the order they are checked. */
enum devrt_geometry_fault {
    DEVRT_GEOMETRY_OK,
    DEVRT_GEOMETRY_ZERO,      /* a size of 0 */
    DEVRT_GEOMETRY_WORKGROUP, /* more than 1024 workitems a workgroup */
    DEVRT_GEOMETRY_DIMENSION, /* more than 2^32-1 workitems a dimension (*axis says which) */
    DEVRT_GEOMETRY_GRID       /* more than 2^40 workgroups */
};

/* The verdict alone, with no error set: AXIS (may be NULL) gets the dimension at fault. */
enum devrt_geometry_fault devrt_geometry_fault(const struct devrt_launch_config *config, int *axis);

/* DEVRT_SUCCESS, or DEVRT_ERROR_INVALID_ARGUMENT with the error naming the limit. */
int devrt_check_geometry(const struct devrt_launch_config *config);

#endif
