/* supervisor.c: what both engines do with a decided call and with the
 * end of a run: timestamps, the records (a record that cannot be written
 * stops the run before its call is released), the counts of decisions,
 * and killing the sandbox.  See supervisor.h. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include "launcher/limits.h"
#include "tracer/decode.h"
#include "tracer/supervisor.h"
#include "core/decide.h"

uint64_t vg_sup_now(const struct vg_sup *e)
{
    return vg_now_mono_ns() - e->ctx->start_mono_ns;
}

/* "file:line" of a rule, or "default". */
const char *vg_sup_rule_where(char *buf, size_t n, const char *file, uint32_t line)
{
    if (!file)
        return "default";
    snprintf(buf, n, "%s:%u", file, line);
    return buf;
}

void vg_sup_kill_sandbox(struct vg_sup *e)
{
    e->ending = true;
    kill(e->ctx->init_pid, SIGKILL);
}

void vg_sup_fail(struct vg_sup *e, int32_t pid, const char *fmt, ...)
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
    vg_sup_note(e, "error", why, pid);
    vg_sup_kill_sandbox(e);
}

/* A stopped task of a run that is ending never runs again: SIGKILL takes
 * a ptrace-stopped task down without its returning to user mode (the
 * pid namespace's teardown would reach it only later). */
static void kill_stopped(pid_t tid)
{
    kill(tid, SIGKILL); /* a tid names its whole process; ESRCH: already gone */
}

void vg_sup_release(struct vg_sup *e, pid_t tid)
{
    if (e->ending)
        kill_stopped(tid);
    else
        ptrace(PTRACE_CONT, tid, 0, 0);
}

void vg_sup_limit_end(struct vg_sup *e, enum vg_limit l, const char *why, int32_t pid)
{
    if (e->ending)
        return;
    e->ctx->out.limit_seen[l] = true;
    e->ctx->out.limit_ended = true;
    e->ctx->out.limit_end = l;
    vg_sup_kill_sandbox(e); /* first: the note's own record finds the run ending */
    vg_sup_note(e, "limit", why, pid);
}

/* The log's cap (event/writer.h): the record that reached it is written,
 * then the run ends, with room left for its end and trailer; no record is
 * ever dropped for it. */
static void check_log_cap(struct vg_sup *e)
{
    if (e->ending || !vg_log_full(e->ctx->log))
        return;
    char why[160];
    snprintf(why, sizeof why, "log: %llu bytes written, the cap less the room kept for the "
             "run's end: sandbox killed", (unsigned long long)vg_log_bytes(e->ctx->log));
    vg_sup_limit_end(e, VG_LIM_LOG, why, 0);
}

/* Every record goes through here: a record that cannot be written stops
 * the run before the call it describes is released. */
int vg_sup_emit(struct vg_sup *e, struct vg_record *r)
{
    if (vg_log_write(e->ctx->log, r) == 0) {
        check_log_cap(e);
        return 0;
    }
    if (!e->ctx->out.log_failed) {
        e->ctx->out.log_failed = true;
        snprintf(e->ctx->out.log_error, sizeof e->ctx->out.log_error, "%s",
                 vg_log_error(e->ctx->log));
    }
    vg_sup_kill_sandbox(e);
    return -1;
}

void vg_sup_note(struct vg_sup *e, const char *what, const char *detail, int32_t pid)
{
    struct vg_record r = {.type = VG_REC_NOTE};
    r.u.note = (struct vg_note_ev){.ts_ns = vg_sup_now(e), .what = what, .detail = detail, .pid = pid};
    vg_sup_emit(e, &r);
}

void vg_sup_policy_kill(struct vg_sup *e, const struct vg_task *t, const struct vg_call *call,
                       const struct vg_call_verdict *v)
{
    char where[300];
    snprintf(e->ctx->out.kill_reason, sizeof e->ctx->out.kill_reason, "%s %s: %s",
             call->ent ? call->ent->name : "syscall",
             call->args.resolved ? call->args.resolved : call->args.addr ? call->args.addr : "",
             vg_sup_rule_where(where, sizeof where, v->rule->file, v->rule->line));
    e->ctx->out.policy_kill = true;
    vg_sup_note(e, "kill", e->ctx->out.kill_reason, t->nspid);
    vg_sup_kill_sandbox(e);
}

void vg_sup_fill_event(struct vg_sup *e, const struct vg_task *t, const struct vg_call *c,
                      const struct vg_call_verdict *v, struct vg_syscall_ev *ev)
{
    *ev = (struct vg_syscall_ev){
        .ts_ns = vg_sup_now(e), .pid = t->nspid, .tid = t->nstid, .hpid = t->tgid, .htid = t->tid,
        .proc = t->proc, .nr = c->nr, .name = c->ent ? c->ent->name : "unknown", .cls = c->cls,
        .args = c->args, .decision = v->decision, .rule = *v->rule,
        .err = v->refuse ? v->err : 0,
        .probe = v->probe,
    };
}

void vg_sup_py_frames(struct vg_sup *e, const struct vg_task *t, struct vg_syscall_ev *ev,
                      struct vg_arena *a)
{
    if (e->py_frames)
        e->py_frames(e, t, ev, a);
}

void vg_sup_tracee(const struct vg_sup *e, const struct vg_task *t, bool ptrace_stopped,
                   struct vg_tracee *tr)
{
    *tr = (struct vg_tracee){.tid = t->tid, .pid = t->tgid, .nspid = t->nspid, .nstid = t->nstid,
                             .root_fd = e->root_fd, .cache = e->canon, .pivoted = true,
                             .ptrace_stopped = ptrace_stopped};
}

/* What the refusals cap counts: a call refused, or in a dry run one that
 * would have been (a kill ends the run by itself). */
static bool is_refusal(enum vg_decision d)
{
    return d == VG_DEC_DENY || d == VG_DEC_WOULD_DENY || d == VG_DEC_WOULD_KILL;
}

/* The refusals cap: a candidate refused in a loop (`rm -rf` of the whole
 * tree) would otherwise run on to its time limit, all of it logged. */
static void check_refusals_cap(struct vg_sup *e, int32_t pid)
{
    const struct vg_limits *l = e->ctx->limits;
    uint64_t cap = l ? l->v[VG_LIM_REFUSALS] : 0;
    if (!cap || e->ctx->out.refusals < cap)
        return;
    char why[160];
    snprintf(why, sizeof why, "refusals: %llu calls refused, the cap: sandbox killed",
             (unsigned long long)e->ctx->out.refusals);
    vg_sup_limit_end(e, VG_LIM_REFUSALS, why, pid);
}

/* The one place decisions are counted (the trailer's and the result's
 * counts, and the refusals cap's). */
void vg_sup_count(struct vg_sup *e, enum vg_class cls, enum vg_decision d)
{
    e->ctx->out.counts[cls][d]++;
    if (is_refusal(d))
        e->ctx->out.refusals++;
}

/* Counted, written, and only then the refusals cap looked at: the refusal
 * that reaches the cap is in the log, the note that ends the run after it. */
int vg_sup_emit_call(struct vg_sup *e, const struct vg_syscall_ev *ev)
{
    vg_sup_count(e, ev->cls, ev->decision);
    struct vg_record r = {.type = VG_REC_SYSCALL, .u.sys = *ev};
    int rc = vg_sup_emit(e, &r);
    if (rc == 0)
        check_refusals_cap(e, ev->pid);
    return rc;
}
