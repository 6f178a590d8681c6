/* What a host stub does when it is called: the handler, or one line on stderr and abort. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <devrt/host_stubs.h>

/* Static, so that only this image's stubs and setter reach it. */
static _Atomic(devrt_host_trap_handler) trap_handler;

devrt_host_trap_handler devrt_set_host_trap_handler(devrt_host_trap_handler handler)
{
    return atomic_exchange(&trap_handler, handler);
}

static size_t append(char *buf, size_t len, size_t cap, const char *s)
{
    size_t n = strlen(s);

    if (n > cap - len)
        n = cap - len;
    memcpy(buf + len, s, n);
    return len + n;
}

/*
 * The message goes out in one write(2): the process may be in any state when a stub runs
 * (stdio locked, heap broken), and one write keeps the line whole among other threads.
 */
static void report(const char *symbol)
{
    char line[512];
    size_t len = 0;

    len = append(line, len, sizeof line - 1, "devrt: ");
    len = append(line, len, sizeof line - 1, symbol);
    len = append(line, len, sizeof line - 1,
                 " was called on the host, but this device function exists only in GPU "
                 "kernels (devrt host stub)");
    line[len++] = '\n';
    if (write(2, line, len) < 0) {
        /* Nowhere left to report to; abort says the rest. */
    }
}

void devrt_host_trap(const char *symbol)
{
    devrt_host_trap_handler handler = atomic_load(&trap_handler);

    if (handler)
        handler(symbol);
    report(symbol);
    abort();
}
