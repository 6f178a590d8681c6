/* Which symbol names are device-only. The lists are compiled in from the manifests. */
#include <string.h>

#include "leaks.h"

static const char *const listed[] = {
#define DEVRT_FUNCTION(ret, name, params) #name,
#define DEVRT_NORETURN(name, params) #name,
#define DEVRT_VARIABLE(type, name) #name,
#include <devrt/symbols.def>
#undef DEVRT_FUNCTION
#undef DEVRT_NORETURN
#undef DEVRT_VARIABLE
#define DEVRT_SHIELD(name) name,
#include <devrt/shield.def>
#undef DEVRT_SHIELD
};

/* Namespaces that only GPU compilers and device libraries define. */
static const char *const namespaces[] = {
    "llvm.amdgcn.", "llvm.nvvm.", "julia.gpu.", "__ockl_", "__ocml_", "__oclc_",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

bool devrt_leaks_is_device_symbol(const char *name)
{
    /* A linked image's .symtab may spell a versioned reference as name@VERSION. */
    size_t len = strcspn(name, "@");
    size_t i;

    for (i = 0; i < COUNT(namespaces); i++)
        if (strncmp(name, namespaces[i], strlen(namespaces[i])) == 0)
            return true;
    for (i = 0; i < COUNT(listed); i++)
        if (strlen(listed[i]) == len && memcmp(name, listed[i], len) == 0)
            return true;
    return false;
}
