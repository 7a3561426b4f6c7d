/* attack_r5_pid1.c WORK MARKER: the calls that run unrecorded (harmless
 * rows) and name another process, aimed at the sandbox's pid 1 (vigil's
 * init, which holds vigil's own files: the log, vigil's stdout) and at a
 * sibling.  One line per attempt, "NAME ok" or "NAME E<errno>"; then
 *   init-state C      pid 1's state letter after every signal was sent
 * and a daemon (its argv has MARKER) is left running; the candidate waits
 * for WORK/go (made by the test once it has looked at pid 1 from the
 * host), then exits without waiting for the daemon. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void show(const char *name, long r)
{
    if (r < 0)
        printf("%s E%d\n", name, errno);
    else
        printf("%s ok\n", name);
}

#define FIRST_NS (100 * 1000 * 1000)
#define TICK_NS (10 * 1000 * 1000)
#define SETTLE_TICKS 500 /* 5 s */

static char init_state(void)
{
    char buf[256] = "";
    int fd = open("/proc/1/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return '?';
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    char name[64], go[4096];
    snprintf(go, sizeof go, "%s/go", argv[1]);

    /* pid 1's files: every fd number it may hold */
    int p1 = (int)syscall(SYS_pidfd_open, 1, 0);
    show("pidfd-open-1", p1);
    int stolen = 0;
    for (int fd = 0; fd < 300 && p1 >= 0; fd++) {
        int got = (int)syscall(SYS_pidfd_getfd, p1, fd, 0);
        if (got >= 0) {
            snprintf(name, sizeof name, "getfd-1-%d", fd);
            show(name, got);
            /* what an attacker does with the log: a forged record */
            (void)!write(got, "\xc0\xc1" "forged", 8);
            stolen++;
        } else if (errno != EBADF && fd < 3) {
            snprintf(name, sizeof name, "getfd-1-%d", fd);
            show(name, -1);
        }
    }
    printf("stolen %d\n", stolen);
    show("kcmp-1", syscall(SYS_kcmp, getpid(), 1, KCMP_FILE, 1, 1));
    show("kcmp-1-vm", syscall(SYS_kcmp, getpid(), 1, KCMP_VM, 0, 0));
    struct iovec iov = {.iov_base = (void *)0x400000, .iov_len = 4096};
    show("process-madvise-1", p1 < 0 ? -1 : syscall(SYS_process_madvise, p1, &iov, 1, MADV_COLD, 0));
    char buf[64];
    struct iovec mine = {.iov_base = buf, .iov_len = sizeof buf};
    show("process-vm-readv-1", syscall(SYS_process_vm_readv, 1, &mine, 1, &iov, 1, 0));
    show("ptrace-attach-1", ptrace(PTRACE_ATTACH, 1, 0, 0));
    show("ptrace-seize-1", ptrace(PTRACE_SEIZE, 1, 0, 0));
    void *head;
    size_t len;
    show("get-robust-list-1", syscall(SYS_get_robust_list, 1, &head, &len));
    void *page = (void *)0x400000;
    int node = 0, status;
    show("move-pages-1", syscall(SYS_move_pages, 1, 1, &page, &node, &status, 0));
    unsigned long mask = 1;
    show("migrate-pages-1", syscall(SYS_migrate_pages, 1, 8 * sizeof mask, &mask, &mask));
    show("process-mrelease-1", p1 < 0 ? -1 : syscall(SYS_process_mrelease, p1, 0));
    int mem = open("/proc/1/mem", O_RDONLY | O_CLOEXEC);
    show("open-mem-1", mem);
    int env = open("/proc/1/environ", O_RDONLY | O_CLOEXEC);
    show("open-environ-1", env);

    /* pid 1's scheduling and limits: the kernel's own checks (uid, or
     * CAP_SYS_NICE / CAP_SYS_RESOURCE), nothing of vigil's */
    struct rlimit rl;
    show("prlimit-get-1", prlimit(1, RLIMIT_NOFILE, NULL, &rl));
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    show("setaffinity-1", sched_setaffinity(1, sizeof one, &one));
    show("setpriority-1", setpriority(PRIO_PROCESS, 1, 19));
    show("ioprio-set-1", syscall(SYS_ioprio_set, 1, 1, (3 << 13) | 7)); /* idle class */

    /* a sibling: no ptrace of it, no memory of it (the baseline) */
    pid_t kid = fork();
    if (kid == 0) {
        pause();
        _exit(0);
    }
    show("ptrace-attach-sibling", ptrace(PTRACE_ATTACH, kid, 0, 0));
    show("ptrace-seize-sibling", ptrace(PTRACE_SEIZE, kid, 0, 0));
    show("process-vm-readv-sibling", syscall(SYS_process_vm_readv, kid, &mine, 1, &iov, 1, 0));
    int pk = (int)syscall(SYS_pidfd_open, kid, 0);
    show("getfd-sibling-1", pk < 0 ? -1 : syscall(SYS_pidfd_getfd, pk, 1, 0));
    show("prctl-traceme", ptrace(PTRACE_TRACEME, 0, 0, 0));
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);

    /* stop or kill pid 1: it would leave the daemon below behind, or the
     * run without an end */
    const int sigs[] = {SIGSTOP, SIGTSTP, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGSEGV,
                               SIGUSR1, SIGALRM, SIGCHLD, 32, 33, 64, SIGKILL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        snprintf(name, sizeof name, "kill-1-%d", sigs[i]);
        show(name, kill(1, sigs[i]));
    }
    show("tgkill-1-stop", syscall(SYS_tgkill, 1, 1, SIGSTOP));
    show("pidfd-send-signal-1-kill", p1 < 0 ? -1 : syscall(SYS_pidfd_send_signal, p1, SIGKILL, NULL, 0));
    show("pidfd-send-signal-1-stop", p1 < 0 ? -1 : syscall(SYS_pidfd_send_signal, p1, SIGSTOP, NULL, 0));
    /* vigil traces pid 1 for its life (its exits, its children): a signal
     * sent to it is a trace stop ('t') until vigil lets it go, which under
     * load takes a while.  A stop the signals caused would last: the state
     * after it is given 5 s to settle is the one that counts. */
    struct timespec tick = {0, TICK_NS}, first = {0, FIRST_NS};
    nanosleep(&first, NULL); /* the signals take effect */
    char st = init_state();
    for (int i = 0; i < SETTLE_TICKS && st == 't'; i++) {
        nanosleep(&tick, NULL);
        st = init_state();
    }
    printf("init-state %c\n", st);

    /* a daemon of its own session, left running */
    pid_t d = fork();
    if (d == 0) {
        setsid();
        char *const av[] = {argv[2], "600", NULL}; /* the marker as its name */
        execv("/bin/sleep", av);
        _exit(127);
    }
    printf("daemon %d\n", (int)d);
    printf("ready\n");
    for (int i = 0; i < 400; i++) { /* 20 s at most */
        struct stat st;
        if (stat(go, &st) == 0)
            break;
        struct timespec t = {0, 50 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    printf("done\n");
    return 0;
}
