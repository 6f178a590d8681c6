/*
 * The code-object layer's processor table (amdgpu_metadata.c) against the gfx target table
 * (device/arch/amdgcn_targets.txt): each supported target's EF_AMDGPU_MACH decodes to it,
 * it is known, and its LDS is the table's. The table is the one place a target is added;
 * this test says when the code-object layer does not know one it lists.
 *
 *   processors_test TABLE
 *
 * Exits 0 when every row agrees, 1 naming each row that does not.
 */
#include <stdio.h>
#include <string.h>

#include "amdgpu_metadata.h"
#include "harness.h"

int main(int argc, char **argv)
{
    FILE *table = argc == 2 ? fopen(argv[1], "r") : NULL;
    if (!table) {
        fprintf(stderr, "usage: processors_test TABLE (a readable file)\n");
        return 2;
    }
    char line[256];
    int rows = 0;
    while (fgets(line, sizeof line, table)) {
        char target[64], family[32];
        unsigned llvm, wave, lds, mach;
        if (strncmp(line, "gfx", 3) != 0)
            continue;
        if (sscanf(line, "%63s %u %u %31s %u %x", target, &llvm, &wave, family, &lds, &mach) != 6) {
            fprintf(stderr, "processors_test: %s: a row of six fields expected: %s", argv[1], line);
            return 2;
        }
        rows++;
        const char *name = devrt_amdgpu_processor_name(mach);
        CHECK(name && !strcmp(name, target), "machine 0x%02x is %s, the table says %s", mach,
              name ? name : "unknown", target);
        CHECK(devrt_amdgpu_processor_known(target), "%s is not known", target);
        CHECK(devrt_amdgpu_processor_lds(target) == lds,
              "%s has %u bytes of LDS, the table says %u", target,
              devrt_amdgpu_processor_lds(target), lds);
    }
    fclose(table);
    CHECK(rows > 0, "%s has no rows", argv[1]);
    CHECK(!devrt_amdgpu_processor_name(0xff), "machine 0xff has a name");
    CHECK(!devrt_amdgpu_processor_known("gfx9999"), "gfx9999 is known");
    if (!failures)
        printf("processors: %d targets agree with the table\n", rows);
    return failures ? 1 : 0;
}
