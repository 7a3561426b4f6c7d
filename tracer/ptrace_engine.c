/* ptrace_engine.c: the ptrace engine.  The seccomp filter stops audited
 * calls (PTRACE_EVENT_SECCOMP); for each we decode the call, ask the
 * policy, write the event, and only then release the call or make it fail.
 * Fork/clone/exec/exit events give the process lifecycle.  Everything runs
 * on one thread that blocks in waitpid. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/decode.h"
#include "tracer/engine.h"
#include "tracer/tasks.h"
#include "tracer/unwind.h"
#include "tracer/verdict.h"

/* How long the supervisor polls for the next stop before sleeping (see
 * wait_next); measured on 2-CPU VMs: 50 us turns an audited open from ~65
 * to ~30 us, and longer windows gain nothing. */
#define SPIN_NS 50000

struct engine {
    struct vg_engine_ctx *ctx;
    struct vg_tasks tasks;
    struct vg_unwinder *unw;
    int root_fd;            /* the sandbox's "/", opened at the first stop */
    struct vg_canon_cache *canon; /* symlink lookups under immutable trees */
    pid_t cand_pid;         /* host pid of the candidate's first process */
    bool init_gone;
    uint64_t spin_ns;       /* 0 on a single CPU: spinning would starve the candidate */
};

static uint64_t now_ts(const struct engine *e)
{
    return vg_now_mono_ns() - e->ctx->start_mono_ns;
}

/* "file:line" of a rule, or "default". */
static const char *rule_where(char *buf, size_t n, const char *file, uint32_t line)
{
    if (!file)
        return "default";
    snprintf(buf, n, "%s:%u", file, line);
    return buf;
}

static void kill_sandbox(struct engine *e)
{
    kill(e->ctx->init_pid, SIGKILL);
}

/* Every record goes through here: a record that cannot be written stops
 * the run before the call it describes is released. */
static int emit(struct engine *e, struct vg_record *r)
{
    if (vg_log_write(e->ctx->log, r) == 0)
        return 0;
    if (!e->ctx->out.log_failed) {
        e->ctx->out.log_failed = true;
        snprintf(e->ctx->out.log_error, sizeof e->ctx->out.log_error, "%s",
                 vg_log_error(e->ctx->log));
    }
    kill_sandbox(e);
    return -1;
}

static void emit_note(struct engine *e, const char *what, const char *detail, int32_t pid)
{
    struct vg_record r = {.type = VG_REC_NOTE};
    r.u.note = (struct vg_note_ev){.ts_ns = now_ts(e), .what = what, .detail = detail, .pid = pid};
    emit(e, &r);
}

/* ---- process lifecycle ---- */

/* The start record of a task, written once, at whichever comes first of
 * its parent's fork/clone event and its own first audited call.  Process
 * identities are handed out here, so they count the processes recorded. */
static void log_start(struct engine *e, struct vg_task *t, uint64_t flags)
{
    if (t->logged || t->tid == e->ctx->init_pid)
        return;
    t->logged = true;
    /* A thread belongs to its process; a process to its parent. */
    const struct vg_task *parent = vg_tasks_get(&e->tasks, t->is_thread ? t->tgid : t->ptid);
    bool parent_is_init = !parent || parent->tid == e->ctx->init_pid;
    t->proc = t->is_thread && parent ? parent->proc : vg_tasks_new_proc(&e->tasks);
    struct vg_record r = {.type = VG_REC_PROC};
    r.u.proc = (struct vg_proc_ev){
        .ts_ns = now_ts(e), .kind = VG_PROC_START, .pid = t->is_thread ? t->nstid : t->nspid,
        .hpid = t->tid, .proc = t->proc,
        .parent = parent_is_init ? 0 : parent->proc,
        .ppid = parent_is_init ? 0 : parent->nspid, .clone_flags = flags,
        .thread = t->is_thread, .exit_code = -1,
    };
    if (!t->is_thread)
        e->ctx->out.procs++;
    /* tasks holds init too, which is not the candidate's */
    if (e->tasks.n - 1 > e->ctx->out.max_tasks)
        e->ctx->out.max_tasks = e->tasks.n - 1;
    emit(e, &r);
}

static void on_new_task(struct engine *e, struct vg_task *parent_task, int event)
{
    /* Adding a task may move the table: keep copies, not the pointer. */
    const struct vg_task parent_copy = *parent_task, *parent = &parent_copy;
    unsigned long msg = 0;
    if (ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg) < 0)
        return;
    pid_t tid = (pid_t)msg;
    uint64_t flags = 0;
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, parent->tid, 0, &regs) == 0) {
        if (regs.orig_rax == SYS_clone)
            flags = regs.rdi;
        else if (event == PTRACE_EVENT_VFORK)
            flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
        else
            flags = SIGCHLD;
    }
    bool known = vg_tasks_get(&e->tasks, tid) != NULL;
    struct vg_task *t = vg_tasks_add(&e->tasks, tid);
    t->ptid = parent->tid;
    if (!vg_task_identify(&e->tasks, t) && !known) {
        /* The child already ran, exited and was reaped before this event
         * reached us: its records (if it made any) are written. */
        vg_tasks_del(&e->tasks, tid);
        return;
    }
    if (parent->tid == e->ctx->init_pid && !e->cand_pid)
        e->cand_pid = tid;
    t->announced = true;
    log_start(e, t, flags);
    if (t->held) {
        /* It stopped first and waited for this event: let it go now that
         * its start record (with the clone flags) precedes its calls. */
        t->held = false;
        ptrace(PTRACE_CONT, tid, 0, 0);
    }
}

static void read_cmdline(pid_t pid, struct vg_arena *a, const char ***argv, uint32_t *argc)
{
    char path[64], buf[8192];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *argc = 0;
    *argv = NULL;
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    const char **v = vg_arena_alloc(a, 65 * sizeof *v);
    uint32_t c = 0;
    for (ssize_t i = 0; i < n && c < 64; i += (ssize_t)strlen(buf + i) + 1)
        v[c++] = vg_arena_strdup(a, buf + i);
    *argv = v;
    *argc = c;
}

/* After a successful exec: record the new image, and check that what
 * really runs is allowed (the path checked before the call could have been
 * swapped by another thread, or a #! line names an interpreter). */
static void on_exec(struct engine *e, struct vg_task *t)
{
    unsigned long former = 0;
    ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &former);
    if ((pid_t)former != t->tid) {
        /* A thread exec'd: it took over the leader's tid.  Deleting moves
         * entries, so look ours up again afterwards. */
        pid_t tid = t->tid;
        vg_tasks_del(&e->tasks, (pid_t)former);
        t = vg_tasks_get(&e->tasks, tid);
        if (!t)
            return;
    }
    vg_unwinder_forget(e->unw, t->tgid);
    struct vg_arena a = {0};
    char path[64], exe[4096];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)t->tid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    struct vg_record r = {.type = VG_REC_PROC};
    r.u.proc = (struct vg_proc_ev){.ts_ns = now_ts(e), .kind = VG_PROC_EXEC, .pid = t->nspid,
                                   .hpid = t->tid, .proc = t->proc, .exe = exe, .exit_code = -1};
    read_cmdline(t->tid, &a, (const char ***)&r.u.proc.argv, &r.u.proc.argc);
    emit(e, &r);
    vg_arena_free(&a);

    const struct vg_policy *pol = e->ctx->pol;
    bool is_command = e->ctx->command_path && !strcmp(exe, e->ctx->command_path);
    if (!vg_policy_audits(pol, VG_CLASS_EXEC) || is_command)
        return;
    struct vg_verdict v = vg_policy_decide_path(pol, VG_CLASS_EXEC, exe);
    if (v.action == VG_ACT_ALLOW)
        return;
    char where[300], reason[sizeof e->ctx->out.kill_reason];
    snprintf(reason, sizeof reason,
             "exec check: %s is running but the policy does not allow executing it (%s)", exe,
             rule_where(where, sizeof where, v.rule ? v.rule->file : NULL, v.rule ? v.rule->line : 0));
    if (e->ctx->opts->mode == VG_MODE_DRY_RUN) {
        /* A dry run ends nothing, but the reader must learn it would have. */
        emit_note(e, "would-kill", reason, t->nspid);
        return;
    }
    memcpy(e->ctx->out.kill_reason, reason, sizeof reason);
    e->ctx->out.policy_kill = true;
    emit_note(e, "kill", e->ctx->out.kill_reason, t->nspid);
    kill_sandbox(e);
}

/* A held task whose creator died before reporting the fork/clone event
 * would wait forever: record it with what /proc told us and let it run. */
static void release_orphans(struct engine *e)
{
    for (size_t i = 0; i < e->tasks.cap; i++) {
        struct vg_task *t = &e->tasks.slots[i];
        if (!t->tid || !t->held)
            continue;
        pid_t creator = t->is_thread ? t->tgid : t->ptid;
        if (vg_tasks_get(&e->tasks, creator))
            continue;
        t->held = false;
        t->announced = true;
        log_start(e, t, 0);
        ptrace(PTRACE_CONT, t->tid, 0, 0);
    }
}

static void on_exit_status(struct engine *e, pid_t tid, int status)
{
    if (tid == e->ctx->init_pid) {
        e->init_gone = true;
        vg_tasks_del(&e->tasks, tid);
        return;
    }
    struct vg_task *t = vg_tasks_get(&e->tasks, tid);
    if (tid == e->cand_pid) {
        e->ctx->out.cand_done = true;
        e->ctx->out.cand_status = status;
    }
    if (t && t->logged) {
        struct vg_record r = {.type = VG_REC_PROC};
        r.u.proc = (struct vg_proc_ev){
            .ts_ns = now_ts(e), .kind = VG_PROC_EXIT, .pid = t->is_thread ? t->nstid : t->nspid,
            .hpid = tid, .proc = t->proc, .thread = t->is_thread,
            .exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            .signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0,
            .core = WIFSIGNALED(status) && WCOREDUMP(status),
        };
        emit(e, &r);
    }
    if (t && !t->is_thread)
        vg_unwinder_forget(e->unw, t->tgid);
    vg_tasks_del(&e->tasks, tid);
    release_orphans(e);
}

/* ---- audited calls ---- */

static int refuse(pid_t tid, int err)
{
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        return -1;
    regs.orig_rax = (unsigned long long)-1; /* skip the call ... */
    regs.rax = (unsigned long long)(long long)-err; /* ... and return -err */
    return (int)ptrace(PTRACE_SETREGS, tid, 0, &regs);
}

static void fill_event(struct engine *e, const struct vg_task *t, const struct vg_call *c,
                       const struct vg_call_verdict *v, struct vg_syscall_ev *ev)
{
    *ev = (struct vg_syscall_ev){
        .ts_ns = now_ts(e), .pid = t->nspid, .tid = t->nstid, .hpid = t->tgid, .htid = t->tid,
        .proc = t->proc, .nr = c->nr, .name = c->ent ? c->ent->name : "unknown", .cls = c->cls,
        .args = c->args, .decision = v->decision, .rule_file = v->rule_file,
        .rule_line = v->rule_line, .rule_text = v->rule_text, .err = v->refuse ? v->err : 0,
    };
}

static void on_seccomp(struct engine *e, struct vg_task *t)
{
    struct __ptrace_syscall_info info;
    if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof info, &info) <= 0 ||
        info.op != PTRACE_SYSCALL_INFO_SECCOMP) {
        ptrace(PTRACE_CONT, t->tid, 0, 0);
        return;
    }
    if (e->root_fd < 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/root", (int)t->tid);
        e->root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    vg_task_identify(&e->tasks, t);
    log_start(e, t, 0);
    struct vg_tracee tr = {.tid = t->tid, .pid = t->tgid, .root_fd = e->root_fd,
                           .cache = e->canon, .pivoted = true};
    struct vg_call call;
    memset(&call, 0, sizeof call);
    uint64_t args[6];
    memcpy(args, info.seccomp.args, sizeof args);
    vg_decode_call(&tr, (int)info.seccomp.nr, args, &call);

    struct vg_call_verdict v;
    vg_decide_call(e->ctx, &call, e->root_fd, &v);
    if (v.record) {
        struct vg_syscall_ev ev;
        fill_event(e, t, &call, &v, &ev);
        struct vg_frame frames[VG_STACK_MAX];
        if (v.decision != VG_DEC_ALLOW || e->ctx->opts->stacks_all) {
            ev.nstack = vg_unwind(e->unw, t->tgid, t->tid, frames, VG_STACK_MAX, &call.arena);
            ev.stack = frames;
        }
        e->ctx->out.counts[call.cls][v.decision]++;
        struct vg_record r = {.type = VG_REC_SYSCALL, .u.sys = ev};
        if (emit(e, &r) < 0) {
            vg_call_free(&call);
            return; /* never release a call whose record is not written */
        }
    }
    if (v.kill) {
        char where[300];
        snprintf(e->ctx->out.kill_reason, sizeof e->ctx->out.kill_reason, "%s %s: %s",
                 call.ent ? call.ent->name : "syscall",
                 call.args.resolved ? call.args.resolved : call.args.addr ? call.args.addr : "",
                 rule_where(where, sizeof where, v.rule_file, v.rule_line));
        e->ctx->out.policy_kill = true;
        emit_note(e, "kill", e->ctx->out.kill_reason, t->nspid);
        kill_sandbox(e);
    } else if (v.refuse && refuse(t->tid, v.err) < 0) {
        kill_sandbox(e); /* cannot refuse it: do not let it run */
    } else {
        ptrace(PTRACE_CONT, t->tid, 0, 0);
    }
    vg_call_free(&call);
}

/* ---- the loop ---- */

static bool is_stop_signal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void on_stop(struct engine *e, pid_t tid, int status)
{
    struct vg_task *t = vg_tasks_get(&e->tasks, tid);
    int sig = WSTOPSIG(status), event = status >> 16;
    if (!t) {
        /* A new task's first stop can come before its parent's event. */
        t = vg_tasks_add(&e->tasks, tid);
        vg_task_identify(&e->tasks, t);
    }
    if (!t->attached) {
        t->attached = true;
        if (event == PTRACE_EVENT_STOP || sig == SIGSTOP) {
            /* A new task's first stop.  Until its creator's event is in,
             * it stays stopped: its records must follow its start record. */
            if (t->announced)
                ptrace(PTRACE_CONT, tid, 0, 0);
            else
                t->held = true;
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
        on_new_task(e, t, event);
        break;
    case PTRACE_EVENT_EXEC:
        on_exec(e, t);
        break;
    case PTRACE_EVENT_STOP:
        if (is_stop_signal(sig)) {
            ptrace(PTRACE_LISTEN, tid, 0, 0); /* group-stop: stay stopped */
            return;
        }
        break;
    case 0:
        /* Signal-delivery stop: pass the signal on. */
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
            on_stop(&e, tid, status);
            continue;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status))
            on_exit_status(&e, tid, status);
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
    .supervise = supervise,
};
