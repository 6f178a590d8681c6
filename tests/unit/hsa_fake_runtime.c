/*
 * A stand-in for libhsa-runtime64.so.1 (same file name and soname, in a directory of its own)
 * with only a few of the functions devrt needs, like a runtime too old for it. Put first on
 * LD_LIBRARY_PATH, it shows that opening an HSA device then names the file and the functions
 * it lacks. Another test library links against it to need "libhsa-runtime64.so.1" on purpose.
 */
#include <hsa/hsa.h>

hsa_status_t hsa_init(void)
{
    return HSA_STATUS_ERROR;
}

hsa_status_t hsa_shut_down(void)
{
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_status_string(hsa_status_t status, const char **text)
{
    (void)status;
    *text = "a fake HSA runtime";
    return HSA_STATUS_SUCCESS;
}
