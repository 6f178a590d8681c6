/*
 * A vendor library for vendor_library_test.c: the complete one (VENDOR_COMPLETE) has every
 * function the test asks for; the partial one lacks vendor_b and vendor_d, which are
 * required, and vendor_e, which is optional.
 */
int vendor_a(void);
int vendor_a(void)
{
    return 1;
}

int vendor_c(void);
int vendor_c(void)
{
    return 3;
}

#ifdef VENDOR_COMPLETE
int vendor_b(void);
int vendor_b(void)
{
    return 2;
}

int vendor_d(void);
int vendor_d(void)
{
    return 4;
}

int vendor_e(void);
int vendor_e(void)
{
    return 5;
}
#endif
