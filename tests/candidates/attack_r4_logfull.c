/* attack_r4_logfull.c: opens a file over and over, saying after each one
 * that worked "opened N" (write(2), unbuffered), while vigil's log fills
 * its file system.  A call whose record cannot be written must never be
 * answered: every open the candidate saw work has its record in the log. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define TRIES 100000

int main(void)
{
    for (long i = 1; i <= TRIES; i++) {
        int fd = open("/etc/hostname", O_RDONLY);
        if (fd < 0)
            return 1;
        close(fd);
        char line[32];
        int n = snprintf(line, sizeof line, "opened %ld\n", i);
        if (write(1, line, (size_t)n) != n)
            return 1;
    }
    return 0;
}
