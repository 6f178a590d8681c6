/* The vendor libraries' loader (vendor_library.h). */
#include "vendor_library.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adds NAME to the comma-separated LIST, ending it with "..." once it is full. */
static void list_add(char *list, size_t size, const char *name)
{
    size_t used = strlen(list);
    int n = snprintf(list + used, size - used, "%s%s", used ? ", " : "", name);
    if (n < 0 || (size_t)n >= size - used)
        memcpy(list + size - 4, "...", 4);
}

static const char *variable_value(const struct devrt_vendor_library *library)
{
    const char *value = secure_getenv(library->variable);
    if ((!value || !*value) && library->old_variable)
        value = secure_getenv(library->old_variable);
    return value && *value ? value : NULL;
}

static void clear(const struct devrt_vendor_symbol *symbols, size_t count)
{
    void *none = NULL;
    for (size_t i = 0; i < count; ++i)
        memcpy(symbols[i].slot, &none, sizeof none);
}

void *devrt_vendor_library_open(const struct devrt_vendor_library *library,
                                const struct devrt_vendor_symbol *symbols, size_t count,
                                char *error, size_t size)
{
    const char *named = variable_value(library);
    const char *first = named ? named : library->files[0];
    void *handle = NULL;
    char why[512] = "";
    if (named) {
        handle = dlopen(named, RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            snprintf(why, sizeof why, "%s", dlerror());
    } else {
        for (size_t i = 0; !handle && library->files[i]; ++i) {
            handle = dlopen(library->files[i], RTLD_NOW | RTLD_LOCAL);
            if (!handle && i == 0) /* the first name's reason: the later are older versions */
                snprintf(why, sizeof why, "%s", dlerror());
        }
    }
    clear(symbols, count);
    if (!handle) {
        snprintf(error, size, "cannot open %s, %s (%s)", first, library->what, why);
        return NULL;
    }
    char missing[512] = "";
    int absent = 0;
    for (size_t i = 0; i < count; ++i) {
        void *address = dlsym(handle, symbols[i].name);
        memcpy(symbols[i].slot, &address, sizeof address);
        if (!address && !symbols[i].optional) {
            absent++;
            list_add(missing, sizeof missing, symbols[i].name);
        }
    }
    if (absent) {
        struct link_map *map = NULL;
        const char *path = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name[0]
                               ? map->l_name
                               : first;
        snprintf(error, size, "%s lacks %d function%s devrt needs: %s", path, absent,
                 absent == 1 ? "" : "s", missing);
        clear(symbols, count);
        dlclose(handle);
        return NULL;
    }
    return handle;
}
