/* A module that does not link devrt: attaching to it is refused (tests/attach). */
int plain_kernel(int x);

int plain_kernel(int x)
{
    return x + 1;
}
