/* notify_call.c: one notification.  The arguments are read once from the
 * candidate's memory; SECCOMP_IOCTL_NOTIF_ID_VALID afterwards proves they
 * were read from the task still waiting in that call (not from a task
 * that died and whose pid was reused).  The decision is made on that copy
 * and recorded before the answer.  The answer:
 *   refused            the call fails with the verdict's errno;
 *   carried out        vigil did the decided call itself (opens: the file
 *                      installed with ADDFD; file-changing calls, connect,
 *                      bind and sends: notify_fs.c, notify_net.c) and the
 *                      answer is its result, which the record carries;
 *   everything else    CONTINUE: the kernel runs the call and reads the
 *                      arguments again (docs/SECURITY.md lists them and
 *                      why their decision does not depend on memory). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "launcher/limits.h"
#include "tracer/notify/notify_int.h"

static struct vg_task *caller(struct nt *n, pid_t tid)
{
    struct vg_task *t = vg_tasks_get(&n->sup.tasks, tid);
    if (!t) {
        /* Every task is announced by its creator's ptrace event before it
         * runs (it is held until then), so this is a task whose event is
         * not in yet; identify it from /proc as the ptrace engine does. */
        t = vg_tasks_add(&n->sup.tasks, tid);
    }
    if (!vg_task_identify(&n->sup.tasks, t)) {
        vg_tasks_del(&n->sup.tasks, tid);
        return NULL;
    }
    return t;
}

/* The answer: fail with err, or (cont) let the kernel run the call, or
 * return val as the call's own result. */
static void reply_plain(struct nt *n, struct nt_rx *rx, int err, bool cont, int64_t val)
{
    memset(rx->resp, 0, n->sizes.seccomp_notif_resp);
    rx->resp->id = rx->req->id;
    rx->resp->error = cont ? 0 : -err;
    rx->resp->val = err ? 0 : val;
    rx->resp->flags = cont ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
    /* ENOENT: the caller is gone (killed meanwhile); nothing to answer */
    if (ioctl(n->listener, SECCOMP_IOCTL_NOTIF_SEND, rx->resp) < 0) {
        if (errno != ENOENT)
            vg_nt_fail(n, "notify engine: cannot answer a call", 0);
        return;
    }
    rx->answered = (pid_t)rx->req->pid; /* woken on this CPU (sync wake-up) */
    rx->answered_cpu = sched_getcpu();
    rx->answered_at = vg_now_mono_ns();
}

/* Is the caller on this thread's CPU (notify_int.h, VG_NT_SLEPT_NS)?  The
 * last one answered is where it was woken, if this thread has not moved
 * since (an install with ADDFD_FLAG_SEND, a blocking job, may move it). */
static bool caller_here(const struct nt_rx *rx)
{
    return rx->woken_here ||
           (rx->answered == (pid_t)rx->req->pid && rx->answered_cpu >= 0 &&
            rx->answered_cpu == sched_getcpu() &&
            vg_now_mono_ns() - rx->answered_at < VG_NT_PIN_NS);
}

/* The answer to an open vigil carried out: install its file fd in the
 * caller (it keeps O_CLOEXEC when the call asked for it) and answer the
 * call with the number it got there.  The caller is kept on this CPU for
 * the install (vg_nt_wake_here) and given its CPUs back while it still
 * waits for the answer, so that it never runs an instruction with fewer:
 * ADDFD, then the answer (SEND, which wakes it here under sync wake-up).
 * Where it could not be kept here, one step (ADDFD_FLAG_SEND).  The
 * record is written before: it says the file is installed, not which
 * number. */
static void install_and_answer(struct nt *n, struct nt_rx *rx, struct vg_task *t,
                               const struct vg_call *c, int fd)
{
    struct vg_nt_here here = {.held = false};
    /* not when its tid may be another task's now, nor when its CPU is
     * unknown (notify_int.h, VG_NT_SLEPT_NS); nor where a signal can end
     * the caller's wait (no WAIT_KILLABLE_RECV): between the install and
     * the answer it would leave the file in the caller and restart the
     * call, an fd lost each time; ADDFD_FLAG_SEND installs and answers in
     * one step, or does neither (ESRCH) */
    if (n->sup.ctx->notify_wait_killable && !rx->caller_left && caller_here(rx))
        vg_nt_wake_here(&here, t->tid, &rx->pin);
    bool narrowed = here.held;
    struct seccomp_notif_addfd add = {
        .id = rx->req->id, .srcfd = (uint32_t)fd, .flags = narrowed ? 0 : SECCOMP_ADDFD_FLAG_SEND,
        .newfd_flags = (c->args.flags & O_CLOEXEC) ? O_CLOEXEC : 0,
    };
    int r = ioctl(n->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
    int e = errno;
    if (vg_nt_wake_done(&here) < 0) {
        /* what vigil changed in the candidate cannot be undone: the run ends */
        vg_nt_open_release(rx, fd);
        vg_nt_fail(n, "notify engine: cannot give a caller its CPUs back", t->nspid);
        return;
    }
    vg_nt_open_release(rx, fd);
    if (r >= 0 && narrowed) {
        reply_plain(n, rx, 0, false, r); /* the number it got */
        return;
    }
    if (r >= 0 || e == ENOENT || e == ESRCH)
        return; /* answered, or the caller is gone from its call (killed, or
                 * withdrawn by a signal: restarted, and recorded again) */
    /* The call fails as the candidate's own open would (EMFILE: at its
     * open-files limit); the record said "installed": this note, naming
     * the path, corrects it. */
    if (e == EMFILE)
        n->sup.ctx->out.limit_seen[VG_LIM_FILES] = true;
    char what[VG_NT_NOTE_MAX];
    snprintf(what, sizeof what, "%s%s: the file vigil opened could not be installed (%s): "
             "the call failed with it", e == EMFILE ? "files: " : "",
             c->check_path ? c->check_path : "?", strerrorname_np(e) ? strerrorname_np(e) : "?");
    vg_sup_note(&n->sup, e == EMFILE ? "limit" : "error", what, t->nspid);
    reply_plain(n, rx, e, false, 0);
}

/* The calls vigil carries out itself, by kind (knowledge as data): opens
 * give vigil's own fd of the file (installed with the answer), the others
 * a result. */
static long carry_open(struct nt *n, struct nt_rx *rx, struct vg_task *t, struct vg_call *c,
                       struct vg_call_verdict *v)
{
    (void)v;
    return vg_nt_open(n, rx, t, c);
}

static bool takes_open(const struct vg_call *c)
{
    return vg_nt_carried_out(c->nr, (uint64_t)c->args.flags);
}

static bool always(const struct vg_call *c)
{
    (void)c;
    return true;
}

static const struct {
    bool (*takes)(const struct vg_call *c);
    long (*carry)(struct nt *n, struct nt_rx *rx, struct vg_task *t, struct vg_call *c,
                  struct vg_call_verdict *v);
    /* carried out even when there is nothing to decide or record, when
     * this says so (NULL: never): listen on a bound socket (the socket may
     * be swapped after the look), an openat2 whose flags, read from
     * memory, made it a class nobody audits */
    bool (*unrecorded)(const struct vg_call *c);
    bool installs; /* a result >= 0 is a file to install (opens) */
} carriers[] = {
    {takes_open, carry_open, vg_nt_open_unrecorded, true}, /* notify_open.c */
    {vg_nt_fs_takes, vg_nt_fs, NULL, false},               /* notify_fs.c */
    {vg_nt_net_takes, vg_nt_net, always, false},           /* notify_net.c */
};

/* Carry the allowed call out: true with its result in *ret (and whether
 * that is a file to install), false when vigil lets the kernel run it
 * (CONTINUE). */
static bool carry_out(struct nt *n, struct nt_rx *rx, struct vg_task *t, struct vg_call *c,
                      struct vg_call_verdict *v, long *ret, bool *installs)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(carriers); i++)
        if (carriers[i].takes(c) &&
            (v->record || (carriers[i].unrecorded && carriers[i].unrecorded(c)))) {
            *ret = carriers[i].carry(n, rx, t, c, v);
            *installs = carriers[i].installs && *ret >= 0;
            return true;
        }
    return false;
}

static void record(struct nt *n, struct vg_task *t, struct vg_call *c,
                   const struct vg_call_verdict *v, const long *ret, bool installs,
                   const struct nt_stack *stk, bool *ok)
{
    *ok = true;
    if (!v->record)
        return;
    struct vg_syscall_ev ev;
    vg_sup_fill_event(&n->sup, t, c, v, &ev);
    if (ret && !v->refuse && !v->kill) { /* carried out: its outcome */
        ev.carried = true;
        ev.installed = installs;
        ev.ret = *ret < 0 ? -1 : *ret;
        ev.ret_errno = *ret < 0 ? (int32_t)-*ret : 0;
    }
    /* The native stack was taken at a ptrace stop when this call was
     * bounced (notify_stack.c); its Python frames can be read now: the
     * caller is blocked in this notification. */
    if (stk) {
        ev.stack = stk->frames;
        ev.nstack = stk->n;
    }
    vg_sup_py_frames(&n->sup, t, &ev, &c->arena);
    *ok = vg_sup_emit_call(&n->sup, &ev) == 0;
}

/* A carried-out call that blocked (a FIFO's open, a connect) was
 * interrupted because the caller has a signal to handle: it ends as the
 * kernel's own blocking call does, ERESTARTSYS, so that the handler runs
 * and the call fails EINTR, or is made again under SA_RESTART.  The
 * tracer must leave that code as it is at the signal's stop (stops.c
 * would make it ERESTARTNOINTR, for a call withdrawn before RECV). */
static void restart_for_signal(struct nt *n, struct nt_rx *rx, pid_t tid)
{
    struct vg_task *t = vg_tasks_get(&n->sup.tasks, tid);
    if (t)
        t->own_restart = true;
    reply_plain(n, rx, VG_ERESTARTSYS, false, 0);
}

/* Does the record of this call carry a native stack?  As under ptrace:
 * every refusal (and would-be refusal), every call with --stacks. */
static bool wants_stack(const struct nt *n, const struct vg_call_verdict *v)
{
    return v->record && (v->decision != VG_DEC_ALLOW || n->sup.ctx->opts->stacks_all) &&
           vg_unwind_budget_take();
}

/* decide -> carry out -> record (with the outcome) -> answer: the record
 * is still written before the candidate sees anything of the call.  A call
 * whose record wants a native stack is first bounced through a ptrace stop
 * (notify_stack.c) and decided again when it comes back. */
static void decide_and_answer(struct nt *n, struct nt_rx *rx, struct vg_task *t, struct vg_call *c,
                              const struct nt_stack *stk)
{
    struct vg_call_verdict v;
    vg_decide_call(n->sup.ctx, c, n->sup.root_fd, &v);
    if (!stk && wants_stack(n, &v)) {
        pid_t tid = t->tid;
        if (vg_nt_stack_bounce(n, rx) == VG_NT_BOUNCED)
            return;
        t = vg_tasks_get(&n->sup.tasks, tid); /* the lock was released meanwhile */
        if (!t || !vg_nt_caller_waits(rx))
            return; /* it exited (the kernel ended its call), its pid maybe reused */
    }
    /* t points into the task table, which a carried-out call may see
     * change (the lock is dropped while it runs): work on a copy */
    struct vg_task who = *t;
    long ret = 0;
    bool installs = false;
    bool carried = !v.refuse && !v.kill && carry_out(n, rx, &who, c, &v, &ret, &installs);
    bool ok;
    /* a blocking send or connect let the run go on meanwhile: it happened
     * (recorded), even when the sandbox is being killed now */
    record(n, &who, c, &v, carried ? &ret : NULL, installs, stk, &ok);
    if (!ok) {
        if (installs)
            vg_nt_open_release(rx, (int)ret);
        return; /* never answer a call whose record is not written */
    }
    if (v.kill) {
        struct vg_task *now = vg_tasks_get(&n->sup.tasks, who.tid);
        vg_sup_policy_kill(&n->sup, now ? now : &who, c, &v);
    } else if (v.refuse) {
        reply_plain(n, rx, v.err, false, 0);
    } else if (installs) {
        install_and_answer(n, rx, &who, c, (int)ret);
    } else if (carried && ret == -EINTR && rx->signalled) {
        restart_for_signal(n, rx, who.tid);
    } else if (carried) {
        reply_plain(n, rx, ret < 0 ? (int)-ret : 0, false, ret);
    } else {
        reply_plain(n, rx, 0, true, 0);
    }
}

bool vg_nt_caller_waits(void *arg)
{
    const struct nt_rx *rx = arg;
    uint64_t id = rx->req->id;
    return ioctl(rx->n->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

bool vg_nt_caller_wants(void *arg)
{
    struct nt_rx *rx = arg;
    if (!vg_nt_caller_waits(rx))
        return false;
    rx->signalled = vg_nt_caller_signalled((pid_t)rx->req->pid);
    return !rx->signalled;
}

void vg_nt_handle(struct nt *n, struct nt_rx *rx)
{
    const struct seccomp_data *d = &rx->req->data;
    if (n->sup.ending)
        return; /* the sandbox is being killed: nothing more is released */
    struct vg_task *t = caller(n, (pid_t)rx->req->pid);
    if (!t)
        return; /* gone: the kernel already failed its call */
    if (n->sup.root_fd < 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/root", (int)t->tid);
        n->sup.root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (n->sup.root_fd < 0) {
            /* no path could be resolved: fail closed, as the ptrace engine */
            vg_sup_fail(&n->sup, t->nspid, "cannot open the sandbox root (%s): %s", path,
                       strerror(errno));
            return;
        }
    }
    vg_sup_log_start(&n->sup, t, 0);
    struct vg_tracee tr;
    vg_sup_tracee(&n->sup, t, false, &tr); /* blocked in its notification, not ptrace-stopped */
    struct vg_call call;
    uint64_t args[6];
    memcpy(args, d->args, sizeof args);
    vg_decode_call(&tr, d->nr, args, &call);
    if (!vg_nt_caller_waits(rx)) {
        vg_call_free(&call); /* what we read may not be the caller's: drop it */
        return;
    }
    t->own_restart = false; /* a new call: an earlier ERESTARTSYS is over */
    rx->signalled = false;
    rx->caller_left = false; /* in its call, and the lock held since */
    struct nt_stack stk;
    bool bounced = vg_nt_stack_take(n, rx->req, &stk);
    decide_and_answer(n, rx, t, &call, bounced ? &stk : NULL);
    if (bounced)
        vg_arena_free(&stk.arena);
    vg_call_free(&call);
}
