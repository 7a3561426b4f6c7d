/* ptrace_engine.c: the ptrace engine.  The seccomp filter stops audited
 * calls (PTRACE_EVENT_SECCOMP); for each we decode the call, ask the
 * policy, write the event, and only then release the call or make it fail.
 * The baseline's calls the filter refuses itself (RET_TRAP): they reach us
 * as the kernel's SIGSYS, are recorded the same way and fail with their
 * errno.  Fork/clone/exec/exit events go to lifecycle.c.  Everything runs
 * on one thread that waits in waitpid. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>

#include "tracer/decode.h"
#include "tracer/engine.h"
#include "launcher/filter.h"
#include "tracer/ptrace_int.h"
#include "tracer/tasks.h"
#include "tracer/ptrace/unwind.h"
#include "tracer/verdict.h"

/* How long the supervisor polls for the next stop before sleeping (see
 * wait_next); measured on 2-CPU VMs: 50 us turns an audited open from ~65
 * to ~30 us, and longer windows gain nothing. */
#define SPIN_NS 50000

uint64_t vg_pt_now(const struct engine *e)
{
    return vg_now_mono_ns() - e->ctx->start_mono_ns;
}

/* "file:line" of a rule, or "default". */
const char *vg_pt_rule_where(char *buf, size_t n, const char *file, uint32_t line)
{
    if (!file)
        return "default";
    snprintf(buf, n, "%s:%u", file, line);
    return buf;
}

void vg_pt_kill_sandbox(struct engine *e)
{
    e->ending = true;
    kill(e->ctx->init_pid, SIGKILL);
}

void vg_pt_fail(struct engine *e, int32_t pid, const char *fmt, ...)
{
    char why[sizeof e->ctx->out.kill_reason];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (!e->ending) { /* the first cause is the one reported */
        memcpy(e->ctx->out.kill_reason, why, sizeof why);
        e->ctx->out.policy_kill = true;
    }
    vg_pt_note(e, "error", why, pid);
    vg_pt_kill_sandbox(e);
}

/* A stopped task of a run that is ending never runs again: SIGKILL takes
 * a ptrace-stopped task down without its returning to user mode (the
 * pid namespace's teardown would reach it only later). */
static void kill_stopped(pid_t tid)
{
    kill(tid, SIGKILL); /* a tid names its whole process; ESRCH: already gone */
}

void vg_pt_release(struct engine *e, pid_t tid)
{
    if (e->ending)
        kill_stopped(tid);
    else
        ptrace(PTRACE_CONT, tid, 0, 0);
}

/* Every record goes through here: a record that cannot be written stops
 * the run before the call it describes is released. */
int vg_pt_emit(struct engine *e, struct vg_record *r)
{
    if (vg_log_write(e->ctx->log, r) == 0)
        return 0;
    if (!e->ctx->out.log_failed) {
        e->ctx->out.log_failed = true;
        snprintf(e->ctx->out.log_error, sizeof e->ctx->out.log_error, "%s",
                 vg_log_error(e->ctx->log));
    }
    vg_pt_kill_sandbox(e);
    return -1;
}

void vg_pt_note(struct engine *e, const char *what, const char *detail, int32_t pid)
{
    struct vg_record r = {.type = VG_REC_NOTE};
    r.u.note = (struct vg_note_ev){.ts_ns = vg_pt_now(e), .what = what, .detail = detail, .pid = pid};
    vg_pt_emit(e, &r);
}

/* ---- audited calls ---- */

void vg_pt_policy_kill(struct engine *e, const struct vg_task *t, const struct vg_call *call,
                       const struct vg_call_verdict *v)
{
    char where[300];
    snprintf(e->ctx->out.kill_reason, sizeof e->ctx->out.kill_reason, "%s %s: %s",
             call->ent ? call->ent->name : "syscall",
             call->args.resolved ? call->args.resolved : call->args.addr ? call->args.addr : "",
             vg_pt_rule_where(where, sizeof where, v->rule_file, v->rule_line));
    e->ctx->out.policy_kill = true;
    vg_pt_note(e, "kill", e->ctx->out.kill_reason, t->nspid);
    vg_pt_kill_sandbox(e);
}

static int refuse(pid_t tid, int err)
{
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        return -1;
    regs.orig_rax = (unsigned long long)-1; /* skip the call ... */
    regs.rax = (unsigned long long)(long long)-err; /* ... and return -err */
    return (int)ptrace(PTRACE_SETREGS, tid, 0, &regs);
}

void vg_pt_fill_event(struct engine *e, const struct vg_task *t, const struct vg_call *c,
                      const struct vg_call_verdict *v, struct vg_syscall_ev *ev)
{
    *ev = (struct vg_syscall_ev){
        .ts_ns = vg_pt_now(e), .pid = t->nspid, .tid = t->nstid, .hpid = t->tgid, .htid = t->tid,
        .proc = t->proc, .nr = c->nr, .name = c->ent ? c->ent->name : "unknown", .cls = c->cls,
        .args = c->args, .decision = v->decision, .rule_file = v->rule_file,
        .rule_line = v->rule_line, .rule_text = v->rule_text, .err = v->refuse ? v->err : 0,
    };
}

/* A stop the candidate's own filter asked for (its RET_TRACE, with any
 * data) on a call vigil's filter lets run untouched: continued, unrecorded,
 * as if there were no stop.  The call is looked up by number, the TRACE
 * data is never read; a call with an audited row is always decided. */
static bool lets_run(const struct engine *e, int nr, const uint64_t args[6])
{
    const struct vg_sysent *ent = vg_sys_lookup(nr);
    return (!ent || (ent->flags & VG_SF_BASELINE)) &&
           vg_filter_classify(e->ctx->audit, nr, args) == VG_FILTER_ALLOW;
}

static void judge(struct engine *e, struct vg_task *t, int nr, const uint64_t args[6]);

static void on_seccomp(struct engine *e, struct vg_task *t)
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
        vg_pt_fail(e, t->nspid, "cannot read the stopped call of pid %d: %s", t->nspid,
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
            vg_pt_fail(e, t->nspid, "cannot open the sandbox root (%s): %s", path,
                       strerror(errno));
            return;
        }
    }
    judge(e, t, (int)info.seccomp.nr, args);
}

/* Decode a call the thread is stopped in (or, for the baseline, stopped
 * right after the kernel refused it), decide it, write its record, and
 * only then release it or make it fail. */
static void judge(struct engine *e, struct vg_task *t, int nr, const uint64_t args[6])
{
    vg_task_identify(&e->tasks, t);
    vg_pt_log_start(e, t, 0);
    struct vg_tracee tr = {.tid = t->tid, .pid = t->tgid, .nspid = t->nspid,
                           .nstid = t->nstid, .root_fd = e->root_fd,
                           .cache = e->canon, .pivoted = true, .ptrace_stopped = true};
    struct vg_call call;
    vg_decode_call(&tr, nr, args, &call);

    struct vg_call_verdict v;
    vg_decide_call(e->ctx, &call, e->root_fd, &v);
    if (v.record) {
        struct vg_syscall_ev ev;
        vg_pt_fill_event(e, t, &call, &v, &ev);
        struct vg_frame frames[VG_STACK_MAX];
        if (v.decision != VG_DEC_ALLOW || e->ctx->opts->stacks_all) {
            ev.nstack = vg_unwind(e->unw, t->tgid, t->tid, frames, VG_STACK_MAX, &call.arena);
            ev.stack = frames;
        }
        e->ctx->out.counts[call.cls][v.decision]++;
        struct vg_record r = {.type = VG_REC_SYSCALL, .u.sys = ev};
        if (vg_pt_emit(e, &r) < 0) {
            vg_call_free(&call);
            return; /* never release a call whose record is not written */
        }
    }
    if (v.kill) {
        vg_pt_policy_kill(e, t, &call, &v);
    } else if (v.refuse && refuse(t->tid, v.err) < 0) {
        vg_pt_kill_sandbox(e); /* cannot refuse it: do not let it run */
    } else {
        vg_pt_release(e, t->tid);
    }
    vg_call_free(&call);
}

/* ---- the baseline's refusals ---- */

/* Is tid stopped right after a call the candidate's filter refused as
 * baseline with SECCOMP_RET_TRAP?  Judged on what the kernel left in the
 * thread, never on the siginfo: a candidate may queue itself a SIGSYS with
 * any si_code (rt_sigqueueinfo allows SYS_SECCOMP to oneself).
 *  - the native ABI (the kernel's own flag, kept until the signal is dealt
 *    with: a candidate's filter may trap an int 0x80 call);
 *  - orig_rax is the number the thread entered the kernel with (an
 *    interrupt, or sigreturn, sets it to -1, which no row has), and rax
 *    still equals it: the trap rolls the return register back, where a
 *    call that ran holds its result;
 *  - vigil's filter refuses that number with those arguments.
 * Registers saying so mean the call was refused by the kernel and never
 * ran, so a forger can at most get a true record of its own refused call. */
static bool trapped_baseline(const struct engine *e, pid_t tid, int *nr, uint64_t args[6])
{
    struct __ptrace_syscall_info info;
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof info, &info) <= 0 ||
        info.arch != AUDIT_ARCH_X86_64 || ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        return false;
    *nr = (int)regs.orig_rax; /* what the kernel and the filter go by: 32 bits */
    const uint64_t a[6] = {regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9};
    memcpy(args, a, sizeof a);
    return regs.rax == regs.orig_rax &&
           vg_filter_classify(e->ctx->audit, *nr, args) == VG_FILTER_BASELINE;
}

/* A SIGSYS.  The kernel's report of a baseline refusal is recorded, turned
 * into the row's errno and suppressed; any other (the candidate's own
 * filter trapping another call, one it sent itself) is left to be
 * delivered untouched.  If vigil could not read the thread, the signal is
 * delivered too: a refused call then kills the candidate, and never ran. */
static bool on_sigsys(struct engine *e, struct vg_task *t)
{
    int nr;
    uint64_t args[6];
    if (!trapped_baseline(e, t->tid, &nr, args))
        return false;
    judge(e, t, nr, args);
    return true;
}

/* ---- the loop ---- */

static bool is_stop_signal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

void vg_pt_on_stop(struct engine *e, pid_t tid, int status)
{
    struct vg_task *t = vg_tasks_get(&e->tasks, tid);
    int sig = WSTOPSIG(status), event = status >> 16;
    if (e->ending) {
        kill_stopped(tid);
        return;
    }
    if (!t) {
        /* A new task's first stop can come before its parent's event. */
        t = vg_tasks_add(&e->tasks, tid);
        if (!t) {
            vg_pt_fail(e, 0, "task table full: cannot follow host tid %d", (int)tid);
            kill_stopped(tid);
            return;
        }
        vg_task_identify(&e->tasks, t);
    }
    if (!t->attached) {
        t->attached = true;
        if (event == PTRACE_EVENT_STOP || sig == SIGSTOP) {
            /* A new task's first stop.  Until its creator's event is in,
             * it stays stopped: its records must follow its start record. */
            if (t->announced) {
                ptrace(PTRACE_CONT, tid, 0, 0);
            } else {
                t->held = true;
                e->nheld++;
            }
            return;
        }
    }
    switch (event) {
    case PTRACE_EVENT_SECCOMP:
        on_seccomp(e, t);
        return;
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
        vg_pt_on_new_task(e, t, event);
        break;
    case PTRACE_EVENT_EXEC:
        if (vg_pt_on_exec(e, t))
            return; /* killed where it stands */
        break;
    case PTRACE_EVENT_STOP:
        if (is_stop_signal(sig)) {
            ptrace(PTRACE_LISTEN, tid, 0, 0); /* group-stop: stay stopped */
            return;
        }
        break;
    case 0:
        /* Signal-delivery stop: pass the signal on, unless it is the
         * kernel's report of a baseline refusal. */
        if (sig == SIGSYS && on_sigsys(e, t))
            return;
        ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
        return;
    default:
        break;
    }
    ptrace(PTRACE_CONT, tid, 0, 0);
}

/* The next ptrace event.  A stop that has to wake a sleeping supervisor
 * on another CPU costs more than the rest of an audited call on a VM
 * (the wake-up is an inter-processor interrupt and a halt exit), so after
 * each event we poll briefly before sleeping: a candidate making audited
 * calls back to back is served without a wake-up, one that computes
 * costs at most the spin window of one CPU. */
static pid_t wait_next(const struct engine *e, int *status)
{
    uint64_t until = vg_now_mono_ns() + e->spin_ns;
    while (e->spin_ns) {
        pid_t tid = waitpid(-1, status, __WALL | WNOHANG);
        if (tid != 0)
            return tid;
        if (vg_now_mono_ns() >= until)
            break;
    }
    return waitpid(-1, status, __WALL);
}

static int supervise(struct vg_engine_ctx *ctx)
{
    struct engine e = {.ctx = ctx, .root_fd = -1};
    vg_tasks_init(&e.tasks);
    e.unw = vg_unwinder_new();
    e.canon = vg_canon_cache_new(ctx->immutable, ctx->nimmutable);
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 1)
        e.spin_ns = SPIN_NS;
    struct vg_task *init = vg_tasks_add(&e.tasks, ctx->init_pid);
    init->attached = true;
    init->tgid = ctx->init_pid;
    init->identified = true;

    for (;;) {
        int status;
        /* Blocking even after pid 1 is gone: every traced task is being
         * killed and will report; ECHILD says the last one did. */
        pid_t tid = wait_next(&e, &status);
        if (tid < 0 && errno == EINTR)
            continue;
        if (tid <= 0)
            break;
        if (WIFSTOPPED(status)) {
            vg_pt_on_stop(&e, tid, status);
            continue;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status))
            vg_pt_on_exit(&e, tid, status);
    }
    if (e.root_fd >= 0)
        close(e.root_fd);
    vg_unwinder_free(e.unw);
    vg_canon_cache_free(e.canon);
    vg_tasks_free(&e.tasks);
    return 0;
}

const struct vg_engine vg_engine_ptrace = {
    .name = "ptrace",
    .ptrace_opts = PTRACE_O_EXITKILL | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK |
                   PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC,
    .baseline = VG_BASELINE_TRAP,
    .supervise = supervise,
};
