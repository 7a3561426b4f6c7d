/* supervisor.h: the supervisor's state and the core both engines share:
 * records and counts (supervisor.c), the ptrace stops both take for the
 * life of processes and the baseline's SIGSYS (stops.c), and process
 * start, exec and exit (lifecycle.c).  What only one engine does lives in
 * tracer/ptrace/ and tracer/notify/. */
#ifndef VG_SUPERVISOR_H
#define VG_SUPERVISOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/canon.h"
#include "tracer/engine.h"
#include "tracer/tasks.h"
#include "tracer/unwind.h"

struct vg_arena;
struct vg_syscall_ev;

struct vg_sup {
    struct vg_engine_ctx *ctx;
    struct vg_tasks tasks;
    struct vg_unwinder *unw;
    /* Python stacks are the engine's to plug in (vg_py_plug): tracer/py/
     * is above this core, which records them through these hooks (NULL:
     * none).  py_frames: the caller's Python stack into ev, strings and
     * frames in a; py_forget: the process execs or exits. */
    struct vg_pyframes *py;
    void (*py_frames)(struct vg_sup *e, const struct vg_task *t, struct vg_syscall_ev *ev,
                      struct vg_arena *a);
    void (*py_forget)(struct vg_sup *e, uint64_t proc);
    int root_fd;            /* the sandbox's "/", opened at the first call */
    struct vg_canon_cache *canon; /* symlink lookups under immutable trees */
    pid_t cand_pid;         /* host pid of the candidate's first process */
    bool init_gone;
    bool ending;            /* the sandbox is being killed: release nothing more */
    unsigned nheld;         /* tasks held at their first stop (see on_stop) */
    /* The stop of a PTRACE_INTERRUPT the engine asked for (notify: a
     * native stack, tracer/notify/notify_stack.c); NULL under ptrace.
     * True when the stop was the engine's. */
    bool (*on_interrupt)(struct vg_sup *e, struct vg_task *t);
    /* notify: a signal that interrupts an audited call before vigil has
     * received it must not make the call fail EINTR (see stops.c) */
    bool notified_calls;
    /* notify: a task whose ERESTARTSYS may be a blocking call's own
     * (own_restart) was signalled: does it stay so (EINTR for a handler
     * without SA_RESTART: the call vigil carried out for it was
     * interrupted), or was it a call that completed, to restart like any
     * withdrawn call (stops.c)?  NULL: it stays. */
    bool (*own_restart_stays)(struct vg_sup *e, struct vg_task *t);
};

/* The kernel's restart codes (include/linux/errno.h, not exported to user
 * space): "interrupted: restart, or EINTR for a handler without
 * SA_RESTART", and "restart whatever the handler's flags". */
#define VG_ERESTARTSYS 512
#define VG_ERESTARTNOINTR 513

/* Time since the run started, for records. */
uint64_t vg_sup_now(const struct vg_sup *e);
/* "file:line" of a rule, or "default". */
const char *vg_sup_rule_where(char *buf, size_t n, const char *file, uint32_t line);
void vg_sup_kill_sandbox(struct vg_sup *e);
/* Let a stopped task go on, or kill it when the run is ending. */
void vg_sup_release(struct vg_sup *e, pid_t tid);
/* End the run because vigil cannot go on safely: kill_reason, an "error"
 * note, the sandbox killed. */
void vg_sup_fail(struct vg_sup *e, int32_t pid, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Write a record; a record that cannot be written stops the run. */
int vg_sup_emit(struct vg_sup *e, struct vg_record *r);
void vg_sup_note(struct vg_sup *e, const char *what, const char *detail, int32_t pid);

/* The record of an audited call, written (and its decision counted: the
 * one place that counts) by vg_sup_emit_call, and the end of the run a
 * kill verdict asks for. */
struct vg_call;
struct vg_call_verdict;
struct vg_syscall_ev;
void vg_sup_fill_event(struct vg_sup *e, const struct vg_task *t, const struct vg_call *c,
                      const struct vg_call_verdict *v, struct vg_syscall_ev *ev);
int vg_sup_emit_call(struct vg_sup *e, const struct vg_syscall_ev *ev);
/* The caller's Python stack into ev, when the engine plugged Python
 * frames in and --py-frames asks for them for this decision. */
void vg_sup_py_frames(struct vg_sup *e, const struct vg_task *t, struct vg_syscall_ev *ev,
                      struct vg_arena *a);
/* The thread t as the decoder reads it for either engine: the same
 * sandbox root, cache and ids; ptrace_stopped says whether it is in a
 * ptrace stop (the ptrace engine's seccomp stops, a SIGSYS), which is all
 * that differs between the engines' decoding (tracer/mem.h). */
struct vg_tracee;
void vg_sup_tracee(const struct vg_sup *e, const struct vg_task *t, bool ptrace_stopped,
                   struct vg_tracee *tr);
/* A decision made without a call record (the exec check's kill). */
void vg_sup_count(struct vg_sup *e, enum vg_class cls, enum vg_decision d);
/* A cap the supervisor holds was reached: the run ends as a hit of limit
 * l (status limit), the sandbox killed, a "limit" note saying why; the
 * first cause of a run's end is the one reported. */
void vg_sup_limit_end(struct vg_sup *e, enum vg_limit l, const char *why, int32_t pid);
void vg_sup_policy_kill(struct vg_sup *e, const struct vg_task *t, const struct vg_call *call,
                       const struct vg_call_verdict *v);

/* Attach to the sandbox's pid 1 (stops.c): every task after it is
 * followed (launcher/sandbox.h's vg_attach_fn). */
struct vg_err;
int vg_sup_attach(pid_t pid, struct vg_err *err);
/* The next ptrace event (waitpid(-1, __WALL)), polled for spin_ns first;
 * vg_sup_spin_ns: the window, 0 on one CPU. */
uint64_t vg_sup_spin_ns(void);
pid_t vg_sup_wait_next(uint64_t spin_ns, int *status);
/* A ptrace stop of tid (stops.c). */
void vg_sup_on_stop(struct vg_sup *e, pid_t tid, int status);
/* The call a thread stopped in or right after, from its registers (the
 * baseline's SIGSYS, stops.c): its number as the kernel and the filter go
 * by it, and the x86_64 argument registers, in the order seccomp_data
 * gives them to the other stops (tests/unit/test_decide_engines.c). */
struct user_regs_struct;
void vg_sup_regs_call(const struct user_regs_struct *regs, int *nr, uint64_t args[6]);

/* stop_call.c: a PTRACE_EVENT_SECCOMP stop: vigil's RET_TRACE (decided),
 * or a candidate's own filter's on a call vigil lets run (continued). */
void vg_sup_on_seccomp(struct vg_sup *e, struct vg_task *t);
/* Decode the call tid is stopped in (or was just refused by the
 * baseline), decide it, record it with its stacks, then release or fail it. */
void vg_sup_judge_stopped(struct vg_sup *e, struct vg_task *t, int nr, const uint64_t args[6]);

/* lifecycle.c */
void vg_sup_log_start(struct vg_sup *e, struct vg_task *t, uint64_t flags);
void vg_sup_on_new_task(struct vg_sup *e, struct vg_task *parent, int event);
/* True when the task was killed at the exec event: it must not be
 * continued. */
bool vg_sup_on_exec(struct vg_sup *e, struct vg_task *t);
void vg_sup_on_exit(struct vg_sup *e, pid_t tid, int status);
#endif
