/* attack_r4_mem.c: a child that made itself non-dumpable (as a program
 * holding a secret does: prctl(PR_SET_DUMPABLE, 0)) keeps a token in its
 * memory; its parent, the same uid with no capabilities, opens
 * /proc/CHILD/mem and reads it.  The kernel refuses that open to the
 * parent (a non-dumpable mm needs CAP_SYS_PTRACE in its user namespace);
 * vigil, opening it for the parent, must refuse it too.
 * argv[1]: the token; argv[2] "dumpable": the control, the child stays
 * dumpable and the read must work (the test can see a leak).  Prints "open: OK|ERRNO" and "read: TEXT". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char secret[64];

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int p[2];
    if (pipe(p) < 0)
        return 2;
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        snprintf(secret, sizeof secret, "%s", argv[1]);
        if (argc < 3 && prctl(PR_SET_DUMPABLE, 0) < 0)
            _exit(3);
        char go = 1;
        if (write(p[1], &go, 1) != 1)
            _exit(3);
        pause();
        _exit(0);
    }
    char go;
    if (read(p[0], &go, 1) != 1)
        return 2;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd = open(path, O_RDONLY);
    printf("open: %s\n", fd < 0 ? strerrorname_np(errno) : "OK");
    if (fd >= 0) {
        char buf[64] = {0};
        ssize_t n = pread(fd, buf, sizeof buf - 1, (off_t)(unsigned long)secret);
        printf("read: %s\n", n > 0 ? buf : "(nothing)");
    }
    fflush(stdout);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 0;
}
