/*
 * The ELF reading behind devrt-leaks, as a library over a memory buffer so that the
 * command, the tests and the fuzz target all run the same code.
 */
#ifndef DEVRT_LEAKS_H
#define DEVRT_LEAKS_H

#include <stdbool.h>
#include <stddef.h>

/* One reference from a host file to a device-only symbol. */
struct devrt_leak {
    const char *member;   /* archive member that holds it, or NULL */
    const char *symbol;   /* the device-only symbol */
    const char *function; /* the function (or data object) whose relocation refers to it,
                             or NULL where the file has no such relocation (linked images) */
    bool weak;            /* a weak reference, which does not stop a load by itself */
};

/*
 * What a scan reports. Every callback may be NULL. Strings live only for the call. The
 * file's own symbols and sections are all the scan reads; nothing is resolved against
 * other files.
 */
struct devrt_leaks_visitor {
    void (*leak)(void *context, const struct devrt_leak *leak);
    /* Each global symbol that the file (or an archive member) defines. */
    void (*defined)(void *context, const char *member, const char *symbol);
    /* An archive member that is not ELF (LLVM bitcode, say) and so was not read. */
    void (*skipped)(void *context, const char *member, const char *reason);
    void *context;
};

/*
 * Scans an ELF relocatable object, shared object, executable, or an archive of objects,
 * held in image[0..size). libelf may rewrite the buffer in place, so it must be writable.
 * Returns 0, or -1 with the reason in error (truncated to error_size) when the buffer is
 * not a readable ELF file or archive; leaks already reported stay reported.
 */
int devrt_leaks_scan(void *image, size_t size, const struct devrt_leaks_visitor *visitor,
                     char *error, size_t error_size);

/* Whether name is device-only: in the manifest or shield list, or in a device namespace. */
bool devrt_leaks_is_device_symbol(const char *name);

#endif
