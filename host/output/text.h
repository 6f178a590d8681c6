/* Text that grows, shared by the formatter, the message parser and the server's output. */
#ifndef DEVRT_TEXT_H
#define DEVRT_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Text that grows; after an allocation failure it stays as it was and `failed` is set. */
struct devrt_text {
    char *data;
    size_t length;
    size_t capacity;
    bool failed;
};

/* Room for SIZE bytes in all; false (and `failed` set) without the memory. */
bool devrt_text_reserve(struct devrt_text *text, size_t size);
void devrt_text_append(struct devrt_text *text, const char *data, size_t size);
void devrt_text_free(struct devrt_text *text);

#endif
