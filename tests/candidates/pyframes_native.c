/* Candidate for tests/test_pyframes.py: a C program's refused open has a
 * native stack and no Python frames. */
#include <fcntl.h>
#include <stdio.h>

int main(void)
{
    int fd = open("/pyframes/native", O_RDONLY);
    printf("native done %d\n", fd);
    return 0;
}
