/* pays_refuse_loop.c PATH SECONDS: make vigil refuse one open after
 * another for SECONDS of wall time, from deep in a call stack (vigil
 * unwinds it for each refusal's record: the most work for the least of
 * the candidate's).  Prints "go" when the loop starts
 * and "refused N" when it ends (each line written at once), then waits a
 * second so that vigil's CPU time can be read from outside before it
 * ends. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Deeper than the frames vigil keeps of a stack (32). */
#define DEPTH 40

static void loop(const char *path, double until, int depth)
{
    if (depth < DEPTH) {
        loop(path, until, depth + 1);
        return;
    }
    long refused = 0, opened = 0;
    while (now() < until) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            close(fd);
            opened++;
        } else {
            refused++;
        }
    }
    printf("refused %ld opened %ld\n", refused, opened);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s PATH SECONDS\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    double until = now() + atof(argv[2]);
    printf("go\n");
    loop(argv[1], until, 0);
    sleep(1);
    return 0;
}
