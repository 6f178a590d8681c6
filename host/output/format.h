/*
 * The host formatter and the parser of output messages: what the server makes of the
 * bytes a lane sent. Neither trusts the device: every length is checked, every argument's
 * type is checked against its conversion. docs/output.md states the rules.
 */
#ifndef DEVRT_FORMAT_H
#define DEVRT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "text.h"

/* The largest width or precision a conversion may ask for, so output stays bounded. */
#define DEVRT_FORMAT_MAX_WIDTH 4096
/* Arguments the parser accepts in one message: the macro's limit and then some. */
#define DEVRT_FORMAT_MAX_ARGS 64u

/* One argument as it arrived: enum devrt_output_tag, flags, value, and a string's bytes. */
struct devrt_format_arg {
    uint32_t tag;
    uint32_t flags;
    uint64_t value;
    const char *data;
    uint32_t length;
};

/*
 * Append FORMAT (LENGTH bytes, NULs included) formatted with ARGS to OUT. Returns 0, or -1
 * when the format and the arguments do not fit, with the first problem in WHY; OUT then
 * holds the output the rules prescribe (the misfit conversions printed as written).
 */
int devrt_format(struct devrt_text *out, const char *format, size_t length,
                 const struct devrt_format_arg *args, size_t count, char *why, size_t why_size);

/*
 * What the tests of devrt_vprintf's typing (tests/unit/vprintf_fuzz.c) learn from the
 * formatter: MISFITS counts the arguments of a kind their conversion does not read (WHY
 * names only the first problem); NUMBERED whether the format's first conversion was %N$;
 * for an unnumbered format, TYPED is how many arguments the conversions before the first
 * one the device cannot type took.
 */
struct devrt_format_check {
    unsigned misfits;
    bool numbered;
    size_t typed;
};

/* devrt_format, and CHECK (when not NULL). */
int devrt_format_checked(struct devrt_text *out, const char *format, size_t length,
                         const struct devrt_format_arg *args, size_t count, char *why,
                         size_t why_size, struct devrt_format_check *check);

/* Where the bytes of raw records left in device memory come from (DEVRT_OUTPUT_AT_ADDRESS). */
struct devrt_output_source {
    /* LENGTH bytes at the device's ADDRESS, kept until the next call; NULL if unreadable. */
    const char *(*fetch)(const struct devrt_output_source *source, uint64_t address,
                         uint32_t length);
};

/*
 * Whether the first record of a raw message (DATA, LENGTH bytes) is a write left in device
 * memory, and where: BYTES bytes at ADDRESS.
 */
bool devrt_output_first_at_address(const uint8_t *data, size_t length, uint64_t *address,
                                   uint32_t *bytes);

/*
 * Append what the message of one lane (OPCODE DEVRT_RPC_OUTPUT or DEVRT_RPC_PRINTF)
 * prints to OUT, the bytes of records at an address from SOURCE (NULL: none can be read).
 * Returns 0, or -1 with WHY: a malformed message prints nothing, a misfit format prints
 * what devrt_format says.
 */
int devrt_output_render(uint32_t opcode, const uint8_t *data, size_t length,
                        const struct devrt_output_source *source, struct devrt_text *out, char *why,
                        size_t why_size);

#endif
