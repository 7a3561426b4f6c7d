/* lifecycle.c: the life of every process and thread of the run, from the
 * ptrace events: a start record once per task (before any of its calls),
 * the image it execs (and the check that the real executable is allowed),
 * its exit. */
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
#include "tracer/ptrace_int.h"


/* The start record of a task, written once, at whichever comes first of
 * its parent's fork/clone event and its own first audited call.  Process
 * identities are handed out here, so they count the processes recorded. */
void vg_pt_log_start(struct engine *e, struct vg_task *t, uint64_t flags)
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
        .ts_ns = vg_pt_now(e), .kind = VG_PROC_START, .pid = t->is_thread ? t->nstid : t->nspid,
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
    vg_pt_emit(e, &r);
}

void vg_pt_on_new_task(struct engine *e, struct vg_task *parent_task, int event)
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
    vg_pt_log_start(e, t, flags);
    if (t->held) {
        e->nheld--;
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
void vg_pt_on_exec(struct engine *e, struct vg_task *t)
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
    r.u.proc = (struct vg_proc_ev){.ts_ns = vg_pt_now(e), .kind = VG_PROC_EXEC, .pid = t->nspid,
                                   .hpid = t->tid, .proc = t->proc, .exe = exe, .exit_code = -1};
    read_cmdline(t->tid, &a, (const char ***)&r.u.proc.argv, &r.u.proc.argc);
    vg_pt_emit(e, &r);
    vg_arena_free(&a);

    const struct vg_policy *pol = e->ctx->pol;
    bool is_command = e->ctx->command_path && !strcmp(exe, e->ctx->command_path);
    if (!e->ctx->audited[VG_CLASS_EXEC] || is_command)
        return;
    struct vg_verdict v = vg_policy_decide_path(pol, VG_CLASS_EXEC, exe);
    if (v.action == VG_ACT_ALLOW)
        return;
    char where[300], reason[sizeof e->ctx->out.kill_reason];
    snprintf(reason, sizeof reason,
             "exec check: %s is running but the policy does not allow executing it (%s)", exe,
             vg_pt_rule_where(where, sizeof where, v.rule ? v.rule->file : NULL, v.rule ? v.rule->line : 0));
    if (e->ctx->opts->mode == VG_MODE_DRY_RUN) {
        /* A dry run ends nothing, but the reader must learn it would have. */
        vg_pt_note(e, "would-kill", reason, t->nspid);
        return;
    }
    memcpy(e->ctx->out.kill_reason, reason, sizeof reason);
    e->ctx->out.policy_kill = true;
    vg_pt_note(e, "kill", e->ctx->out.kill_reason, t->nspid);
    vg_pt_kill_sandbox(e);
}

/* A held task whose creator died before reporting the fork/clone event
 * would wait forever: record it with what /proc told us and let it run. */
static void release_orphans(struct engine *e)
{
    /* called on every exit: only walk the table when someone waits */
    for (size_t i = 0; e->nheld && i < e->tasks.cap; i++) {
        struct vg_task *t = &e->tasks.slots[i];
        if (!t->tid || !t->held)
            continue;
        pid_t creator = t->is_thread ? t->tgid : t->ptid;
        if (vg_tasks_get(&e->tasks, creator))
            continue;
        t->held = false;
        e->nheld--;
        t->announced = true;
        vg_pt_log_start(e, t, 0);
        ptrace(PTRACE_CONT, t->tid, 0, 0);
    }
}

void vg_pt_on_exit(struct engine *e, pid_t tid, int status)
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
            .ts_ns = vg_pt_now(e), .kind = VG_PROC_EXIT, .pid = t->is_thread ? t->nstid : t->nspid,
            .hpid = tid, .proc = t->proc, .thread = t->is_thread,
            .exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            .signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0,
            .core = WIFSIGNALED(status) && WCOREDUMP(status),
        };
        vg_pt_emit(e, &r);
    }
    if (t && !t->is_thread)
        vg_unwinder_forget(e->unw, t->tgid);
    if (t && t->held)
        e->nheld--;
    vg_tasks_del(&e->tasks, tid);
    release_orphans(e);
}

