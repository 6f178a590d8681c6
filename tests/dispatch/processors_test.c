/*
 * The ELF machine table of amdgpu_metadata.c against LLVM's AMDGPUUsage, for the entries
 * LLVM 19 cannot write (gfx950, gfx9-4-generic) and so no compiled image can check.
 *
 *   processors_test [control]
 *
 * Exits 0 when every value decodes to its processor and gfx950 has 160 KiB of LDS; with
 * "control" it expects gfx950 to have 64 KiB, which must fail (exit 1).
 */
#include <string.h>

#include "amdgpu_metadata.h"
#include "harness.h"

int main(int argc, char **argv)
{
    static const struct {
        uint32_t mach;
        const char *name;
    } machines[] = {
        {0x4f, "gfx950"},          {0x51, "gfx9-generic"},    {0x5f, "gfx9-4-generic"},
        {0x52, "gfx10-1-generic"}, {0x53, "gfx10-3-generic"}, {0x54, "gfx11-generic"},
        {0x59, "gfx12-generic"},
    };
    for (size_t i = 0; i < sizeof machines / sizeof machines[0]; ++i) {
        const char *name = devrt_amdgpu_processor_name(machines[i].mach);
        CHECK(name && !strcmp(name, machines[i].name), "machine 0x%02x is %s, expected %s",
              machines[i].mach, name ? name : "unknown", machines[i].name);
        CHECK(devrt_amdgpu_processor_known(machines[i].name), "%s is not known", machines[i].name);
    }
    CHECK(!devrt_amdgpu_processor_name(0xff), "machine 0xff has a name");
    CHECK(!devrt_amdgpu_processor_known("gfx9999"), "gfx9999 is known");
    uint32_t want = argc > 1 && !strcmp(argv[1], "control") ? 65536u : 163840u;
    CHECK(devrt_amdgpu_processor_lds("gfx950") == want, "gfx950 has %u bytes of LDS, expected %u",
          devrt_amdgpu_processor_lds("gfx950"), want);
    CHECK(devrt_amdgpu_processor_lds("gfx942") == 65536u, "gfx942 has %u bytes of LDS",
          devrt_amdgpu_processor_lds("gfx942"));
    return failures ? 1 : 0;
}
