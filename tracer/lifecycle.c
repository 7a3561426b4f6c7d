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
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "tracer/argv_rec.h"
#include "tracer/decode.h"
#include "tracer/unwind.h"
#include "tracer/supervisor.h"
#include "tracer/views.h"

#define CMDLINE_FIRST 4096 /* first read of /proc/PID/cmdline; grows as needed */


/* The start record of a task, written once, at whichever comes first of
 * its parent's fork/clone event and its own first audited call.  Process
 * identities are handed out here, so they count the processes recorded. */
void vg_sup_log_start(struct vg_sup *e, struct vg_task *t, uint64_t flags)
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
        .ts_ns = vg_sup_now(e), .kind = VG_PROC_START, .pid = t->is_thread ? t->nstid : t->nspid,
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
    vg_sup_emit(e, &r);
}

void vg_sup_on_new_task(struct vg_sup *e, struct vg_task *parent_task, int event)
{
    /* Adding a task may move the table: keep copies, not the pointer. */
    const struct vg_task parent_copy = *parent_task, *parent = &parent_copy;
    unsigned long msg = 0;
    long got = ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg);
    if (got < 0 && errno == ESRCH)
        return; /* the creator died meanwhile: release_orphans frees the child */
    if (got < 0 || msg == 0) {
        /* A task we cannot account for: the run ends. */
        vg_sup_fail(e, parent->nspid, "cannot read the new task of pid %d: %s", parent->nspid,
                   got < 0 ? strerror(errno) : "no tid");
        return;
    }
    pid_t tid = (pid_t)msg;
    uint64_t flags = 0;
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, parent->tid, 0, &regs) == 0) {
        if (regs.orig_rax == VG_NR_clone)
            flags = regs.rdi;
        else if (event == PTRACE_EVENT_VFORK)
            flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
        else
            flags = SIGCHLD;
    }
    bool known = vg_tasks_get(&e->tasks, tid) != NULL;
    struct vg_task *t = vg_tasks_add(&e->tasks, tid);
    if (!t) {
        vg_sup_fail(e, parent->nspid, "task table full: cannot follow a new task of pid %d",
                   parent->nspid);
        return;
    }
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
    vg_sup_log_start(e, t, flags);
    if (t->held) {
        e->nheld--;
        /* It stopped first and waited for this event: let it go now that
         * its start record (with the clone flags) precedes its calls. */
        t->held = false;
        vg_sup_release(e, tid);
    }
}

/* The whole of /proc/PID/cmdline: the argv the kernel copied for the new
 * image (no thread of the candidate can touch it while the task is stopped
 * at its exec event).  -1 when it cannot be read. */
static int read_cmdline(pid_t pid, struct vg_arena *a, struct vg_proc_ev *ev)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t cap = CMDLINE_FIRST, n = 0;
    char *buf = vg_xmalloc(cap);
    ssize_t got;
    while ((got = read(fd, buf + n, cap - n)) > 0) {
        n += (size_t)got;
        if (n == cap)
            buf = vg_xrealloc(buf, cap *= 2);
    }
    close(fd);
    if (got < 0) {
        free(buf);
        return -1;
    }
    struct vg_argv_rec rec;
    vg_argv_rec_init(&rec, a);
    for (size_t i = 0; i < n;) {
        const char *nul = memchr(buf + i, 0, n - i);
        size_t len = nul ? (size_t)(nul - (buf + i)) : n - i;
        vg_argv_rec_add(&rec, buf + i, len);
        i += len + 1;
    }
    vg_argv_rec_done(&rec, &ev->argv, &ev->argc, &ev->argv_full);
    free(buf);
    return 0;
}

/* The executable the task runs now: its path into exe (exe[0] = 0 when
 * /proc/PID/exe cannot be read) and its identity into st.  The
 * candidate's first exec (vigil's own, before any candidate code ran)
 * tells which file the command is.  Returns 0, or the errno. */
static int read_image(struct vg_sup *e, const struct vg_task *t, char *exe, size_t size,
                      struct stat *st)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)t->tid);
    ssize_t n = readlink(path, exe, size - 1);
    exe[n > 0 ? n : 0] = 0;
    if (n <= 0 || stat(path, st) < 0) {
        exe[0] = 0;
        return n == 0 ? ENOENT : errno;
    }
    struct vg_command_id *id = &e->ctx->command_id;
    if (!id->seen && t->tgid == e->cand_pid) {
        id->seen = true;
        const char *cmd = e->ctx->command_path;
        if (cmd && !strcmp(exe, cmd)) {
            *id = (struct vg_command_id){.seen = true, .known = true};
            vg_fs_node_of(st, &id->node);
        }
    }
    return 0;
}

/* Kill a task stopped at its exec event: SIGKILL ends a ptrace-stopped
 * task without its returning to user mode, so the image never runs one
 * instruction.  Then the run ends. */
static void kill_at_exec(struct vg_sup *e, struct vg_task *t)
{
    if (kill(t->tid, SIGKILL) < 0 && errno != ESRCH)
        vg_sup_fail(e, t->nspid, "cannot kill pid %d at its exec: %s", t->nspid, strerror(errno));
    vg_sup_kill_sandbox(e);
}

/* The exec check's verdict (core/decide.c) carried out: counted, noted,
 * and the task killed where it stands unless this is a dry run. */
static bool check_image(struct vg_sup *e, struct vg_task *t, const char *exe,
                        const struct stat *st)
{
    const char *image = exe[0] ? exe : NULL;
    struct vg_call_verdict v;
    vg_decide_exec_image(e->ctx, image, st, &v);
    if (!v.record || v.decision == VG_DEC_ALLOW)
        return false;
    vg_sup_count(e, VG_CLASS_EXEC, v.decision);
    char where[300], reason[sizeof e->ctx->out.kill_reason];
    const char *cmd = e->ctx->command_path;
    if (!image)
        snprintf(reason, sizeof reason, "%s (pid %d)", v.rule->text, t->nspid);
    else
        snprintf(reason, sizeof reason,
                 "exec check: %s is running but the policy does not allow executing it%s (%s)", exe,
                 cmd && !strcmp(exe, cmd) ? " (not the command file vigil checked: replaced)" : "",
                 vg_sup_rule_where(where, sizeof where, v.rule->file, v.rule->line));
    if (!v.kill) {
        /* A dry run ends nothing, but the reader must learn it would have. */
        vg_sup_note(e, "would-kill", reason, t->nspid);
        return false;
    }
    memcpy(e->ctx->out.kill_reason, reason, sizeof reason);
    e->ctx->out.policy_kill = true;
    vg_sup_note(e, "kill", e->ctx->out.kill_reason, t->nspid);
    kill_at_exec(e, t);
    return true;
}

/* After a successful exec: record the new image, and check that what
 * really runs is allowed.  The task is still stopped at the exec event. */
bool vg_sup_on_exec(struct vg_sup *e, struct vg_task *t)
{
    unsigned long former = 0;
    if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &former) < 0) {
        if (errno != ESRCH) /* gone: nothing to continue or check */
            vg_sup_fail(e, t->nspid, "cannot read the exec event of pid %d: %s", t->nspid,
                       strerror(errno));
        return true;
    }
    if ((pid_t)former != t->tid) {
        /* A thread exec'd: it took over the leader's tid.  Deleting moves
         * entries, so look ours up again afterwards. */
        pid_t tid = t->tid;
        vg_tasks_del(&e->tasks, (pid_t)former);
        t = vg_tasks_get(&e->tasks, tid);
        if (!t) { /* cannot happen: but an unknown image must not run */
            vg_sup_fail(e, 0, "exec event of an untracked task (host tid %d)", (int)tid);
            kill(tid, SIGKILL);
            return true;
        }
    }
    vg_unwinder_forget(e->unw, t->tgid);
    if (e->py_forget)
        e->py_forget(e, t->proc);
    char exe[4096];
    struct stat st;
    int err = read_image(e, t, exe, sizeof exe, &st);
    struct vg_arena a = {0};
    struct vg_record r = {.type = VG_REC_PROC};
    r.u.proc = (struct vg_proc_ev){.ts_ns = vg_sup_now(e), .kind = VG_PROC_EXEC, .pid = t->nspid,
                                   .hpid = t->tid, .proc = t->proc, .exe = exe, .exit_code = -1};
    if (err == ENOENT || err == ESRCH) {
        /* No exe: the task has no memory any more, it is exiting (the
         * sandbox's teardown reached it at this very stop).  The exec is
         * recorded, without the image nobody can read now; nothing of it
         * can run, its exit record follows. */
        r.u.proc.exe = NULL;
        vg_sup_emit(e, &r);
        kill(t->tid, SIGKILL);
        return true;
    }
    int cmdline = read_cmdline(t->tid, &a, &r.u.proc);
    int emitted = vg_sup_emit(e, &r);
    vg_arena_free(&a);
    if (cmdline < 0 || emitted < 0) {
        /* What runs cannot be recorded: it does not run. */
        if (cmdline < 0)
            vg_sup_fail(e, t->nspid, "cannot read the arguments of pid %d at its exec", t->nspid);
        kill_at_exec(e, t);
        return true;
    }
    return check_image(e, t, exe, &st);
}

/* A held task whose creator died before reporting the fork/clone event
 * would wait forever: record it with what /proc told us and let it run. */
static void release_orphans(struct vg_sup *e)
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
        vg_sup_log_start(e, t, 0);
        vg_sup_release(e, t->tid);
    }
}

void vg_sup_on_exit(struct vg_sup *e, pid_t tid, int status)
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
            .ts_ns = vg_sup_now(e), .kind = VG_PROC_EXIT, .pid = t->is_thread ? t->nstid : t->nspid,
            .hpid = tid, .proc = t->proc, .thread = t->is_thread,
            .exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            .signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0,
            .core = WIFSIGNALED(status) && WCOREDUMP(status),
        };
        vg_sup_emit(e, &r);
    }
    if (t && !t->is_thread) {
        vg_unwinder_forget(e->unw, t->tgid);
        if (e->py_forget)
            e->py_forget(e, t->proc);
    }
    if (t && t->held)
        e->nheld--;
    vg_tasks_del(&e->tasks, tid);
    release_orphans(e);
}

