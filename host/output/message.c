/*
 * Output messages as the device sends them (include/devrt/output.h): checked word by word,
 * then printed. A message that breaks the format prints nothing: the device did not run
 * devrt's code, and nothing it says can be trusted.
 */
#include <stdio.h>
#include <string.h>

#include <devrt/output.h>
#include <devrt/rpc.h>

#include "format.h"

struct reader {
    const uint8_t *data;
    size_t words, next;
};

static uint64_t word_at(const struct reader *r, size_t index)
{
    uint64_t word;
    memcpy(&word, r->data + index * 8, sizeof word);
    return word;
}

struct record {
    uint32_t tag, flags, length;
    uint64_t value;
    const char *data;
};

/* The next record; false with WHY when the message ends or breaks the format. */
static bool next_record(struct reader *r, struct record *out, char *why, size_t why_size)
{
    while (r->next < r->words && word_at(r, r->next) == 0)
        r->next++;
    if (r->next >= r->words) {
        snprintf(why, why_size, "message without an end record");
        return false;
    }
    uint64_t head = word_at(r, r->next++);
    out->tag = DEVRT_OUTPUT_WORD_TAG(head);
    out->flags = DEVRT_OUTPUT_WORD_FLAGS(head);
    out->length = DEVRT_OUTPUT_WORD_LENGTH(head);
    out->value = 0;
    out->data = NULL;
    if (out->tag == DEVRT_OUTPUT_END)
        return true;
    if (out->tag == DEVRT_OUTPUT_PAD || out->tag >= DEVRT_OUTPUT_TAG_END) {
        snprintf(why, why_size, "unknown record tag %u at word %zu", out->tag, r->next - 1);
        return false;
    }
    if (out->flags &
        ~(uint32_t)(DEVRT_OUTPUT_TRUNCATED | DEVRT_OUTPUT_NULL | DEVRT_OUTPUT_AT_ADDRESS)) {
        snprintf(why, why_size, "unknown record flags 0x%x", out->flags);
        return false;
    }
    bool at_address = out->flags & DEVRT_OUTPUT_AT_ADDRESS;
    if (at_address && (out->tag != DEVRT_OUTPUT_BYTES || out->flags != DEVRT_OUTPUT_AT_ADDRESS ||
                       out->length > DEVRT_RPC_MAX_MESSAGE)) {
        snprintf(why, why_size, "a %u record of %u bytes at an address (flags 0x%x)", out->tag,
                 out->length, out->flags);
        return false;
    }
    bool has_bytes = out->tag == DEVRT_OUTPUT_FORMAT || out->tag == DEVRT_OUTPUT_STR ||
                     out->tag == DEVRT_OUTPUT_BYTES;
    if (!has_bytes && (out->length || out->flags)) {
        snprintf(why, why_size, "a %u record with %u bytes", out->tag, out->length);
        return false;
    }
    if (out->tag != DEVRT_OUTPUT_BYTES && out->length > DEVRT_PRINTF_MAX_STRING) {
        snprintf(why, why_size, "a string of %u bytes, the limit is %u", out->length,
                 DEVRT_PRINTF_MAX_STRING);
        return false;
    }
    /* No wrap for a hostile length. Bytes at an address are not in the message. */
    size_t data_words = at_address ? 0 : ((size_t)out->length + 7) / 8;
    if (r->words - r->next < 1 + data_words) {
        snprintf(why, why_size, "a record of %u bytes past the end of the message", out->length);
        return false;
    }
    out->value = word_at(r, r->next++);
    out->data = at_address ? NULL : (const char *)(r->data + r->next * 8);
    r->next += data_words;
    return true;
}

bool devrt_output_first_at_address(const uint8_t *data, size_t length, uint64_t *address,
                                   uint32_t *bytes)
{
    struct reader r = {data, length / 8, 0};
    struct record rec;
    char why[128];
    if (!next_record(&r, &rec, why, sizeof why) || rec.tag != DEVRT_OUTPUT_BYTES ||
        !(rec.flags & DEVRT_OUTPUT_AT_ADDRESS) || rec.value + rec.length < rec.value)
        return false;
    *address = rec.value;
    *bytes = rec.length;
    return true;
}

int devrt_output_render(uint32_t opcode, const uint8_t *data, size_t length,
                        const struct devrt_output_source *source, struct devrt_text *out, char *why,
                        size_t why_size)
{
    struct reader r = {data, length / 8, 0};
    struct record rec;
    why[0] = '\0';
    if (opcode == DEVRT_RPC_OUTPUT) {
        /* Checked whole before anything is printed: a broken message prints nothing. */
        size_t start = out->length;
        while (next_record(&r, &rec, why, why_size) && rec.tag != DEVRT_OUTPUT_END) {
            if (rec.tag != DEVRT_OUTPUT_BYTES) {
                snprintf(why, why_size, "a %u record in raw output", rec.tag);
                break;
            }
            if (rec.flags & DEVRT_OUTPUT_AT_ADDRESS) {
                rec.data = source ? source->fetch(source, rec.value, rec.length) : NULL;
                if (!rec.data) {
                    snprintf(why, why_size, "cannot read the %u bytes at 0x%llx it wrote",
                             rec.length, (unsigned long long)rec.value);
                    break;
                }
            }
            if (rec.flags & DEVRT_OUTPUT_NULL)
                devrt_text_append(out, "(null)", 6);
            else
                devrt_text_append(out, rec.data, rec.length);
        }
        if (why[0]) {
            out->length = start;
            if (out->data)
                out->data[start] = '\0';
            return -1;
        }
        return 0;
    }

    if (!next_record(&r, &rec, why, why_size))
        return -1;
    if (rec.tag != DEVRT_OUTPUT_FORMAT) {
        snprintf(why, why_size, "a printf message that does not start with its format");
        return -1;
    }
    struct record format = rec;
    struct devrt_format_arg args[DEVRT_FORMAT_MAX_ARGS];
    size_t count = 0;
    for (;;) {
        if (!next_record(&r, &rec, why, why_size))
            return -1;
        if (rec.tag == DEVRT_OUTPUT_END)
            break;
        if (rec.tag == DEVRT_OUTPUT_FORMAT || rec.tag == DEVRT_OUTPUT_BYTES) {
            snprintf(why, why_size, "a %u record among printf arguments", rec.tag);
            return -1;
        }
        if (count == DEVRT_FORMAT_MAX_ARGS) {
            snprintf(why, why_size, "more than %u printf arguments", DEVRT_FORMAT_MAX_ARGS);
            return -1;
        }
        args[count++] =
            (struct devrt_format_arg){rec.tag, rec.flags, rec.value, rec.data, rec.length};
    }
    if (format.flags & DEVRT_OUTPUT_NULL) {
        devrt_text_append(out, "(null)", 6);
        snprintf(why, why_size, "the format is a null pointer");
        return -1;
    }
    int status = devrt_format(out, format.data, format.length, args, count, why, why_size);
    if (status == 0 && (format.flags & DEVRT_OUTPUT_TRUNCATED)) {
        snprintf(why, why_size, "the format was cut at %u bytes (too long, or unterminated)",
                 DEVRT_PRINTF_MAX_STRING);
        status = -1;
    }
    return status;
}
