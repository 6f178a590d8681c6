/*
 * Loads a host image the way a runtime loads a sysimage, with RTLD_NOW: every undefined
 * symbol must resolve now. Then calls its host code, and with --call-device one of its
 * device helpers, which the stubs must stop with a message naming the function.
 *
 *   load IMAGE [--call-device]
 * Exit status: 0 loaded and the host code ran; 1 the image did not load; 2 usage. A called
 * stub aborts (SIGABRT).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--call-device"))) {
        fprintf(stderr, "usage: load IMAGE [--call-device]\n");
        return 2;
    }
    void *image = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!image) {
        fprintf(stderr, "load: %s\n", dlerror());
        return 1;
    }
    int (*answer)(void) = (int (*)(void))dlsym(image, "image_answer");
    if (!answer) {
        fprintf(stderr, "load: no image_answer in %s\n", argv[1]);
        return 1;
    }
    printf("loaded %s; the host code answers %d\n", argv[1], answer());
    if (argc == 3) {
        void *(*buffer)(size_t) = (void *(*)(size_t))dlsym(image, "image_device_buffer");
        if (buffer)
            buffer(16);
        fprintf(stderr, "load: the device helper returned on the host\n");
        return 1;
    }
    dlclose(image);
    return 0;
}
