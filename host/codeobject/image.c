/* Reading an image file whole, for the backends that load images from memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codeobject.h"

char *devrt_read_image(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat info;
    char *image = NULL;
    if (fstat(fileno(file), &info) != 0)
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(info.st_mode))
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: %s", path,
                   S_ISDIR(info.st_mode) ? strerror(EISDIR) : "not a regular file");
    else if (info.st_size == 0)
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: empty file", path);
    /* One byte more, always NUL: PTX is text and its loader wants it terminated. */
    else if (!(image = malloc((size_t)info.st_size + 1)))
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: no memory for its %lld bytes", path,
                   (long long)info.st_size);
    else if (fread(image, 1, (size_t)info.st_size, file) != (size_t)info.st_size) {
        devrt_fail(DEVRT_ERROR_IMAGE, "%s: %s", path,
                   ferror(file) ? strerror(errno) : "shorter than its size; changed meanwhile?");
        free(image);
        image = NULL;
    } else {
        image[info.st_size] = '\0';
        *size = (size_t)info.st_size;
    }
    fclose(file);
    return image;
}
