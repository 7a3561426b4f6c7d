/* spawn.c: the tools `vigil image build` runs (mmdebstrap, dpkg-query):
 * found on $PATH, started with their stdout a pipe to vigil and their
 * stderr the build's log, and not outliving vigil: a contained one is
 * killed with all it started (below), another gets SIGTERM (mmdebstrap's
 * unshare mode then finishes the step it is in and removes its own
 * temporary chroot).  What a killed build leaves in the store's tmp/ the
 * next import's or build's sweep removes. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "image/build_int.h"

#define PASS_FD 3
#define EXIT_SETUP 127          /* the child could not become the tool */
#define SIGNAL_EXIT_BASE 128    /* the shell's convention: 128 + signal */
#define REASON_PREFIX "E: "
#define LOG_TAIL (16u << 10)    /* how much of the log a reason is looked for in */

char *vg_tool_find(const char *name)
{
    const char *path = getenv("PATH");
    char *copy = vg_xstrdup(path && path[0] ? path : "/usr/bin:/bin"), *save = NULL, *found = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
        char *cand = vg_xasprintf("%s/%s", dir, name);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
            found = cand;
        else
            free(cand);
    }
    free(copy);
    return found;
}

static const char fail_line[] = REASON_PREFIX "vigil: cannot start the tool\n";
static const char contain_line[] = REASON_PREFIX "vigil: cannot give the tool mount and pid "
                                   "namespaces of its own (no CAP_SYS_ADMIN here?)\n";

/* Contained: new mount and pid namespaces.  This process stays outside
 * and waits; its child is the namespace's init and becomes the tool.
 * When vigil dies this one is killed (its death signal), then the init
 * (its own), and with the init the kernel kills everything the tool
 * started and the namespace's mounts go: nothing of a killed build keeps
 * running or stays mounted.  Returns in the init; the waiter never does. */
static void contain(int outw, int errfd)
{
    int life[2];
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || unshare(CLONE_NEWNS | CLONE_NEWPID) < 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || pipe2(life, O_CLOEXEC) < 0) {
        (void)!write(errfd, contain_line, sizeof contain_line - 1);
        _exit(EXIT_SETUP);
    }
    pid_t init = fork();
    if (init < 0)
        _exit(EXIT_SETUP);
    if (init == 0) {
        /* the waiter may have died before the death signal was set: its
         * end of the lifeline is then closed */
        struct pollfd p = {.fd = life[0], .events = POLLIN};
        close(life[1]);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || poll(&p, 1, 0) != 0)
            _exit(EXIT_SETUP);
        return;
    }
    close(outw);
    close(life[0]);
    int st;
    while (waitpid(init, &st, 0) < 0)
        if (errno != EINTR)
            _exit(EXIT_SETUP);
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : SIGNAL_EXIT_BASE + WTERMSIG(st));
}

/* In the child, before exec: only async-signal-safe calls, and any
 * failure said on errfd (the log) in a line vg_log_reason finds. */
static _Noreturn void child(const char *path, char *const argv[], char *const envp[], int outw,
                            int errfd, int passfd, unsigned flags, pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0 || getppid() != parent)
        _exit(EXIT_SETUP);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (flags & VG_SPAWN_CONTAINED)
        contain(outw, errfd);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(outw, STDOUT_FILENO) < 0 ||
        dup2(errfd, STDERR_FILENO) < 0 ||
        (passfd >= 0 && passfd != PASS_FD && dup2(passfd, PASS_FD) < 0) ||
        (passfd == PASS_FD && fcntl(PASS_FD, F_SETFD, 0) < 0) ||
        syscall(VG_NR_close_range, passfd >= 0 ? PASS_FD + 1 : PASS_FD, ~0u, 0) < 0)
        _exit(EXIT_SETUP);
    execve(path, argv, envp);
    (void)!write(STDERR_FILENO, fail_line, sizeof fail_line - 1);
    _exit(EXIT_SETUP);
}

int vg_spawn(const char *path, char *const argv[], char *const envp[], int errfd, int passfd,
             unsigned flags, struct vg_child *c, struct vg_err *err)
{
    *c = (struct vg_child){.pid = -1, .out = -1};
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        vg_errf(err, "pipe: %m");
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        child(path, argv, envp, p[1], errfd, passfd, flags, parent);
    close(p[1]);
    if (pid < 0) {
        vg_errf(err, "fork: %m");
        close(p[0]);
        return -1;
    }
    c->pid = pid;
    c->out = p[0];
    return 0;
}

int vg_spawn_wait(struct vg_child *c)
{
    if (c->out >= 0)
        close(c->out);
    c->out = -1;
    int st;
    pid_t r;
    while ((r = waitpid(c->pid, &st, 0)) < 0 && errno == EINTR)
        ;
    c->pid = -1;
    if (r < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : SIGNAL_EXIT_BASE + WTERMSIG(st);
}

void vg_spawn_stop(struct vg_child *c)
{
    if (c->pid > 0)
        kill(c->pid, SIGTERM);
    (void)vg_spawn_wait(c);
}

int vg_spawn_capture(const char *path, char *const argv[], char *const envp[], int errfd,
                     int passfd, struct vg_buf *out, struct vg_err *err)
{
    struct vg_child c;
    if (vg_spawn(path, argv, envp, errfd, passfd, 0, &c, err) < 0)
        return -1;
    char buf[VG_IMAGE_BUF];
    ssize_t got;
    while ((got = read(c.out, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR)) {
        if (got < 0)
            continue;
        if (out->len + (size_t)got > VG_BUILD_CAPTURE_MAX) {
            vg_errf(err, "%s: more than %u bytes of output", argv[0], VG_BUILD_CAPTURE_MAX);
            vg_spawn_stop(&c);
            return -1;
        }
        vg_buf_put(out, buf, (size_t)got);
    }
    int e = errno;
    int rc = vg_spawn_wait(&c);
    if (got < 0 || rc < 0) {
        errno = got < 0 ? e : errno;
        vg_errf(err, "%s: %m", argv[0]);
        return -1;
    }
    return rc;
}

/* A line of the log worth showing: trailing blanks cut. */
static void take_line(const char *l, size_t n, char *out, size_t cap)
{
    while (n && (l[n - 1] == ' ' || l[n - 1] == '\r'))
        n--;
    snprintf(out, cap, "%.*s", (int)n, l);
}

void vg_log_reason(int logfd, off_t from, char *out, size_t cap)
{
    snprintf(out, cap, "(it said nothing)");
    struct stat st;
    if (fstat(logfd, &st) < 0 || st.st_size <= from)
        return;
    /* only the end: a long build's log is megabytes of progress */
    off_t start = st.st_size - from > LOG_TAIL ? st.st_size - LOG_TAIL : from;
    char *buf = vg_xmalloc(LOG_TAIL + 1);
    ssize_t n = pread(logfd, buf, LOG_TAIL, start);
    bool found = false;
    for (char *l = buf, *end = buf + (n > 0 ? n : 0); l < end && !found;) {
        char *nl = memchr(l, '\n', (size_t)(end - l));
        size_t len = nl ? (size_t)(nl - l) : (size_t)(end - l);
        if (len && !strncmp(l, REASON_PREFIX, strlen(REASON_PREFIX))) {
            take_line(l, len, out, cap);
            found = true;
        } else if (len)
            take_line(l, len, out, cap);
        l += len + 1;
    }
    free(buf);
}
