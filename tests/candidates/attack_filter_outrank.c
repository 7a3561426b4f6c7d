/* attack_filter_outrank.c MODE PORT: a filter of the candidate's own (installed
 * with TSYNC, so a worker thread made before has it too) that answers for
 * vigil's calls:
 *   allow, log          RET_ALLOW / RET_LOG for every call
 *   trace0, trace1, traceffff   RET_TRACE with that data for every call
 *   errno               RET_ERRNO(EDOM) for getppid, io_uring_setup, ioctl
 *   trap                RET_TRAP for the same three
 * The worker then tries the baseline's calls, calls the filter stops only
 * with some arguments (with harmless ones), and audited calls (connect to
 * 127.0.0.1:PORT); one result line each, then one "sigsys nr=N" line per
 * SIGSYS its handler got. */
#include "attack_filter.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define EVERY_CALL(act) { NATIVE_ONLY, RET(act) }
#define SOME_CALLS(act)                                                                \
    {                                                                                  \
        NATIVE_ONLY, LOAD(nr), IF_EQ_RET(SYS_getppid, act),                            \
            IF_EQ_RET(SYS_io_uring_setup, act), IF_EQ_RET(SYS_ioctl, act),             \
            RET(SECCOMP_RET_ALLOW)                                                     \
    }

static struct sock_filter f_allow[] = EVERY_CALL(SECCOMP_RET_ALLOW);
static struct sock_filter f_log[] = EVERY_CALL(SECCOMP_RET_LOG);
static struct sock_filter f_trace0[] = EVERY_CALL(SECCOMP_RET_TRACE | 0);
static struct sock_filter f_trace1[] = EVERY_CALL(SECCOMP_RET_TRACE | 1);
static struct sock_filter f_traceffff[] = EVERY_CALL(SECCOMP_RET_TRACE | 0xffff);
static struct sock_filter f_errno[] = SOME_CALLS(SECCOMP_RET_ERRNO | EDOM);
static struct sock_filter f_trap[] = SOME_CALLS(SECCOMP_RET_TRAP);

#define MODE(name) { #name, f_##name, sizeof f_##name / sizeof f_##name[0] }
static const struct {
    const char *name;
    struct sock_filter *insns;
    unsigned short n;
} modes[] = {
    MODE(allow), MODE(log), MODE(trace0), MODE(trace1), MODE(traceffff), MODE(errno), MODE(trap),
};

static volatile sig_atomic_t sigsys_nr[16], nsigsys;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (nsigsys < 16)
        sigsys_nr[nsigsys++] = si->si_syscall;
}

static long clone_untraced(void)
{
    long r = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
    if (r == 0)
        _exit(0);
    if (r > 0)
        waitpid((pid_t)r, NULL, 0);
    return r;
}

static long connect_port(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    long r = connect(s, (struct sockaddr *)&a, sizeof a);
    int saved = errno;
    close(s);
    errno = saved;
    return r;
}

static int port;

static void *worker(void *arg)
{
    pthread_barrier_t *ready = arg;
    pthread_barrier_wait(ready); /* made before the filter, */
    pthread_barrier_wait(ready); /* which TSYNC gave it too */
    char params[120] = {0}, c = 'x';
    int p[2];
    if (pipe(p) < 0)
        exit(2);
    /* the baseline's */
    report("io_uring_setup", syscall(SYS_io_uring_setup, 8, params));
    report("ptrace", syscall(SYS_ptrace, PTRACE_PEEKDATA, 1, 0, 0));
    report("tiocsti", ioctl(0, TIOCSTI, &c));
    report("socket_netlink", socket(AF_NETLINK, SOCK_RAW, 0));
    report("unshare_user", unshare(CLONE_NEWUSER));
    report("clone_untraced", clone_untraced());
    report("seccomp_listener", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                       SECCOMP_FILTER_FLAG_NEW_LISTENER, NULL));
    /* conditional rows with harmless arguments, and a call with no row */
    int n = 0;
    report("fionread", ioctl(p[0], FIONREAD, &n));
    report("socket_unix", socket(AF_UNIX, SOCK_STREAM, 0));
    report("getppid", syscall(SYS_getppid));
    /* audited */
    report("open_secret", open(SECRET, O_RDONLY));
    report("open_hostname", open("/etc/hostname", O_RDONLY));
    report("create_work", open("outrank.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644));
    report("connect", connect_port(port));
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 3)
        return 2;
    port = atoi(argv[2]);
    struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
    sigaction(SIGSYS, &sa, NULL);
    pthread_barrier_t ready;
    pthread_barrier_init(&ready, NULL, 2);
    pthread_t w;
    if (pthread_create(&w, NULL, worker, &ready) != 0)
        return 2;
    pthread_barrier_wait(&ready);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (!strcmp(argv[1], modes[i].name))
            report("install", install_filter(modes[i].insns, modes[i].n,
                                             SECCOMP_FILTER_FLAG_TSYNC));
    pthread_barrier_wait(&ready);
    pthread_join(w, NULL);
    for (int i = 0; i < nsigsys; i++)
        printf("sigsys nr=%d\n", (int)sigsys_nr[i]);
    return 0;
}
