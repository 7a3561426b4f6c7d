/* notify_rx.c: the notification threads (struct nt_rx, notify_int.h).
 *
 * Each waits in NOTIF_RECV and handles the calls it receives under the
 * engine's lock.  A call vigil carries out that may block (the open of a
 * FIFO, which waits for the other end; a connect; a send into a full
 * buffer) runs in the thread's crew with the lock released, and before
 * that the thread makes sure another one waits for notifications: the
 * call that unblocks it (the FIFO's other end, opened by another process
 * of the candidate) is then served rather than waiting behind it.  The
 * threads made so stay until the run ends. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "tracer/notify/notify_int.h"
#include "util/util.h"

#define STOP_POLL_NS 20000000L /* 20 ms: how often the end of the run interrupts them */

/* Has every task with the candidate's filter gone?  (NOTIF_RECV then
 * fails ENOENT without waiting, as it does for a caller killed between
 * its notification and our RECV.) */
static bool filter_gone(const struct nt *n)
{
    struct pollfd p = {.fd = n->listener, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

/* Lock held.  Has the candidate one task that can call?  The table holds
 * vigil's pid 1 of the sandbox too, which makes none. */
static bool one_caller(const struct nt *n)
{
    return n->sup.tasks.n <= 2;
}

void vg_nt_receive(struct nt *n, struct nt_rx *rx)
{
    vg_nt_pin_init(&rx->pin);
    while (!atomic_load_explicit(&n->stopping, memory_order_acquire)) {
        memset(rx->req, 0, n->sizes.seccomp_notif);
        vg_nt_pin_wait(&rx->pin);
        atomic_fetch_add_explicit(&n->receiving, 1, memory_order_acq_rel);
        uint64_t t0 = vg_now_mono_ns();
        int r = ioctl(n->listener, SECCOMP_IOCTL_NOTIF_RECV, rx->req);
        int e = errno;
        rx->woken_here = vg_now_mono_ns() - t0 >= VG_NT_SLEPT_NS;
        atomic_fetch_sub_explicit(&n->receiving, 1, memory_order_acq_rel);
        if (r < 0) {
            if (e == EINTR || (e == ENOENT && !filter_gone(n)))
                continue; /* woken to stop, or the caller was killed meanwhile */
            break; /* ENOENT with no task left: the kernel answers so at once, for ever */
        }
        vg_nt_pin_follow(&rx->pin, (pid_t)rx->req->pid);
        pthread_mutex_lock(&n->lock);
        /* Once the sandbox is being killed nothing more is decided,
         * recorded or released: the caller stays waiting until SIGKILL
         * takes it (as a stopped task does under ptrace). */
        if (!n->sup.ending)
            vg_nt_handle(n, rx);
        rx->pin.keep = one_caller(n);
        pthread_mutex_unlock(&n->lock);
    }
}

struct nt_rx *vg_nt_rx_new(struct nt *n)
{
    struct nt_rx *rx = vg_xcalloc(1, sizeof *rx);
    rx->n = n;
    rx->req = vg_xcalloc(1, n->sizes.seccomp_notif);
    rx->resp = vg_xcalloc(1, n->sizes.seccomp_notif_resp);
    rx->quiet_fd = -1;
    rx->next = n->rx;
    n->rx = rx;
    n->nrx++;
    return rx;
}

static void *spawned_main(void *arg)
{
    struct nt_rx *rx = arg;
    vg_nt_receive(rx->n, rx);
    return NULL;
}

/* Lock held.  The ceiling on notification threads: each blocked job is
 * the call of a distinct task of the candidate, blocked in it, so there
 * are never more of them than the candidate's tasks, which its pids limit
 * (--procs) caps; one more receives.  At the ceiling one thread is not in
 * a blocked job and will receive again soon (a task that just exited, an
 * idle one between calls).  The tasks table alone is not that bound: a
 * new thread's call can come before its clone is in the table, and on a
 * loaded machine 60 blocked opens once took every thread while the table
 * said fewer tasks, so the next call was never received. */
static bool at_ceiling(const struct nt *n)
{
    size_t tasks = n->sup.tasks.n;
    const struct vg_limits *lim = n->sup.ctx->limits;
    if (lim && lim->v[VG_LIM_PROCS] > tasks)
        tasks = (size_t)lim->v[VG_LIM_PROCS];
    return (size_t)n->nrx > tasks;
}

/* Lock held.  Unlink rx, whose thread never started. */
static void rx_unlink(struct nt *n, struct nt_rx *rx)
{
    for (struct nt_rx **p = &n->rx; *p; p = &(*p)->next)
        if (*p == rx) {
            *p = rx->next;
            n->nrx--;
            break;
        }
    free(rx->req);
    free(rx->resp);
    free(rx);
}

/* Lock held: another thread will receive while this one's call blocks.
 * false when none waits and none could be made (vigil out of threads or
 * memory): the blocking call must not run then, it would hold the others
 * up. */
static bool keep_receiving(struct nt *n)
{
    if (atomic_load_explicit(&n->receiving, memory_order_acquire) > 0 || at_ceiling(n))
        return true; /* one waits already, or will (at_ceiling) */
    struct nt_rx *rx = vg_nt_rx_new(n);
    rx->started = pthread_create(&rx->th, NULL, spawned_main, rx) == 0;
    if (rx->started)
        return true;
    rx_unlink(n, rx);
    return false;
}

/* Lock held. */
static void set_own_restart(struct nt *n, pid_t tid, bool on)
{
    struct vg_task *live = vg_tasks_get(&n->sup.tasks, tid);
    if (live)
        live->own_restart = on;
}

long vg_nt_as_candidate(struct nt *n, struct nt_rx *rx, const struct vg_task *t,
                        long (*fn)(void *), void *arg, bool may_block)
{
    if (!rx->crew.started) {
        char why[sizeof rx->crew.why];
        if (vg_crew_start(&rx->crew, &n->ident, n->ruleset, why, sizeof why) < 0) {
            vg_nt_fail(n, why, t->nspid); /* fail closed: nothing is carried out without it */
            return -EIO;
        }
    }
    if (may_block) {
        /* Without WAIT_KILLABLE_RECV a signal ends the caller's wait while
         * the job blocks: its ERESTARTSYS is then a blocking call's own,
         * which the tracer must leave as it is (stops.c). */
        if (!keep_receiving(n)) {
            /* refused as the kernel refuses a thread it cannot make:
             * recorded with that outcome (carried, EAGAIN) and noted */
            vg_sup_note(&n->sup, "limit", "notify engine: no thread left to receive calls "
                        "while this one blocks: refused with EAGAIN", t->nspid);
            return -EAGAIN;
        }
        set_own_restart(n, t->tid, true);
        rx->job_tid = t->tid;
        rx->job_gen = vg_crew_jobs_done(&rx->crew);
        pthread_mutex_unlock(&n->lock);
    }
    long r = vg_crew_run(&rx->crew, fn, arg, vg_nt_caller_wants, rx);
    if (may_block) {
        pthread_mutex_lock(&n->lock);
        rx->job_tid = 0;
        set_own_restart(n, t->tid, false);
        /* The caller may have been killed and reaped while the lock was
         * released: its pid is then no longer its own (notify_engine.c
         * next_event), and nothing more is done to it by pid. */
        rx->caller_left = !vg_nt_caller_waits(rx);
    }
    return r;
}

/* Without WAIT_KILLABLE_RECV a signal ends the caller's wait while its
 * job runs, and the tracer must say at the signal's stop whether its
 * ERESTARTSYS is a blocking call's own (EINTR for a handler without
 * SA_RESTART) or a withdrawn call's (restarted: an open of a plain file
 * that went as a job never fails EINTR).  Only the job knows: the tracer
 * waits for it to end, which is soon (its caller no longer waits in the
 * call, so vg_crew_run interrupts it within CHECK_NS), and an
 * interrupted job (-EINTR) is a blocking call's.  A job still running
 * after JOB_END_WAIT_NS keeps the kernel's code (EINTR), as before: that
 * bound is for a job stuck in the kernel, not for a slow machine.  At
 * 0.5 s it was the one way found for an allowed open to fail EINTR, and
 * the likely cause of the one bad=1 of test_bounce_without_wait_killable_recv
 * seen on a machine loaded by a sanitized run (not reproduced since). */
#define JOB_END_WAIT_NS 5000000000L /* 5 s: the lifecycle waits that long at most */

bool vg_nt_own_restart_stays(struct vg_sup *e, struct vg_task *t)
{
    struct nt *n = (struct nt *)((char *)e - offsetof(struct nt, sup));
    for (struct nt_rx *rx = n->rx; rx; rx = rx->next) {
        if (rx->job_tid != t->tid)
            continue;
        long r;
        if (!vg_crew_job_end(&rx->crew, rx->job_gen, JOB_END_WAIT_NS, &r))
            return true;
        return r == -EINTR;
    }
    return true; /* vigil answered ERESTARTSYS itself (restart_for_signal) */
}

/* A notification thread still running (lock held), or NULL. */
static struct nt_rx *running(struct nt *n)
{
    for (struct nt_rx *rx = n->rx; rx; rx = rx->next)
        if (rx->started)
            return rx;
    return NULL;
}

void vg_nt_rx_stop(struct nt *n)
{
    atomic_store_explicit(&n->stopping, true, memory_order_release);
    for (;;) {
        pthread_mutex_lock(&n->lock);
        struct nt_rx *rx = running(n);
        pthread_mutex_unlock(&n->lock);
        if (!rx)
            return;
        /* again each time: a signal may come before its thread is in the
         * call it is meant to interrupt (NOTIF_RECV, or a crew's job) */
        pthread_kill(rx->th, VG_NT_WAKE_SIG);
        vg_crew_interrupt(&rx->crew);
        struct timespec until = vg_realtime_in(STOP_POLL_NS);
        if (pthread_timedjoin_np(rx->th, NULL, &until) == 0) {
            pthread_mutex_lock(&n->lock);
            rx->started = false;
            pthread_mutex_unlock(&n->lock);
        }
    }
}

void vg_nt_rx_free(struct nt *n)
{
    while (n->rx) {
        struct nt_rx *rx = n->rx;
        n->rx = rx->next;
        vg_crew_stop(&rx->crew);
        free(rx->req);
        free(rx->resp);
        free(rx);
    }
    n->nrx = 0;
}
