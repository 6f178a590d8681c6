/* Reading an image file whole, for the backends that load images from memory. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime.h"

char *devrt_read_image(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: cannot open", path);
        return NULL;
    }
    long length = fseek(file, 0, SEEK_END) == 0 ? ftell(file) : -1;
    rewind(file);
    /* One byte more, always NUL: PTX is text and its loader wants it terminated. */
    char *image = length > 0 ? malloc((size_t)length + 1) : NULL;
    if (image && fread(image, 1, (size_t)length, file) == (size_t)length) {
        image[length] = '\0';
        *size = (size_t)length;
    } else {
        free(image);
        image = NULL;
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: cannot read (empty or unreadable)", path);
    }
    fclose(file);
    return image;
}
