/* calls.c: a candidate that makes one kind of system call N times, for
 * measuring what a supervisor adds per call (bench/bench.py).
 *   calls open   N [PATH]  open(PATH, O_RDONLY) + close: N audited opens
 *   calls stat   N [PATH]  stat(PATH): N calls vigil does not stop
 *   calls getpid N         getpid(): N calls vigil does not stop
 * PATH defaults to $CALLS_PATH, else to a file every Debian system has.
 * The benchmark never names it on the command line: vigil allows files named
 * there without consulting the rules, and the loop must take the path every
 * other open takes.
 * Built static by bench/run.sh so that start-up makes no loader opens: the
 * only audited calls are the loop's and the exec that started it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int loop_open(long n, const char *path)
{
    for (long i = 0; i < n; i++) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            perror(path);
            return 1;
        }
        close(fd);
    }
    return 0;
}

static int loop_stat(long n, const char *path)
{
    struct stat st;
    for (long i = 0; i < n; i++)
        if (stat(path, &st) < 0) {
            perror(path);
            return 1;
        }
    return 0;
}

static int loop_getpid(long n)
{
    /* The raw call: a libc that caches the pid would make no call at all. */
    for (long i = 0; i < n; i++)
        syscall(SYS_getpid);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: calls open|stat|getpid N [PATH]\n");
        return 2;
    }
    char *end;
    long n = strtol(argv[2], &end, 10);
    if (*end || n < 0) {
        fprintf(stderr, "calls: bad count '%s'\n", argv[2]);
        return 2;
    }
    const char *path = argc > 3 ? argv[3] : getenv("CALLS_PATH");
    if (!path)
        path = "/usr/lib/os-release";
    if (!strcmp(argv[1], "open"))
        return loop_open(n, path);
    if (!strcmp(argv[1], "stat"))
        return loop_stat(n, path);
    if (!strcmp(argv[1], "getpid"))
        return loop_getpid(n);
    fprintf(stderr, "calls: unknown mode '%s'\n", argv[1]);
    return 2;
}
