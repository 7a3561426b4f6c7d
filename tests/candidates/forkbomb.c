/* forkbomb.c: every process forks as fast as it can, forever.  Children
 * that cannot fork any more just wait. */
#include <unistd.h>

int main(void)
{
    for (;;) {
        if (fork() < 0)
            pause();
    }
}
