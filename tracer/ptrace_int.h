/* ptrace_int.h: the ptrace engine's state, shared by its files:
 * ptrace_engine.c (the loop and the audited calls), lifecycle.c (process
 * start, exec and exit) and this header's record helpers. */
#ifndef VG_PTRACE_INT_H
#define VG_PTRACE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/canon.h"
#include "tracer/engine.h"
#include "tracer/tasks.h"
#include "tracer/ptrace/unwind.h"

struct engine {
    struct vg_engine_ctx *ctx;
    struct vg_tasks tasks;
    struct vg_unwinder *unw;
    struct vg_pyframes *py; /* Python stacks (tracer/py/) */
    int root_fd;            /* the sandbox's "/", opened at the first stop */
    struct vg_canon_cache *canon; /* symlink lookups under immutable trees */
    pid_t cand_pid;         /* host pid of the candidate's first process */
    bool init_gone;
    bool ending;            /* the sandbox is being killed: release nothing more */
    unsigned nheld;         /* tasks held at their first stop (see on_stop) */
    uint64_t spin_ns;       /* 0 on a single CPU: spinning would starve the candidate */
};

/* Time since the run started, for records. */
uint64_t vg_pt_now(const struct engine *e);
/* "file:line" of a rule, or "default". */
const char *vg_pt_rule_where(char *buf, size_t n, const char *file, uint32_t line);
void vg_pt_kill_sandbox(struct engine *e);
/* Let a stopped task go on, or kill it when the run is ending. */
void vg_pt_release(struct engine *e, pid_t tid);
/* End the run because vigil cannot go on safely: kill_reason, an "error"
 * note, the sandbox killed. */
void vg_pt_fail(struct engine *e, int32_t pid, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Write a record; a record that cannot be written stops the run. */
int vg_pt_emit(struct engine *e, struct vg_record *r);
void vg_pt_note(struct engine *e, const char *what, const char *detail, int32_t pid);

/* The record of an audited call (ptrace_engine.c), and the end of the run
 * a kill verdict asks for; shared with the notify engine. */
struct vg_call;
struct vg_call_verdict;
struct vg_syscall_ev;
void vg_pt_fill_event(struct engine *e, const struct vg_task *t, const struct vg_call *c,
                      const struct vg_call_verdict *v, struct vg_syscall_ev *ev);
/* The caller's Python stack into ev, when --py-frames asks for it for
 * this decision (buf: VG_PY_STACK_MAX frames, strings in a). */
struct vg_pyframe;
struct vg_arena;
void vg_pt_py_frames(struct engine *e, const struct vg_task *t, struct vg_syscall_ev *ev,
                     struct vg_pyframe *buf, struct vg_arena *a);
void vg_pt_policy_kill(struct engine *e, const struct vg_task *t, const struct vg_call *call,
                       const struct vg_call_verdict *v);

/* A ptrace stop of tid (ptrace_engine.c); the notify engine uses it for
 * the life of processes only (no seccomp stops there). */
void vg_pt_on_stop(struct engine *e, pid_t tid, int status);

/* lifecycle.c */
void vg_pt_log_start(struct engine *e, struct vg_task *t, uint64_t flags);
void vg_pt_on_new_task(struct engine *e, struct vg_task *parent, int event);
/* True when the task was killed at the exec event: it must not be
 * continued. */
bool vg_pt_on_exec(struct engine *e, struct vg_task *t);
void vg_pt_on_exit(struct engine *e, pid_t tid, int status);
#endif
