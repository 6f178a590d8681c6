/*
 * The README's demo: every lane allocates a block, prints from it, frees it; one lane of
 * the last workgroup then raises an exception, which the host reports after the output.
 */
#include <devrt/devrt.h>

DEVRT_KERNEL1(demo, uint32_t, raise_at)
{
    uint32_t lane = (uint32_t)devrt_global_id(DEVRT_X);
    char *name = devrt_malloc(32);
    if (!name) {
        devrt_printf("lane %u: no memory\n", lane);
        return;
    }
    for (int i = 0; i < 5; ++i)
        name[i] = "lane "[i];
    name[5] = (char)('0' + lane / 10 % 10);
    name[6] = (char)('0' + lane % 10);
    name[7] = '\0';
    devrt_printf("%s of workgroup %u says hello from a %u-byte block at %p\n", name,
                 devrt_workgroup_id(DEVRT_X), 32u, (void *)name);
    devrt_free(name);
    if (lane == raise_at)
        DEVRT_THROW(DEVRT_EXCEPTION_DOMAIN, "the demo raises this on purpose");
}
