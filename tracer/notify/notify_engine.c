/* notify_engine.c: the seccomp user-notification engine.  The candidate's
 * filter returns SECCOMP_RET_USER_NOTIF for audited calls; the candidate
 * hands its listener to the supervisor before exec (sandbox.c).  One
 * thread receives each notification (more while a call vigil carries out
 * blocks: notify_rx.c), decodes the call from one copy of its arguments,
 * decides, writes the record and only then answers; opens and the other
 * calls vigil carries out run as the candidate (crew.h).  The main thread keeps ptrace
 * for the life of processes (fork/clone/exec/exit events, EXITKILL), so
 * start, exec and exit records are the ptrace engine's own, and for the
 * interrupts that give native stacks (notify_stack.c). */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "launcher/limits.h"
#include "tracer/recv_cmsg.h"
#include "tracer/notify/notify_int.h"
#include "tracer/py/pyframes.h"
#include "tracer/notify/probe.h"


void vg_nt_fail(struct nt *n, const char *why, int32_t pid)
{
    if (!n->sup.ctx->out.policy_kill) {
        snprintf(n->sup.ctx->out.kill_reason, sizeof n->sup.ctx->out.kill_reason, "%s", why);
        n->sup.ctx->out.policy_kill = true;
    }
    vg_sup_note(&n->sup, "error", why, pid);
    vg_sup_kill_sandbox(&n->sup);
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

/* The candidate's message: its listener's and Landlock ruleset's fd
 * numbers (-1: no ruleset), with the kernel's word on who sent it
 * (SCM_CREDENTIALS, a pid of our namespace). */
static int recv_fd_numbers(int chan, pid_t *pid, int fdnum[2])
{
    struct ucred cred;
    bool got;
    if (vg_recv_cmsg(chan, fdnum, 2 * sizeof *fdnum, SCM_CREDENTIALS, &cred, sizeof cred,
                     &got) != (ssize_t)(2 * sizeof *fdnum) || !got)
        return -1;
    *pid = cred.pid;
    return 0;
}

/* A copy of the candidate's fd number fdnum, or -1 (errno). */
static int take_fd(int pidfd, int fdnum)
{
    return pidfd < 0 ? -1 : (int)syscall(VG_NR_pidfd_getfd, pidfd, fdnum, 0);
}

/* While the candidate waits for our ack, locked down, before its exec:
 * the sandbox's root, the candidate's identity and the primary crew that
 * takes it (crew.h), so that a candidate vigil cannot act as never runs.
 * why is set on failure. */
static int start_crew(struct nt *n, struct nt_rx *rx, pid_t pid, char *why, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/root", (int)pid);
    n->sup.root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (n->sup.root_fd < 0 || vg_ident_read(pid, &n->ident) < 0) {
        snprintf(why, len, "notify engine: cannot read the candidate's root and identity: %s",
                 strerror(errno));
        return -1;
    }
    return vg_crew_start(&rx->crew, &n->ident, n->ruleset, why, len);
}

/* Take copies of the listener and the ruleset, and start the primary
 * crew.  0: done; 1: the candidate never got that far (nothing to serve). */
static int take_listener(struct nt *n, struct nt_rx *rx)
{
    int chan = n->sup.ctx->listener_chan, fdnum[2];
    pid_t pid;
    bool hup;
    if (!wait_readable(n, chan, &hup))
        return 1;
    if (recv_fd_numbers(chan, &pid, fdnum) < 0)
        return 1; /* EOF: it failed before installing the filter */
    int pidfd = (int)syscall(VG_NR_pidfd_open, pid, 0);
    n->listener = take_fd(pidfd, fdnum[0]);
    /* kept for every crew (each takes it), closed at teardown */
    n->ruleset = fdnum[1] < 0 ? -1 : take_fd(pidfd, fdnum[1]);
    char why[sizeof rx->crew.why];
    snprintf(why, sizeof why, "cannot take the candidate's seccomp listener and ruleset: %s",
             strerror(errno));
    int rc = n->listener < 0 || (fdnum[1] >= 0 && n->ruleset < 0) ? -1
             : start_crew(n, rx, pid, why, sizeof why);
    if (pidfd >= 0)
        close(pidfd);
    if (rc < 0 || write(chan, "k", 1) != 1) {
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

/* The primary notification thread: the hand-over, then the calls.  It
 * waits in NOTIF_RECV itself (no poll first: one system call less per
 * call); the end of the run interrupts it (notify_rx.c). */
static void *primary_main(void *arg)
{
    struct nt_rx *rx = arg;
    if (take_listener(rx->n, rx) == 0)
        vg_nt_receive(rx->n, rx);
    return NULL;
}

/* The next task with something to report, -1 at the end (errno), or 0
 * when there was none after all.  The event is only looked at outside
 * the lock (WNOWAIT) and taken, reaping an exited task, with the lock
 * held (returned held when > 0).  A traced task's pid stays its own
 * until vigil reaps it, so while a notification thread holds the lock a
 * caller whose NOTIF_ID_VALID it checked keeps its pid even if it is
 * killed meanwhile: what vigil does by tid with that pid as root (the
 * caller's CPUs, cpu_pin.c; a copy of its socket, notify_net.c) can
 * never reach a task that took the pid over. */
static pid_t next_event(struct nt *n, int *status)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WNOWAIT | __WALL) < 0)
        return -1;
    pthread_mutex_lock(&n->lock);
    pid_t tid = waitpid(si.si_pid, status, __WALL | WNOHANG);
    if (tid <= 0)
        pthread_mutex_unlock(&n->lock);
    return tid < 0 ? 0 : tid; /* another way it went: look again */
}

/* The life of processes: the ptrace engine's handlers, one event at a time
 * under the lock.  No spinning here (vg_sup_spin_ns): the notification
 * threads need the CPUs, and a 500-spawn loop measured no faster with it. */
static void lifecycle_loop(struct nt *n)
{
    for (;;) {
        int status;
        /* a notification thread's ask for an interrupt (a native stack)
         * wakes this thread from waitid with VG_NT_WAKE_SIG */
        vg_nt_stack_serve(n);
        pid_t tid = next_event(n, &status);
        if (tid < 0 && errno == EINTR)
            continue;
        if (tid < 0)
            break; /* ECHILD: no task left */
        if (tid == 0)
            continue;
        if (WIFSTOPPED(status)) {
            vg_sup_on_stop(&n->sup, tid, status);
        } else if (WIFEXITED(status) || WIFSIGNALED(status)) {
            vg_sup_on_exit(&n->sup, tid, status);
            vg_nt_stack_forget(n, tid);
        }
        pthread_mutex_unlock(&n->lock);
    }
}

static void on_wake(int sig)
{
    (void)sig; /* only there to interrupt a blocking call (no SA_RESTART) */
}

static int setup(struct nt *n, struct vg_engine_ctx *ctx)
{
    *n = (struct nt){.sup = {.ctx = ctx, .root_fd = -1}, .listener = -1, .stop_fd = -1,
                     .ruleset = -1};
    vg_tasks_init(&n->sup.tasks);
    n->sup.unw = vg_unwinder_new();
    vg_py_plug(&n->sup);
    n->sup.canon = vg_canon_cache_new(ctx->immutable, ctx->nimmutable);
    n->sup.on_interrupt = vg_nt_stack_on_interrupt;
    n->sup.own_restart_stays = vg_nt_own_restart_stays;
    n->sup.notified_calls = true;
    vg_nt_stacks_init(&n->stacks); /* here, in the tracer's thread */
    struct vg_task *init = vg_tasks_add(&n->sup.tasks, ctx->init_pid);
    init->attached = true;
    init->tgid = ctx->init_pid;
    init->identified = true;
    atomic_init(&n->stopping, false);
    atomic_init(&n->receiving, 0);
    struct sigaction sa = {.sa_handler = on_wake};
    sigemptyset(&sa.sa_mask);
    if (pthread_mutex_init(&n->lock, NULL) != 0 || sigaction(VG_NT_WAKE_SIG, &sa, NULL) < 0)
        return -1;
    n->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (n->stop_fd < 0 || syscall(VG_NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &n->sizes) < 0)
        return -1;
    return 0;
}

static void teardown(struct nt *n)
{
    vg_nt_rx_free(n);
    if (n->ruleset >= 0)
        close(n->ruleset);
    if (n->listener >= 0)
        close(n->listener);
    if (n->stop_fd >= 0)
        close(n->stop_fd);
    if (n->sup.root_fd >= 0)
        close(n->sup.root_fd);
    pthread_mutex_destroy(&n->lock);
    vg_nt_stacks_free(&n->stacks);
    vg_unwinder_free(n->sup.unw);
    vg_py_unplug(&n->sup);
    vg_canon_cache_free(n->sup.canon);
    vg_tasks_free(&n->sup.tasks);
}

static int supervise(struct vg_engine_ctx *ctx)
{
    struct nt n;
    bool threaded = false;
    /* The run's quota pays for this thread's work (stacks, the life of
     * processes) and for every thread it starts: they inherit it. */
    (void)vg_cgroup_bill_self();
    if (setup(&n, ctx) == 0) {
        struct nt_rx *primary = vg_nt_rx_new(&n);
        primary->started = pthread_create(&primary->th, NULL, primary_main, primary) == 0;
        threaded = primary->started;
    }
    if (!threaded) /* fail closed: without the notification thread nothing is decided */
        vg_nt_fail(&n, "notify engine: cannot start its thread", 0);
    lifecycle_loop(&n);
    if (threaded) {
        uint64_t one = 1;
        if (write(n.stop_fd, &one, sizeof one) != (ssize_t)sizeof one)
            vg_sup_kill_sandbox(&n.sup); /* cannot happen with an eventfd; nothing is left anyway */
        /* the candidate is gone, but a call vigil carries out for it may
         * still wait in the kernel (a blocking connect to a listener that
         * never accepts): interrupted until every thread is done */
        vg_nt_rx_stop(&n);
    }
    char note[256];
    if (vg_unwind_budget_note(note, sizeof note))
        vg_sup_note(&n.sup, "warning", note, 0);
    teardown(&n);
    (void)vg_cgroup_unbill_self(); /* the trailer and the result are vigil's own */
    return 0;
}

const struct vg_engine vg_engine_notify = {
    .name = "notify",
    .notify = true,
    /* ptrace is attached for the life of processes: the kernel's SIGSYS
     * reaches vg_sup_on_stop, which records the baseline's refusals */
    .baseline = VG_BASELINE_TRAP,
    .supervise = supervise,
};
