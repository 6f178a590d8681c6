/* Text that grows: the formatter's output and the server's output units. */
#include <stdlib.h>
#include <string.h>

#include "text.h"

bool devrt_text_reserve(struct devrt_text *text, size_t size)
{
    if (text->failed)
        return false;
    if (size > text->capacity) {
        size_t capacity = text->capacity ? text->capacity : 256;
        while (capacity < size)
            capacity *= 2;
        char *grown = realloc(text->data, capacity);
        if (!grown) {
            text->failed = true;
            return false;
        }
        text->data = grown;
        text->capacity = capacity;
    }
    return true;
}

void devrt_text_append(struct devrt_text *text, const char *data, size_t size)
{
    if (size == 0 || !devrt_text_reserve(text, text->length + size + 1))
        return;
    memcpy(text->data + text->length, data, size);
    text->length += size;
    text->data[text->length] = '\0';
}

void devrt_text_free(struct devrt_text *text)
{
    free(text->data);
    *text = (struct devrt_text){0};
}
