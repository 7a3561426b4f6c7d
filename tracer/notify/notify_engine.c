/* notify_engine.c: the seccomp user-notification engine.  The candidate's
 * filter returns SECCOMP_RET_USER_NOTIF for audited calls; the candidate
 * hands its listener to the supervisor before exec (sandbox.c).  One
 * thread receives each notification, decodes the call from one copy of
 * its arguments, decides, writes the record and only then answers; opens
 * are carried out by vigil (notify_open.c).  The main thread keeps ptrace
 * for the life of processes only (fork/clone/exec/exit events, EXITKILL),
 * so start, exec and exit records are the ptrace engine's own. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracer/notify/cmsg.h"
#include "tracer/notify/notify_int.h"
#include "tracer/notify/probe.h"

#define JOIN_POLL_NS 20000000L /* 20 ms */
#define NS_PER_S 1000000000L

void vg_nt_fail(struct nt *n, const char *why, int32_t pid)
{
    if (!n->pt.ctx->out.policy_kill) {
        snprintf(n->pt.ctx->out.kill_reason, sizeof n->pt.ctx->out.kill_reason, "%s", why);
        n->pt.ctx->out.policy_kill = true;
    }
    vg_pt_note(&n->pt, "error", why, pid);
    vg_pt_kill_sandbox(&n->pt);
}

/* Wait for fd to be readable; false when the lifecycle loop said stop. */
static bool wait_readable(const struct nt *n, int fd, bool *hup)
{
    struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = n->stop_fd, .events = POLLIN}};
    for (;;) {
        int r = poll(p, 2, -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || p[1].revents)
            return false;
        *hup = !(p[0].revents & POLLIN);
        return true;
    }
}

/* The candidate's message: its listener's fd number, with the kernel's
 * word on who sent it (SCM_CREDENTIALS, a pid of our namespace). */
static int recv_listener_number(int chan, pid_t *pid, int *fdnum)
{
    struct ucred cred;
    bool got;
    if (vg_recv_cmsg(chan, fdnum, sizeof *fdnum, SCM_CREDENTIALS, &cred, sizeof cred, &got) !=
            (ssize_t)sizeof *fdnum || !got)
        return -1;
    *pid = cred.pid;
    return 0;
}

/* Take a copy of the listener while the candidate waits for our ack.
 * 0: got it; 1: the candidate never got that far (nothing to serve). */
static int take_listener(struct nt *n)
{
    int chan = n->pt.ctx->listener_chan, fdnum;
    pid_t pid;
    bool hup;
    if (!wait_readable(n, chan, &hup))
        return 1;
    if (recv_listener_number(chan, &pid, &fdnum) < 0)
        return 1; /* EOF: it failed before installing the filter */
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    n->listener = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, fdnum, 0);
    int e = errno;
    if (pidfd >= 0)
        close(pidfd);
    if (n->listener < 0 || write(chan, "k", 1) != 1) {
        char why[160];
        snprintf(why, sizeof why, "cannot take the candidate's seccomp listener: %s", strerror(e));
        pthread_mutex_lock(&n->lock);
        vg_nt_fail(n, why, 0);
        pthread_mutex_unlock(&n->lock);
        return -1;
    }
    /* Sync wake-up (Linux 6.6): the supervisor runs on the candidate's
     * CPU at once.  Where the kernel lacks it, the plain wake-up is used. */
    (void)ioctl(n->listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    return 0;
}

static void *notify_thread(void *arg)
{
    struct nt *n = arg;
    if (take_listener(n) != 0)
        return NULL;
    for (;;) {
        bool hup;
        if (!wait_readable(n, n->listener, &hup) || hup)
            break; /* every task with the filter is gone */
        memset(n->req, 0, n->sizes.seccomp_notif);
        if (ioctl(n->listener, SECCOMP_IOCTL_NOTIF_RECV, n->req) < 0) {
            if (errno == EINTR || errno == ENOENT)
                continue; /* the caller was killed or interrupted meanwhile */
            break;
        }
        pthread_mutex_lock(&n->lock);
        vg_nt_handle(n);
        pthread_mutex_unlock(&n->lock);
    }
    return NULL;
}

/* The life of processes: the ptrace engine's handlers, one event at a time
 * under the lock. */
static void lifecycle_loop(struct nt *n)
{
    for (;;) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL);
        if (tid < 0 && errno == EINTR)
            continue;
        if (tid <= 0)
            break;
        pthread_mutex_lock(&n->lock);
        if (WIFSTOPPED(status))
            vg_pt_on_stop(&n->pt, tid, status);
        else if (WIFEXITED(status) || WIFSIGNALED(status))
            vg_pt_on_exit(&n->pt, tid, status);
        pthread_mutex_unlock(&n->lock);
    }
}

static int setup(struct nt *n, struct vg_engine_ctx *ctx)
{
    *n = (struct nt){.pt = {.ctx = ctx, .root_fd = -1}, .listener = -1,
                     .opener = ctx->opener_fd, .stop_fd = -1};
    vg_tasks_init(&n->pt.tasks);
    n->pt.unw = vg_unwinder_new();
    n->pt.canon = vg_canon_cache_new(ctx->immutable, ctx->nimmutable);
    struct vg_task *init = vg_tasks_add(&n->pt.tasks, ctx->init_pid);
    init->attached = true;
    init->tgid = ctx->init_pid;
    init->identified = true;
    ctx->out.own_procs = 1; /* the opener */
    if (pthread_mutex_init(&n->lock, NULL) != 0)
        return -1;
    n->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (n->stop_fd < 0 || syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &n->sizes) < 0)
        return -1;
    n->req = vg_xcalloc(1, n->sizes.seccomp_notif);
    n->resp = vg_xcalloc(1, n->sizes.seccomp_notif_resp);
    return 0;
}

static void teardown(struct nt *n)
{
    vg_nt_cand_free(n);
    if (n->listener >= 0)
        close(n->listener);
    if (n->stop_fd >= 0)
        close(n->stop_fd);
    if (n->pt.root_fd >= 0)
        close(n->pt.root_fd);
    free(n->req);
    free(n->resp);
    pthread_mutex_destroy(&n->lock);
    vg_unwinder_free(n->pt.unw);
    vg_canon_cache_free(n->pt.canon);
    vg_tasks_free(&n->pt.tasks);
}

/* The candidate is gone, but a call vigil carries out for it may still
 * wait in the kernel (a blocking connect to a listener that never
 * accepts): interrupt it until the notification thread is done. */
static void join_notify_thread(struct nt *n, pthread_t th)
{
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += JOIN_POLL_NS;
        if (until.tv_nsec >= NS_PER_S) {
            until.tv_sec++;
            until.tv_nsec -= NS_PER_S;
        }
        if (pthread_timedjoin_np(th, NULL, &until) == 0)
            return;
        pthread_mutex_lock(&n->lock);
        vg_nt_cand_interrupt(n);
        pthread_mutex_unlock(&n->lock);
    }
}

static int supervise(struct vg_engine_ctx *ctx)
{
    struct nt n;
    pthread_t th;
    bool threaded = false;
    if (setup(&n, ctx) < 0 || pthread_create(&th, NULL, notify_thread, &n) != 0) {
        /* fail closed: without the notification thread nothing is decided */
        vg_nt_fail(&n, "notify engine: cannot start its thread", 0);
    } else {
        threaded = true;
    }
    lifecycle_loop(&n);
    if (threaded) {
        uint64_t one = 1;
        if (write(n.stop_fd, &one, sizeof one) != (ssize_t)sizeof one)
            vg_pt_kill_sandbox(&n.pt); /* cannot happen with an eventfd; nothing is left anyway */
        join_notify_thread(&n, th);
    }
    teardown(&n);
    return 0;
}

const struct vg_engine vg_engine_notify = {
    .name = "notify",
    .ptrace_opts = PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                   PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC,
    .notify = true,
    /* ptrace is attached for the life of processes: the kernel's SIGSYS
     * reaches vg_pt_on_stop, which records the baseline's refusals */
    .baseline = VG_BASELINE_TRAP,
    .supervise = supervise,
};
