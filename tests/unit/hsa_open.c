/*
 * Opens HSA device 0 the way the hardware tests do (harness_open), so that the unit tests can
 * check what a machine without an AMD GPU, or without the HSA runtime, makes of it: the skip
 * status and a message saying why, never a crash. Exits 0 when the device opens, 77 when the
 * backend has no device (the message on stdout), 1 on any other failure.
 */
#include <stdio.h>

#include "harness.h"

int main(void)
{
    devrt_device *device = NULL;
    int status = harness_open(DEVRT_BACKEND_HSA, NULL, NULL, &device, NULL);
    if (status == 0) {
        printf("opened HSA device 0\n");
        devrt_device_close(device);
    }
    return status;
}
