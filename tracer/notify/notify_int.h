/* notify_int.h: the notify engine's state, shared by its files:
 * notify_engine.c (threads, the listener, the life of processes),
 * notify_call.c (one notification: decode, decide, record, reply),
 * notify_open.c, notify_fs.c and notify_net.c (the calls vigil carries
 * out, in a crew: crew.h), notify_stack.c (native stacks). */
#ifndef VG_NOTIFY_INT_H
#define VG_NOTIFY_INT_H
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "tracer/decode.h"
#include "tracer/notify/crew.h"
#include "tracer/supervisor.h"
#include "tracer/views.h"

/* Where a notification thread may run (cpu_pin.c, below). */
struct vg_nt_pin {
    cpu_set_t own; /* the thread's CPUs, read as it starts receiving (none: never narrowed) */
    int cpu;       /* the one CPU it is narrowed to, or -1 */
    pid_t caller;  /* for whose calls */
    uint64_t at;   /* when it was narrowed (monotonic ns) */
    bool keep;     /* the candidate has one task that calls: it may stay narrowed */
};

/* A notification thread.  The primary one lives for the whole run; while
 * a call one of them carries out may block (a FIFO's open, a connect, a
 * send), it makes sure another is waiting for notifications, so that the
 * candidate's other calls (the FIFO's other end) are still served.  The
 * ones made so stay, waiting in NOTIF_RECV (which costs nothing), until
 * the run ends: there are never more than the most calls that ever
 * blocked at once, plus one, and never more than the candidate's tasks
 * plus one (notify_rx.c at_ceiling): its pids limit bounds them. */
struct nt_rx {
    struct nt *n;
    pthread_t th;
    bool started;
    struct seccomp_notif *req;       /* the call being handled */
    struct seccomp_notif_resp *resp;
    struct vg_crew crew;             /* started at its first job (the primary's at hand-over) */
    bool signalled; /* its blocked call was interrupted for a signal the caller catches */
    struct vg_nt_pin pin; /* where the thread may run (cpu_pin.c) */
    int quiet_fd;         /* the open's fd, when its close may wait (notify_open.c), or -1 */
    bool caller_left; /* gone from its call while the lock was released (notify_rx.c) */
    pid_t job_tid;    /* a blocking job runs for this caller (lock released), or 0 */
    uint32_t job_gen; /* the crew's jobs done before it */
    bool woken_here;  /* NOTIF_RECV slept until this call woke it (notify_rx.c) */
    pid_t answered;   /* the last caller answered with SEND, which woke it here */
    int answered_cpu; /* here: this thread's CPU then */
    uint64_t answered_at; /* when (monotonic ns) */
    struct nt_rx *next;
};

/* notify_stack.c: a native stack taken at a ptrace stop for one call,
 * which the call's restart finds (see there).  Slots are guarded by
 * nt_stacks.mu (taken after n->lock, never before). */
#define VG_NT_STACK_SLOTS 64 /* bounces in flight; beyond, a record goes without a stack */
#define VG_NT_BOUNCE_MAX 3 /* bounces of one task's call before its record goes without */

enum vg_nt_stack_state {
    VG_NT_STACK_ASKED = 1,   /* a notification thread waits for the tracer's interrupt */
    VG_NT_STACK_INTERRUPTED, /* the caller will stop on its way out */
    VG_NT_STACK_FAILED,      /* the interrupt failed (the caller is gone) */
    VG_NT_STACK_READY,       /* unwound: for the restarted call */
};

struct nt_stack {
    pid_t tid; /* 0: a free slot */
    enum vg_nt_stack_state state;
    unsigned tries;
    int nr; /* the call the stack belongs to */
    uint64_t args[6], ip;
    unsigned n;
    struct vg_frame frames[VG_STACK_MAX];
    struct vg_arena arena; /* the frames' strings */
};

struct nt_stacks {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* the tracer has taken the asks */
    pthread_t tracer;  /* the lifecycle thread */
    _Atomic unsigned nbusy; /* slots in use (written under mu) */
    struct nt_stack slot[VG_NT_STACK_SLOTS];
};

struct nt {
    /* Tasks, records and the life of processes are the ptrace engine's
     * (ptrace events only: no seccomp stops under this engine). */
    struct vg_sup sup;
    /* sup and the log are shared by the threads: the lifecycle thread
     * (ptrace must be driven by one thread) and the notification threads. */
    pthread_mutex_t lock;
    int listener;          /* -1 until the candidate handed it over */
    struct vg_ident ident; /* the candidate's, read at hand-over */
    int ruleset;           /* its Landlock ruleset (a copy), or -1 */
    int stop_fd;           /* eventfd: the lifecycle loop has ended */
    _Atomic bool stopping; /* the same, for the notification loops */
    struct seccomp_notif_sizes sizes;
    /* the notification threads (the list under lock), and how many wait
     * in NOTIF_RECV (atomic: counted outside the lock) */
    struct nt_rx *rx;
    int nrx;
    _Atomic int receiving;
    struct nt_stacks stacks;
};

/* Interrupts vigil's threads blocked in the kernel: the notification
 * threads in NOTIF_RECV when the run ends, a crew's job whose caller is
 * gone.  The engine installs its handler, which does nothing. */
#define VG_NT_WAKE_SIG VG_CREW_SIG

#define VG_NT_NOTE_MAX 600 /* a note's text: a path and a sentence */

/* notify_rx.c: a new notification thread's state, linked in (lock held;
 * its thread is the caller's to start: rx->started); the loop that
 * receives and handles calls; the end of them all (interrupted until
 * each has ended); and their memory (each crew stopped). */
struct nt_rx *vg_nt_rx_new(struct nt *n);
void vg_nt_receive(struct nt *n, struct nt_rx *rx);
void vg_nt_rx_stop(struct nt *n);
void vg_nt_rx_free(struct nt *n);
/* vg_sup's own_restart_stays (stops.c), by the tracer (lock held). */
bool vg_nt_own_restart_stays(struct vg_sup *e, struct vg_task *t);

/* notify_call.c: handle the notification in rx->req (lock held). */
void vg_nt_handle(struct nt *n, struct nt_rx *rx);
/* Does the task rx->req came from still wait in that call?  (Killed, by
 * the run's timeout say, it does not.)  arg: the nt_rx. */
bool vg_nt_caller_waits(void *rx);
/* The same, for a job in a crew: false also when a signal the caller
 * catches is pending (rx->signalled: the job is interrupted, and the call
 * answered as the kernel answers a blocking call a signal interrupts). */
bool vg_nt_caller_wants(void *rx);

/* notify_open.c: is nr, with these open flags, a call vigil carries out
 * itself? */
bool vg_nt_carried_out(int nr, uint64_t flags);
/* Is c an open vigil carries out even when nothing is recorded of it
 * (openat2: its flags, and so its class, come from memory)? */
bool vg_nt_open_unrecorded(const struct vg_call *c);
/* Carry out the allowed open c for the task t that rx->req came from:
 * open the decided path as the candidate and return the fd to install,
 * or -errno for the call to fail with. */
int vg_nt_open(struct nt *n, struct nt_rx *rx, struct vg_task *t, struct vg_call *c);

/* Run fn(arg) in rx's crew, the thread that has the candidate's ids, no
 * capabilities and its Landlock rules, and return what fn returns (-errno
 * on failure).  may_block: n->lock is released while fn runs, and another
 * notification thread waits for calls meanwhile; t must not point into
 * the task table then (pass a copy).  The crew is made at its first job;
 * when it cannot be, the run ends (-EIO). */
long vg_nt_as_candidate(struct nt *n, struct nt_rx *rx, const struct vg_task *t,
                        long (*fn)(void *), void *arg, bool may_block);

/* proc_status.c: the caller's umask (vigil's crew threads have 0 and apply
 * this to each mode), from /proc/TID/status; -1 when unreadable. */
#define VG_NT_STATUS_MAX 4096
int vg_nt_caller_umask(pid_t tid, mode_t *mask);
/* Does a signal the caller catches (a handler), not blocked, wait for
 * this thread (or for its process, when it is the process's only or main
 * thread)? */
bool vg_nt_caller_signalled(pid_t tid);

/* The calls vigil carries out itself besides opens: does it take c, and
 * carry out the allowed call c for the task t (a copy), returning the
 * call's result as the candidate gets it (>= 0) or -errno.  Which calls
 * each takes is the syscall table's carry column (core/syscalls_rows.h).
 * notify_fs.c: the file-changing calls; notify_net.c: connect, bind, sends. */
bool vg_nt_fs_takes(const struct vg_call *c);
long vg_nt_fs(struct nt *n, struct nt_rx *rx, struct vg_task *t, struct vg_call *c,
              struct vg_call_verdict *v);
bool vg_nt_net_takes(const struct vg_call *c);
/* Does the carrier handle this op of the syscall table's carry column
 * (a row that names it with no case here would be let through)? */
bool vg_nt_fs_knows(enum vg_carry op);
bool vg_nt_net_knows(enum vg_carry op);
long vg_nt_net(struct nt *n, struct nt_rx *rx, struct vg_task *t, struct vg_call *c,
               struct vg_call_verdict *v);
/* In a crew: an O_PATH fd of path inside root_fd with no symlink followed
 * (flags: O_DIRECTORY, O_NOFOLLOW), or -errno; and of its parent
 * directory, *name its last component (-EEXIST for "/" itself, which has
 * none). */
int vg_nt_open_in_root(int root_fd, const char *path, int flags);
int vg_nt_open_parent(int root_fd, const char *path, const char **name);

/* notify_stack.c.  init: by the lifecycle thread (the tracer).  take:
 * the stack taken for this very call, moved into out (its arena is then
 * the caller's to free).  bounce (lock held; released meanwhile): have
 * the tracer interrupt the caller and answer ERESTARTNOINTR, so that the
 * call comes again with a stack; NO_STACK: go on without one.  serve: the
 * tracer's side, between two waits.  on_interrupt: vg_sup's hook, the
 * unwind at the interrupt's stop.  forget: the task exited. */
enum vg_nt_bounce { VG_NT_BOUNCED, VG_NT_NO_STACK };
void vg_nt_stacks_init(struct nt_stacks *s);
void vg_nt_stacks_free(struct nt_stacks *s);
bool vg_nt_stack_take(struct nt *n, const struct seccomp_notif *req, struct nt_stack *out);
enum vg_nt_bounce vg_nt_stack_bounce(struct nt *n, struct nt_rx *rx);
void vg_nt_stack_serve(struct nt *n);
bool vg_nt_stack_on_interrupt(struct vg_sup *e, struct vg_task *t);
void vg_nt_stack_forget(struct nt *n, pid_t tid);

/* cpu_pin.c: while vigil installs an opened file (ADDFD), the caller is
 * allowed this CPU only.  ADDFD wakes the caller with a plain wake-up
 * (SEND's is on the current CPU under FD_SYNC_WAKE_UP, ADDFD's never),
 * so the scheduler puts it on an idle CPU, as this one still runs vigil,
 * and vigil then sleeps in the ioctl until the caller has installed the
 * file: two wake-ups across CPUs per open, each an interrupt and, on a
 * VM, a halt exit.  Narrowed, the caller runs here as soon as vigil
 * sleeps.  The caller is given its CPUs back (done) while it still waits
 * for the answer, unless it changed them meanwhile (docs/SECURITY.md).
 *
 * The notification thread is narrowed to that CPU too (the caller's
 * install wakes it with a plain wake-up as well).  It must be widened
 * again before it waits for the next call: sync wake-up then wakes it on
 * whichever CPU that call comes from, and the caller is narrowed to the
 * CPU it is on.  A thread still narrowed would be woken on its own CPU
 * and pull the caller there (two tasks of a `make -j2` packed on one CPU).
 * Only while the candidate has a single task that calls, whose answer's
 * sync wake-up keeps it on this CPU, does the thread stay narrowed between
 * its calls, for at most VG_NT_PIN_NS, after which it follows the task
 * again wherever the scheduler moved it: two system calls saved per open
 * in between. */
#define VG_NT_PIN_NS 1000000 /* 1 ms */
/* A NOTIF_RECV that returns sooner found the call waiting already: it did
 * not sleep (a sleep and a wake-up take longer than this on any machine
 * vigil measured: 5 us and more here, a return with the call at hand 1 us),
 * so this thread is on whichever CPU it served the last call on, and the
 * caller's is unknown, unless the caller is the one this thread answered
 * last, with SEND (sync wake-up: here), within VG_NT_PIN_NS (a caller
 * woken by the answer and calling again at once finds this thread still
 * finishing, and its call waiting).  Otherwise the caller is not narrowed
 * (a second caller, waiting while the first was served, would be pulled
 * onto the first's CPU): its file is installed with ADDFD_FLAG_SEND. */
#define VG_NT_SLEPT_NS 3000
void vg_nt_pin_init(struct vg_nt_pin *p);
void vg_nt_pin_follow(struct vg_nt_pin *p, pid_t caller); /* a call from caller is next */
void vg_nt_pin_wait(struct vg_nt_pin *p); /* before waiting for the next call */

struct vg_nt_here {
    pid_t tid;
    bool held;
    cpu_set_t saved, here;
};
void vg_nt_wake_here(struct vg_nt_here *h, pid_t tid, struct vg_nt_pin *mine);
int vg_nt_wake_done(struct vg_nt_here *h); /* -1: the caller keeps one CPU (errno) */

/* notify_open.c: vigil's fd of a file it opened and installed (or could
 * not), closed now or with the next open. */
void vg_nt_open_release(struct nt_rx *rx, int fd);

/* A note and the end of the run, for what the engine cannot go on with. */
void vg_nt_fail(struct nt *n, const char *why, int32_t pid);
#endif
