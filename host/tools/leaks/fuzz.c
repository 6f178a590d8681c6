/*
 * libFuzzer target: any bytes given to the scanner must end in a report or an error, never
 * in a crash, a leak of memory or an out-of-bounds read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leaks.h"

/* Touch every string the scanner hands out, so that the sanitizer checks it. */
static volatile size_t sink;

static void on_leak(void *context, const struct devrt_leak *leak)
{
    (void)context;
    sink += strlen(leak->symbol) + (leak->function ? strlen(leak->function) : 0) +
            (leak->member ? strlen(leak->member) : 0);
}

static void on_defined(void *context, const char *member, const char *symbol)
{
    (void)context;
    sink += strlen(symbol) + (member ? strlen(member) : 0);
}

static void on_skipped(void *context, const char *member, const char *reason)
{
    (void)context;
    sink += strlen(member) + strlen(reason);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct devrt_leaks_visitor v = {on_leak, on_defined, on_skipped, NULL};
    char error[256] = "";
    /* The scanner may write to its buffer; libFuzzer's is read-only. */
    void *copy = malloc(size ? size : 1);

    if (!copy)
        return 0;
    memcpy(copy, data, size);
    devrt_leaks_scan(copy, size, &v, error, sizeof error);
    sink += strlen(error);
    free(copy);
#ifdef DEVRT_FUZZ_PLANTED_BUG
    /*
     * The control build: a bug the fuzzer must find, so a silent fuzz run means something.
     * Any change of an ELF seed's type byte to one no ELF type has trips it: a bound run
     * makes such changes dozens of times, so finding it does not hang on luck (a single
     * planted value was missed by one run in two clones).
     */
    if (size > 16 && memcmp(data, "\177ELF", 4) == 0 && data[16] > 4)
        abort();
#endif
    return 0;
}
