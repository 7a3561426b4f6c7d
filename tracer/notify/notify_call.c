/* notify_call.c: one notification.  The arguments are read once from the
 * candidate's memory; SECCOMP_IOCTL_NOTIF_ID_VALID afterwards proves they
 * were read from the task still waiting in that call (not from a task
 * that died and whose pid was reused).  The decision is made on that copy
 * and recorded before the answer.  The answer:
 *   refused            the call fails with the verdict's errno;
 *   carried out        (opens) vigil opened the decided file and installs
 *                      it (ADDFD with SEND: install and answer at once);
 *   everything else    CONTINUE: the kernel runs the call and reads the
 *                      arguments again (docs/SECURITY.md lists which
 *                      calls that leaves racy, as under ptrace). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tracer/notify/notify_int.h"
#include "tracer/py/pyframes.h"

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

static void reply_plain(struct nt *n, int err, bool cont)
{
    memset(n->resp, 0, n->sizes.seccomp_notif_resp);
    n->resp->id = n->req->id;
    n->resp->error = cont ? 0 : -err;
    n->resp->flags = cont ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
    /* ENOENT: the caller is gone (killed meanwhile); nothing to answer */
    if (ioctl(n->listener, SECCOMP_IOCTL_NOTIF_SEND, n->resp) < 0 && errno != ENOENT)
        vg_nt_fail(n, "notify engine: cannot answer a call", 0);
}

/* Install fd in the caller as the call's result, atomically with the
 * answer (ADDFD_FLAG_SEND); it keeps O_CLOEXEC when the call asked for it. */
static void reply_fd(struct nt *n, int fd, uint64_t flags)
{
    struct seccomp_notif_addfd add = {
        .id = n->req->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t)fd,
        .newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0,
    };
    int r = ioctl(n->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
    int e = errno;
    close(fd);
    if (r < 0 && e != ENOENT)
        reply_plain(n, e, false); /* EMFILE in the caller, say: the call fails with it */
}

static void record(struct nt *n, struct vg_task *t, struct vg_call *c,
                   const struct vg_call_verdict *v, bool *ok)
{
    *ok = true;
    if (!v->record)
        return;
    struct vg_syscall_ev ev;
    vg_sup_fill_event(&n->sup, t, c, v, &ev);
    /* No native stack: the caller is not in a ptrace stop, and
     * libunwind-ptrace can only walk a stopped tracee (docs/SECURITY.md).
     * Its Python frames can be read: it is blocked in this notification. */
    struct vg_pyframe py[VG_PY_STACK_MAX];
    vg_sup_py_frames(&n->sup, t, &ev, py, &c->arena);
    *ok = vg_sup_emit_call(&n->sup, &ev) == 0;
}

static void decide_and_answer(struct nt *n, struct vg_task *t, struct vg_call *c)
{
    struct vg_call_verdict v;
    vg_decide_call(n->sup.ctx, c, n->sup.root_fd, &v);
    int fd = -1;
    bool carry = !v.refuse && !v.kill && v.record && vg_nt_carried_out(c->nr);
    if (carry)
        fd = vg_nt_open(n, t, c);
    bool ok;
    record(n, t, c, &v, &ok);
    if (!ok) {
        if (fd >= 0)
            close(fd);
        return; /* never answer a call whose record is not written */
    }
    if (v.kill) {
        vg_sup_policy_kill(&n->sup, t, c, &v);
        if (fd >= 0)
            close(fd);
    } else if (v.refuse) {
        if (fd >= 0)
            close(fd);
        reply_plain(n, v.err, false);
    } else if (carry && fd < 0) {
        reply_plain(n, -fd, false);
    } else if (carry) {
        reply_fd(n, fd, (uint64_t)c->args.flags);
    } else {
        reply_plain(n, 0, true);
    }
}

void vg_nt_handle(struct nt *n)
{
    const struct seccomp_data *d = &n->req->data;
    struct vg_task *t = caller(n, (pid_t)n->req->pid);
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
    struct vg_tracee tr = {.tid = t->tid, .pid = t->tgid, .nspid = t->nspid, .nstid = t->nstid,
                           .root_fd = n->sup.root_fd, .cache = n->sup.canon, .pivoted = true};
    struct vg_call call;
    uint64_t args[6];
    memcpy(args, d->args, sizeof args);
    vg_decode_call(&tr, d->nr, args, &call);
    uint64_t id = n->req->id;
    if (ioctl(n->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) {
        vg_call_free(&call); /* what we read may not be the caller's: drop it */
        return;
    }
    decide_and_answer(n, t, &call);
    vg_call_free(&call);
}
