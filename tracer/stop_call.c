/* stop_call.c: an audited call decided at a ptrace stop, under either
 * engine: the ptrace engine's RET_TRACE stops, a candidate's own filter's
 * RET_TRACE on a call vigil audits (under notify too), and the kernel's
 * SIGSYS for a baseline refusal (stops.c), which both engines see.  We
 * decode the call, ask the policy, write the record, and only then
 * release the call or make it fail. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <unistd.h>
#include <linux/audit.h>

#include "launcher/filter.h"
#include "launcher/limits.h"
#include "tracer/decode.h"
#include "tracer/supervisor.h"
#include "tracer/unwind.h"
#include "tracer/views.h"

static int refuse(pid_t tid, int err)
{
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        return -1;
    regs.orig_rax = (unsigned long long)-1; /* skip the call ... */
    regs.rax = (unsigned long long)(long long)-err; /* ... and return -err */
    return (int)ptrace(PTRACE_SETREGS, tid, 0, &regs);
}

/* A stop the candidate's own filter asked for (its RET_TRACE, with any
 * data) on a call vigil's filter lets run untouched: continued, unrecorded,
 * as if there were no stop.  The call is looked up by number, the TRACE
 * data is never read; a call with an audited row is always decided. */
static bool lets_run(const struct vg_sup *e, int nr, const uint64_t args[6])
{
    const struct vg_sysent *ent = vg_sys_lookup(nr);
    return (!ent || (ent->flags & VG_SF_BASELINE)) &&
           vg_filter_classify(e->ctx->audit, nr, args) == VG_FILTER_ALLOW;
}

void vg_sup_on_seccomp(struct vg_sup *e, struct vg_task *t)
{
    struct __ptrace_syscall_info info;
    long n = ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof info, &info);
    /* Only the native ABI can stop here: the filter refuses the others
     * with RET_ERRNO, which outranks any filter's RET_TRACE. */
    if (n <= 0 || info.op != PTRACE_SYSCALL_INFO_SECCOMP || info.arch != AUDIT_ARCH_X86_64) {
        if (n < 0 && errno == ESRCH)
            return; /* killed meanwhile: nothing to release */
        /* A call that cannot be read cannot be decided: it is not let
         * through undecided, the run ends instead. */
        vg_sup_fail(e, t->nspid, "cannot read the stopped call of pid %d: %s", t->nspid,
                   n < 0 ? strerror(errno) : "not a native seccomp stop");
        return;
    }
    uint64_t args[6];
    memcpy(args, info.seccomp.args, sizeof args);
    if (lets_run(e, (int)info.seccomp.nr, args)) {
        ptrace(PTRACE_CONT, t->tid, 0, 0);
        return;
    }
    if (e->root_fd < 0) {
        /* Without the sandbox's root no path can be resolved: nothing is
         * decided on text instead, the run ends (the call stays stopped). */
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/root", (int)t->tid);
        e->root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (e->root_fd < 0) {
            vg_sup_fail(e, t->nspid, "cannot open the sandbox root (%s): %s", path,
                       strerror(errno));
            return;
        }
    }
    vg_sup_judge_stopped(e, t, (int)info.seccomp.nr, args);
}

/* Decode a call the thread is stopped in (or, for the baseline, stopped
 * right after the kernel refused it), decide it, write its record, and
 * only then release it or make it fail. */
void vg_sup_judge_stopped(struct vg_sup *e, struct vg_task *t, int nr, const uint64_t args[6])
{
    /* As under notify: once the sandbox is being killed nothing more is
     * decided or recorded (a cap's count in the log stays the cap). */
    if (e->ending) {
        vg_sup_release(e, t->tid);
        return;
    }
    vg_task_identify(&e->tasks, t);
    vg_sup_log_start(e, t, 0);
    struct vg_tracee tr;
    vg_sup_tracee(e, t, true, &tr);
    struct vg_call call;
    vg_decode_call(&tr, nr, args, &call);

    struct vg_call_verdict v;
    vg_decide_call(e->ctx, &call, e->root_fd, &v);
    if (v.record) {
        struct vg_syscall_ev ev;
        vg_sup_fill_event(e, t, &call, &v, &ev);
        struct vg_frame frames[VG_STACK_MAX];
        if ((v.decision != VG_DEC_ALLOW || e->ctx->opts->stacks_all) && vg_unwind_budget_take()) {
            ev.nstack = vg_unwind(e->unw, t->tgid, t->tid, frames, VG_STACK_MAX, &call.arena);
            ev.stack = frames;
        }
        vg_sup_py_frames(e, t, &ev, &call.arena);
        if (vg_sup_emit_call(e, &ev) < 0) {
            vg_call_free(&call);
            return; /* never release a call whose record is not written */
        }
    }
    if (v.kill) {
        vg_sup_policy_kill(e, t, &call, &v);
    } else if (v.refuse && refuse(t->tid, v.err) < 0) {
        vg_sup_kill_sandbox(e); /* cannot refuse it: do not let it run */
    } else {
        vg_sup_release(e, t->tid);
    }
    vg_call_free(&call);
}
