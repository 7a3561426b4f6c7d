/* attack_r4_lease.c: an open that sleeps on a regular file.  A child
 * holds a read lease on /tmp/work/L; the parent opens L for writing
 * (argv[1]: "trunc" adds O_TRUNC; "truncate": truncate(2) instead), which breaks the lease: the kernel
 * signals the holder (SIGIO) and the open waits until the holder lets
 * go.  The holder, before it lets go, makes one ordinary call (an open
 * of /etc/passwd; not with argv[2] "quiet") that vigil must still serve
 * while the parent's open waits; if it cannot, both wait out the
 * kernel's lease-break-time.
 * Prints "open: OK|ERRNO after N ms". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t broken;

static void on_break(int sig)
{
    (void)sig;
    broken = 1;
}

static int hold(int ready, int quiet)
{
    struct sigaction sa = {.sa_handler = on_break};
    int fd = open("/tmp/work/L", O_RDONLY);
    if (sigaction(SIGIO, &sa, NULL) < 0 || fd < 0 || fcntl(fd, F_SETLEASE, F_RDLCK) < 0) {
        perror("lease");
        return 3;
    }
    if (write(ready, "r", 1) != 1)
        return 3;
    while (!broken)
        pause();
    int other = quiet ? -1 : open("/etc/passwd", O_RDONLY); /* served while the writer waits? */
    if (other >= 0)
        close(other);
    return fcntl(fd, F_SETLEASE, F_UNLCK) < 0 ? 3 : 0;
}

static long ms_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(int argc, char **argv)
{
    int flags = O_WRONLY | (argc > 1 && !strcmp(argv[1], "trunc") ? O_TRUNC : 0);
    int fd = open("/tmp/work/L", O_CREAT | O_WRONLY, 0600);
    int p[2];
    if (fd < 0 || close(fd) < 0 || pipe(p) < 0)
        return 2;
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0)
        _exit(hold(p[1], argc > 2 && !strcmp(argv[2], "quiet")));
    char c;
    if (read(p[0], &c, 1) != 1)
        return 2;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (argc > 1 && !strcmp(argv[1], "truncate"))
        fd = truncate("/tmp/work/L", 0) < 0 ? -1 : 0;
    else
        fd = open("/tmp/work/L", flags);
    printf("open: %s after %ld ms\n", fd >= 0 ? "OK" : strerrorname_np(errno), ms_since(&t0));
    fflush(stdout);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 4;
}
