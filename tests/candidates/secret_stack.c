/* secret_stack.c: read a secret through a chain of named functions, so
 * that the refusal's stack in the log can be checked for them; then open
 * an allowed file through another named function. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int try_read_secret(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd >= 0)
        close(fd);
    return fd;
}

__attribute__((noinline)) int steal_credentials(void)
{
    return try_read_secret("/root/.ssh/id_rsa");
}

__attribute__((noinline)) int read_allowed_file(void)
{
    int fd = open("/etc/hostname", O_RDONLY);
    if (fd >= 0)
        close(fd);
    return fd;
}

int main(void)
{
    printf("secret %s\n", steal_credentials() < 0 ? "refused" : "READ");
    printf("allowed %s\n", read_allowed_file() < 0 ? "refused" : "read");
    return 0;
}
