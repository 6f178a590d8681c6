/*
 * Launch geometry against devrt's limits (host/codeobject/geometry.c), for every path that
 * takes one: the check as a pure function, devrt_launch on the emulation, and the amdgcn
 * dispatch maker (through devrt-run --explain, tests/dispatch).
 *
 *   geometry_test property          random and edge triples of 32-bit sizes: the check's
 *                                   verdict against a 128-bit reference, and its message
 *   geometry_test property control  the same against the check devrt had before issue 31,
 *                                   whose 64-bit products wrapped: must fail
 *   geometry_test launch IMAGE      devrt_launch refuses the geometries that crashed the
 *                                   emulation (SIGFPE) or ran nothing, and runs the largest
 *                                   workgroup and a grid of exactly 2^40 workgroups' check
 *
 * Exit status: 0 every check held, 1 one failed (each printed), 2 the device did not open.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "geometry.h"
#include "harness.h"

typedef unsigned __int128 u128;

/* The limits, in arithmetic that no three 32-bit sizes can overflow. */
static enum devrt_geometry_fault reference(const struct devrt_launch_config *c, int *axis)
{
    for (int d = 0; d < 3; ++d)
        if (!c->grid[d] || !c->block[d])
            return DEVRT_GEOMETRY_ZERO;
    if ((u128)c->block[0] * c->block[1] * c->block[2] > 1024)
        return DEVRT_GEOMETRY_WORKGROUP;
    for (int d = 0; d < 3; ++d)
        if ((u128)c->grid[d] * c->block[d] > UINT32_MAX) {
            *axis = d;
            return DEVRT_GEOMETRY_DIMENSION;
        }
    if ((u128)c->grid[0] * c->grid[1] * c->grid[2] > (u128)1 << 40)
        return DEVRT_GEOMETRY_GRID;
    return DEVRT_GEOMETRY_OK;
}

/* The check as module.c had it before issue 31, as a verdict: the control. */
static enum devrt_geometry_fault before_issue_31(const struct devrt_launch_config *c, int *axis)
{
    for (int d = 0; d < 3; ++d)
        if (c->grid[d] == 0 || c->block[d] == 0)
            return DEVRT_GEOMETRY_ZERO;
    if ((uint64_t)c->block[0] * c->block[1] * c->block[2] > 1024)
        return DEVRT_GEOMETRY_WORKGROUP;
    for (int d = 0; d < 3; ++d)
        if ((uint64_t)c->grid[d] * c->block[d] > UINT32_MAX) {
            *axis = d;
            return DEVRT_GEOMETRY_DIMENSION;
        }
    if ((uint64_t)c->grid[0] * c->grid[1] * c->grid[2] >> 40)
        return DEVRT_GEOMETRY_GRID;
    return DEVRT_GEOMETRY_OK;
}

static enum devrt_geometry_fault (*checked)(const struct devrt_launch_config *, int *);
static unsigned long cases;

/* What the message of each verdict must name: its limit. */
static const char *const names[] = {
    [DEVRT_GEOMETRY_ZERO] = "must be at least 1 in every dimension",
    [DEVRT_GEOMETRY_WORKGROUP] = "a workgroup holds at most 1024 workitems, given ",
    [DEVRT_GEOMETRY_DIMENSION] = "more than the 4294967295 devrt_grid_size counts",
    [DEVRT_GEOMETRY_GRID] = "a grid holds at most 2^40 workgroups, given ",
};

static void one(uint32_t g0, uint32_t g1, uint32_t g2, uint32_t b0, uint32_t b1, uint32_t b2)
{
    const struct devrt_launch_config c = {.grid = {g0, g1, g2}, .block = {b0, b1, b2}};
    int want_axis = -1, got_axis = -1;
    enum devrt_geometry_fault want = reference(&c, &want_axis), got = checked(&c, &got_axis);
    cases++;
    CHECK(got == want && got_axis == want_axis,
          "grid %u,%u,%u block %u,%u,%u: verdict %d (axis %d), the reference's %d (axis %d)", g0,
          g1, g2, b0, b1, b2, got, got_axis, want, want_axis);
    if (checked != devrt_geometry_fault)
        return;
    /* The message each path prints, with the error each returns. */
    int status = devrt_check_geometry(&c);
    if (want == DEVRT_GEOMETRY_OK) {
        CHECK(status == DEVRT_SUCCESS, "grid %u,%u,%u block %u,%u,%u refused: %s", g0, g1, g2, b0,
              b1, b2, devrt_last_error());
        return;
    }
    CHECK(status == DEVRT_ERROR_INVALID_ARGUMENT && strstr(devrt_last_error(), names[want]),
          "grid %u,%u,%u block %u,%u,%u: status %d, \"%s\" does not say \"%s\"", g0, g1, g2, b0, b1,
          b2, status, devrt_last_error(), names[want]);
}

/* xorshift64*: the same cases every run. */
static uint64_t state = 0x9e3779b97f4a7c15u;
static uint64_t next(void)
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1du;
}

/* A size: any 32 bits, or one of a random number of bits, so that small ones come too. */
static uint32_t size(void)
{
    uint64_t r = next();
    unsigned bits = (unsigned)(r % 33);
    uint32_t v = (uint32_t)(r >> 32);
    return r & 0x100 ? v : bits == 32 ? v : v & ((UINT32_C(1) << bits) - 1);
}

static int property(bool control)
{
    checked = control ? before_issue_31 : devrt_geometry_fault;
    /* Each limit, one either side, and the sizes whose products wrap 64 bits. */
    static const uint32_t edges[] = {0,
                                     1,
                                     2,
                                     3,
                                     31,
                                     32,
                                     33,
                                     1023,
                                     1024,
                                     1025,
                                     65535,
                                     65536,
                                     1048575,
                                     1048576,
                                     1048577,
                                     2097152,
                                     4194303,
                                     4194304,
                                     4194305,
                                     1u << 31,
                                     (1u << 31) + 1,
                                     UINT32_MAX - 1,
                                     UINT32_MAX};
    const size_t n = sizeof edges / sizeof edges[0];
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
            for (size_t k = 0; k < n; ++k) {
                one(1, 1, 1, edges[i], edges[j], edges[k]);
                one(edges[i], edges[j], edges[k], 1, 1, 1);
                one(edges[i], edges[j], edges[k], edges[k], 1, edges[i]);
            }
    for (int i = 0; i < 1000000; ++i) {
        uint32_t g[3] = {size(), size(), size()}, b[3] = {size(), size(), size()};
        one(g[0], g[1], g[2], b[0], b[1], b[2]);
        /* A workgroup within the limit, so that the grid's checks are reached too. */
        one(g[0], g[1], g[2], b[0] % 1025, b[1] % 33, 1);
    }
    printf("%s: %lu cases, %d failure%s\n", control ? "control" : "geometry", cases, failures,
           failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}

/* devrt_launch itself, on an emulated device: each refusal, and the control's run. */
static int launch(const char *image)
{
    devrt_device *device;
    devrt_module *module;
    if (devrt_device_open(DEVRT_BACKEND_EMU, 0, NULL, &device) != DEVRT_SUCCESS) {
        fprintf(stderr, "%s\n", devrt_last_error());
        return 2;
    }
    CHECK(devrt_module_load(device, image, &module) == DEVRT_SUCCESS, "%s", devrt_last_error());
    static const struct {
        struct devrt_launch_config config;
        const char *message;
    } refused[] = {
        /* The workgroup's product wrapped to 0: the emulation divided by it (SIGFPE). */
        {{.grid = {1, 1, 1}, .block = {4194304, 2097152, 2097152}},
         "a workgroup holds at most 1024 workitems, given 4194304x2097152x2097152 (2^64 or "
         "more)"},
        /* The grid's wrapped to 0: nothing ran, and the launch succeeded. */
        {{.grid = {4194304, 2097152, 2097152}, .block = {1, 1, 1}},
         "a grid holds at most 2^40 workgroups, given 4194304x2097152x2097152 (2^64 or more)"},
        {{.grid = {UINT32_MAX, UINT32_MAX, UINT32_MAX}, .block = {1, 1, 1}},
         "a grid holds at most 2^40 workgroups, given 4294967295x4294967295x4294967295 (2^64 "
         "or more)"},
        {{.grid = {1048577, 1048576, 1}, .block = {1, 1, 1}},
         "a grid holds at most 2^40 workgroups, given 1099512676352 (1048577x1048576x1)"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        int status = devrt_launch(module, "nothing", &refused[i].config, NULL, 0, NULL);
        CHECK(status == DEVRT_ERROR_INVALID_ARGUMENT &&
                  !strcmp(devrt_last_error(), refused[i].message),
              "case %zu: status %d, \"%s\"", i, status, devrt_last_error());
    }
    /* The control: the largest workgroup runs. */
    const struct devrt_launch_config largest = {.grid = {2, 1, 1}, .block = {16, 8, 8}};
    CHECK(devrt_launch(module, "nothing", &largest, NULL, 0, NULL) == DEVRT_SUCCESS, "%s",
          devrt_last_error());
    devrt_module_unload(module);
    devrt_device_close(device);
    printf("launch: %d failure%s\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "property"))
        return property(argc == 3 && !strcmp(argv[2], "control"));
    if (argc == 3 && !strcmp(argv[1], "launch"))
        return launch(argv[2]);
    fprintf(stderr, "usage: geometry_test property [control] | launch IMAGE\n");
    return 2;
}
