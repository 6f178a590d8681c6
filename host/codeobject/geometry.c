/*
 * Launch geometry against devrt's limits. Three 32-bit sizes multiply to up to 96 bits, so
 * every product is checked: a wrapped one passed as small before (issue 31), and the
 * emulation divided by a workgroup of 0 workitems.
 */
#include <stdbool.h>
#include <stdio.h>

#include "geometry.h"
#include "codeobject.h"

/* The product of three sizes, false where it needs more than 64 bits. */
static bool product3(const uint32_t size[3], uint64_t *product)
{
    return !__builtin_mul_overflow((uint64_t)size[0] * size[1], size[2], product);
}

enum devrt_geometry_fault devrt_geometry_fault(const struct devrt_launch_config *config, int *axis)
{
    for (int d = 0; d < 3; ++d)
        if (config->grid[d] == 0 || config->block[d] == 0)
            return DEVRT_GEOMETRY_ZERO;
    uint64_t workitems, workgroups;
    if (!product3(config->block, &workitems) || workitems > DEVRT_MAX_WORKGROUP_WORKITEMS)
        return DEVRT_GEOMETRY_WORKGROUP;
    /* Two 32-bit sizes cannot wrap 64 bits. */
    for (int d = 0; d < 3; ++d)
        if ((uint64_t)config->grid[d] * config->block[d] > UINT32_MAX) {
            if (axis)
                *axis = d;
            return DEVRT_GEOMETRY_DIMENSION;
        }
    if (!product3(config->grid, &workgroups) || workgroups > DEVRT_MAX_GRID_WORKGROUPS)
        return DEVRT_GEOMETRY_GRID;
    return DEVRT_GEOMETRY_OK;
}

/* "N (XxYxZ)", or "XxYxZ (2^64 or more)" for a product that has no uint64_t. */
static void describe_product(const uint32_t size[3], char *text, size_t length)
{
    uint64_t product;
    if (product3(size, &product))
        snprintf(text, length, "%llu (%ux%ux%u)", (unsigned long long)product, size[0], size[1],
                 size[2]);
    else
        snprintf(text, length, "%ux%ux%u (2^64 or more)", size[0], size[1], size[2]);
}

int devrt_check_geometry(const struct devrt_launch_config *config)
{
    static const char names[] = "xyz";
    int axis = 0;
    char given[80];
    switch (devrt_geometry_fault(config, &axis)) {
    case DEVRT_GEOMETRY_OK: return DEVRT_SUCCESS;
    case DEVRT_GEOMETRY_ZERO:
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "grid and block sizes must be at least 1 in every dimension");
    case DEVRT_GEOMETRY_WORKGROUP:
        describe_product(config->block, given, sizeof given);
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "a workgroup holds at most %u workitems, given %s",
                          DEVRT_MAX_WORKGROUP_WORKITEMS, given);
    case DEVRT_GEOMETRY_DIMENSION:
        /* Past it devrt_grid_size, a uint32_t on every backend, and an AQL packet's grid
           size would wrap. */
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "grid %c: %u workgroups of %u workitems is %llu workitems, more than "
                          "the %u devrt_grid_size counts",
                          names[axis], config->grid[axis], config->block[axis],
                          (unsigned long long)config->grid[axis] * config->block[axis], UINT32_MAX);
    case DEVRT_GEOMETRY_GRID:
        describe_product(config->grid, given, sizeof given);
        return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT,
                          "a grid holds at most 2^40 workgroups, given %s", given);
    }
    return devrt_fail(DEVRT_ERROR_INVALID_ARGUMENT, "unknown geometry fault");
}
