/* egress.c: see egress.h. */
#include "net/egress.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/syscalls.h"

/* How long pasta may take to configure the namespace (it takes tens of
 * milliseconds). */
#define PASTA_READY_MS 5000
#define PID_LINE 32
/* pasta's descriptors: 3 its "pid file" (the ready pipe), then the
 * sandbox's user and network namespaces (see pasta_argv). */
#define READY_FD 3
#define NS_USER_FD 4
#define NS_NET_FD 5
#define NS_USER_PATH "/proc/self/fd/4"
#define NS_NET_PATH "/proc/self/fd/5"
/* A kept pasta's parent, as pasta sees it; the keeper's exit status when
 * a signal ended pasta (as a shell's). */
#define KEEPER_PID 1
#define KILLED_BASE 128

static const char *pasta_path(void)
{
    const char *p = getenv("VIGIL_PASTA");
    return p && p[0] == '/' ? p : VG_PASTA;
}

int vg_egress_check(struct vg_err *err)
{
    const char *p = pasta_path();
    if (access(p, X_OK) == 0)
        return 0;
    vg_errf(err, "the policy allows network access beyond the sandbox, which needs pasta "
                 "(Debian package passt): %s: %s", p, strerror(errno));
    return -1;
}

/* The arguments: see egress.h for why each. */
static void pasta_argv(const char **av, size_t cap, char *pidfile)
{
    static const char *const fixed[] = {
        "-f", "-q", "--config-net", "-t", "none", "-u", "none", "-T", "none", "-U", "none",
        "--no-map-gw", "--no-dhcp", "--no-dhcpv6", "--no-ra", "-D", "none", "-S", "none",
    };
    size_t n = 0;
    av[n++] = "pasta";
    for (size_t i = 0; i < VG_ARRAY_LEN(fixed) && n + 6 < cap; i++)
        av[n++] = fixed[i];
    /* As root pasta would switch to nobody before it joins the sandbox's
     * user namespace, which nobody cannot enter (root owns it); it stays
     * uid 0 but holds capabilities only in that namespace (see docs). */
    if (geteuid() == 0) {
        av[n++] = "--runas";
        av[n++] = "0";
    }
    av[n++] = "-P";
    av[n++] = pidfile;
    /* The namespaces as vigil opened them (NS_USER_FD, NS_NET_FD), not by
     * the sandbox's pid: with --host-uid the pid 1 is the run's uid's, whose
     * /proc/PID/ns pasta (uid 0 without CAP_SYS_PTRACE) may not open.
     * Joining the user namespace needs CAP_SYS_ADMIN over it, which pasta
     * keeps as uid 0.  Not bound to a path, so nothing for it to watch: it
     * ends with the sandbox (the watcher) or with vigil. */
    av[n++] = "--userns";
    av[n++] = NS_USER_PATH;
    av[n++] = "--netns";
    av[n++] = NS_NET_PATH;
    av[n++] = "--no-netns-quit";
    av[n] = NULL;
}

/* pasta's descriptors in place: stdin and stdout /dev/null, stderr the
 * error pipe, then READY_FD, NS_USER_FD, NS_NET_FD; all else closed.
 * Each source is first copied above them, so that no dup2 lands on a
 * source still to be placed, and no dup2 onto itself keeps its
 * close-on-exec. */
static int place_fds(int null, int err_w, int ready_w, int user, int net)
{
    const int from[] = {null, null, err_w, ready_w, user, net};
    int high[VG_ARRAY_LEN(from)];
    for (size_t i = 0; i < VG_ARRAY_LEN(from); i++)
        if ((high[i] = fcntl(from[i], F_DUPFD_CLOEXEC, NS_NET_FD + 1)) < 0)
            return -1;
    for (int to = 0; to < (int)VG_ARRAY_LEN(from); to++)
        if (dup2(high[to], to) < 0)
            return -1;
    return (int)syscall(VG_NR_close_range, NS_NET_FD + 1, ~0u, 0);
}

/* parent: vigil, or the keeper (pid 1 of its namespace, as seen here). */
static _Noreturn void pasta_child(const struct vg_egress *eg, int ready_w, int err_w, pid_t init,
                                  pid_t parent)
{
    /* Dies with its parent: set before exec, kept by it (pasta keeps its
     * uid), though not by its join of a namespace another uid owns (then
     * the keeper's namespace takes it along).  If the parent is already
     * gone, do not start at all. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
        _exit(127);
    /* The run's quota pays for what pasta forwards: it joins the run's
     * cpu group before its exec (while the group's fd is still open).  A
     * move the kernel refuses leaves it where vigil's threads would stay
     * too: outside, as in a run without the group. */
    if (eg->bill_self)
        (void)eg->bill_self();
    /* Opened here, as vigil's uid 0 (which may), from pid 1 that is
     * vigil's child and so cannot be replaced while it lives on. */
    char path[PID_LINE + 16];
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)init);
    int user = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)init);
    int net = open(path, O_RDONLY | O_CLOEXEC);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (user < 0 || net < 0 || null < 0 || place_fds(null, err_w, ready_w, user, net) < 0)
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    char pidfile[] = "/dev/fd/3";
    const char *av[40];
    pasta_argv(av, VG_ARRAY_LEN(av), pidfile);
    char *const env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    execve(pasta_path(), (char *const *)av, env);
    _exit(127);
}

/* pasta writes its pid to the "pid file" once the namespace is set up:
 * that line is the sign it is ready; EOF is its failure. */
static int wait_ready(int fd, int timeout_ms)
{
    char line[PID_LINE];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, timeout_ms);
    if (r <= 0)
        return -1;
    ssize_t n = read(fd, line, sizeof line - 1);
    return n > 0 ? 0 : -1;
}

static void drain_err(struct vg_egress *eg)
{
    char buf[512];
    ssize_t n = read(eg->err_fd, buf, sizeof buf - 1);
    if (n <= 0)
        return;
    buf[n] = 0;
    /* the last complete line that is not pasta's syslog complaint */
    char *save = NULL;
    for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        if (strncmp(l, "Failed to send", 14))
            snprintf(eg->last_err, sizeof eg->last_err, "%s", l);
}

static void *watch(void *arg)
{
    struct vg_egress *eg = arg;
    struct pollfd p[] = {{.fd = eg->init_pidfd, .events = POLLIN},
                         {.fd = eg->pidfd, .events = POLLIN},
                         {.fd = eg->stop_fd, .events = POLLIN},
                         {.fd = eg->err_fd, .events = POLLIN}};
    for (;;) {
        if (poll(p, VG_ARRAY_LEN(p), -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[3].revents & POLLIN)
            drain_err(eg);
        if (p[3].revents & (POLLHUP | POLLERR))
            p[3].fd = -1;
        if (p[0].revents || p[2].revents)
            break;
        if (p[1].revents) {
            /* pasta is gone while the sandbox lives: from here on the
             * namespace has no route out. */
            if (!atomic_load(&eg->died_mono_ns))
                atomic_store(&eg->died_mono_ns, vg_now_mono_ns());
            p[1].fd = -1;
        }
    }
    /* The sandbox is gone (or the run stops): so is its way out.  The
     * engine, which waits for all of vigil's children, reaps it. */
    syscall(VG_NR_pidfd_send_signal, eg->pidfd, SIGKILL, NULL, 0);
    return NULL;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

void vg_egress_stop(struct vg_egress *eg)
{
    if (eg->watching) {
        uint64_t one = 1;
        if (write(eg->stop_fd, &one, sizeof one) != sizeof one)
            syscall(VG_NR_pidfd_send_signal, eg->pidfd, SIGKILL, NULL, 0);
        pthread_join(eg->watcher, NULL);
        eg->watching = false;
    } else if (eg->pidfd >= 0) {
        syscall(VG_NR_pidfd_send_signal, eg->pidfd, SIGKILL, NULL, 0);
    }
    if (eg->pidfd >= 0) {
        /* Reaped here unless the engine did (then ECHILD). */
        siginfo_t si;
        while (waitid(P_PIDFD, (id_t)eg->pidfd, &si, WEXITED) < 0 && errno == EINTR)
            ;
    }
    close_fd(&eg->pidfd);
    close_fd(&eg->init_pidfd);
    close_fd(&eg->err_fd);
    close_fd(&eg->stop_fd);
    close_fd(&eg->ready_fd);
    eg->pid = 0;
}

/* A kept pasta (vg_egress_start's owner): its keeper is pid 1 of a pid
 * namespace of its own, holding pasta as its one child.  The keeper joins
 * nothing, so it keeps its parent-death signal: when vigil dies, so does
 * the keeper, and the kernel kills what is left in its namespace.  It
 * holds no descriptor of the pipes (pasta's ready pipe must reach EOF when
 * pasta fails) and ends as pasta does, so vigil's pidfd of the keeper is
 * one of pasta.  A raw clone's child of a threaded vigil: only calls that
 * take no lock of libc's, here and in pasta_child. */
static _Noreturn void keeper(const struct vg_egress *eg, int ready_w, int err_w, pid_t init,
                             int vigil_pidfd)
{
    struct pollfd vigil = {.fd = vigil_pidfd, .events = POLLIN};
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || poll(&vigil, 1, 0) != 0)
        _exit(127);
    pid_t pasta = (pid_t)syscall(VG_NR_clone, SIGCHLD, NULL, NULL, NULL, NULL);
    if (pasta == 0)
        pasta_child(eg, ready_w, err_w, init, KEEPER_PID);
    if (pasta < 0 || syscall(VG_NR_close_range, 0, ~0u, 0) < 0)
        _exit(127);
    for (;;) {
        int st;
        pid_t w = (pid_t)syscall(VG_NR_wait4, -1, &st, 0, NULL);
        if (w == pasta)
            _exit(WIFEXITED(st) ? WEXITSTATUS(st) : KILLED_BASE + WTERMSIG(st));
        if (w < 0 && errno != EINTR)
            _exit(127);
    }
}

static pid_t fork_pasta(const struct vg_egress *eg, pid_t init, int ready[2], int errp[2])
{
    pid_t vigil = getpid();
    if (!eg->kept) {
        pid_t pid = fork();
        if (pid == 0)
            pasta_child(eg, ready[1], errp[1], init, vigil);
        return pid;
    }
    int vigil_pidfd = (int)syscall(VG_NR_pidfd_open, vigil, 0);
    if (vigil_pidfd < 0)
        return -1;
    /* CLONE_NEWPID: root may (a kept pasta is root's --host-uid only) */
    pid_t pid = (pid_t)syscall(VG_NR_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid == 0)
        keeper(eg, ready[1], errp[1], init, vigil_pidfd);
    int saved = errno;
    close(vigil_pidfd);
    errno = saved;
    return pid;
}

static int spawn(struct vg_egress *eg, pid_t init, int ready[2], int errp[2], struct vg_err *err)
{
    pid_t pid = fork_pasta(eg, init, ready, errp);
    if (pid < 0) {
        vg_errf(err, "start pasta: %s", strerror(errno));
        return -1;
    }
    eg->pid = pid;
    eg->pidfd = (int)syscall(VG_NR_pidfd_open, pid, 0);
    if (eg->pidfd < 0) {
        vg_errf(err, "pidfd_open pasta: %s", strerror(errno));
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        eg->pid = 0;
        return -1;
    }
    return 0;
}

void vg_egress_init(struct vg_egress *eg)
{
    *eg = (struct vg_egress){.pidfd = -1, .init_pidfd = -1, .err_fd = -1, .stop_fd = -1,
                             .ready_fd = -1};
}

int vg_egress_start(struct vg_egress *eg, pid_t init, uid_t owner, int (*bill_self)(void),
                    struct vg_err *err)
{
    vg_egress_init(eg);
    eg->bill_self = bill_self;
    eg->kept = owner != geteuid();
    int ready[2] = {-1, -1}, errp[2] = {-1, -1};
    eg->t0 = vg_now_mono_ns();
    if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
        vg_errf(err, "start pasta: pipe: %s", strerror(errno));
    } else if (spawn(eg, init, ready, errp, err) == 0) {
        close_fd(&ready[1]);
        close_fd(&errp[1]);
        eg->ready_fd = ready[0];
        eg->err_fd = errp[0];
        eg->init = init;
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        close_fd(&ready[i]);
        close_fd(&errp[i]);
    }
    return -1;
}

static void reap_now(struct vg_egress *eg)
{
    siginfo_t si;
    syscall(VG_NR_pidfd_send_signal, eg->pidfd, SIGKILL, NULL, 0);
    while (waitid(P_PIDFD, (id_t)eg->pidfd, &si, WEXITED) < 0 && errno == EINTR)
        ;
}

int vg_egress_ready(struct vg_egress *eg, struct vg_err *err)
{
    int r = wait_ready(eg->ready_fd, PASTA_READY_MS);
    close_fd(&eg->ready_fd);
    if (r < 0) {
        reap_now(eg);
        drain_err(eg); /* pasta is gone: what it said is all in the pipe */
        vg_errf(err, "pasta could not connect the sandbox's network%s%s",
                eg->last_err[0] ? ": " : "", eg->last_err);
        vg_egress_stop(eg);
        return -1;
    }
    eg->start_ns = vg_now_mono_ns() - eg->t0;
    eg->init_pidfd = (int)syscall(VG_NR_pidfd_open, eg->init, 0);
    eg->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (eg->init_pidfd < 0 || eg->stop_fd < 0 || pthread_create(&eg->watcher, NULL, watch, eg)) {
        vg_errf(err, "watch pasta: %s", strerror(errno));
        vg_egress_stop(eg);
        return -1;
    }
    eg->watching = true;
    return 0;
}

bool vg_egress_note(const struct vg_egress *eg, uint64_t start_mono, char *buf, size_t cap)
{
    if (!eg->start_ns)
        return false;
    uint64_t t = atomic_load(&eg->died_mono_ns);
    if (!t)
        snprintf(buf, cap, "egress through pasta (ready in %.1f ms)", (double)eg->start_ns / 1e6);
    else
        snprintf(buf, cap, "pasta (the sandbox's egress) ended at +%.3fs%s%s: the sandbox had "
                           "no route out from then on",
                 (double)(t - start_mono) / 1e9, eg->last_err[0] ? ": " : "", eg->last_err);
    return true;
}
