/* notify_int.h: the notify engine's state, shared by its files:
 * notify_engine.c (threads, the listener, the life of processes),
 * notify_call.c (one notification: decode, decide, record, reply) and
 * notify_open.c (opens carried out by the opener thread, opener.h). */
#ifndef VG_NOTIFY_INT_H
#define VG_NOTIFY_INT_H
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "tracer/decode.h"
#include "tracer/notify/opener.h"
#include "tracer/supervisor.h"
#include "tracer/verdict.h"

struct nt {
    /* Tasks, records and the life of processes are the ptrace engine's
     * (ptrace events only: no seccomp stops under this engine). */
    struct vg_sup sup;
    /* sup and the log are shared by the two threads: the lifecycle thread
     * (ptrace must be driven by one thread) and the notification thread. */
    pthread_mutex_t lock;
    int listener;          /* -1 until the candidate handed it over */
    struct vg_opener opener; /* the thread that opens as the candidate */
    int stop_fd;           /* eventfd: the lifecycle loop has ended */
    _Atomic bool stopping; /* the same, for the notification loop */
    struct seccomp_notif_sizes sizes;
    struct seccomp_notif *req;
    struct seccomp_notif_resp *resp;
    struct vg_nt_cand *cand; /* as_candidate.c: made at its first job */
};

/* Interrupts vigil's threads blocked in the kernel: the notification
 * thread in NOTIF_RECV when the run ends, the thread acting as the
 * candidate in a connect or send whose caller is gone.  Its handler does
 * nothing; without SA_RESTART the call fails EINTR.  vigil uses SIGURG
 * for nothing else, and no descriptor of vigil's own asks for it. */
#define VG_NT_WAKE_SIG SIGURG

#define VG_NT_NOTE_MAX 600 /* a note's text: a path and a sentence */

/* notify_call.c: handle the notification in n->req (lock held). */
void vg_nt_handle(struct nt *n);

/* notify_open.c: is nr a call vigil carries out itself? */
bool vg_nt_carried_out(int nr);
/* Carry out the allowed open c for the task t that n->req came from:
 * open the decided path as the candidate (opener.h) and return the fd to
 * install, or -errno for the call to fail with. */
int vg_nt_open(struct nt *n, struct vg_task *t, struct vg_call *c);

/* as_candidate.c: run fn(arg) in vigil's thread that has the candidate's
 * ids, no capabilities and its Landlock rules, and return what fn returns
 * (-errno on failure).  may_block: n->lock is released while fn runs, so
 * t must not point into the task table (pass a copy).  The thread is made
 * at the first call; when it cannot be, the run ends (-EIO). */
long vg_nt_as_candidate(struct nt *n, const struct vg_task *t, long (*fn)(void *), void *arg,
                        bool may_block);
/* Interrupt a job blocked in the kernel (the run is ending); free it all. */
void vg_nt_cand_interrupt(struct nt *n);
void vg_nt_cand_free(struct nt *n);

/* The text after key ("\nUmask:") in /proc/TID/status, read into buf
 * (n bytes, VG_NT_STATUS_MAX is enough), or NULL. */
#define VG_NT_STATUS_MAX 4096
const char *vg_nt_status_field(pid_t tid, const char *key, char *buf, size_t n);
/* The caller's umask (vigil's threads acting as the candidate have 0 and
 * apply this to each mode), from /proc/TID/status; -1 when unreadable. */
int vg_nt_caller_umask(pid_t tid, mode_t *mask);

/* The calls vigil carries out itself besides opens: does it take c, and
 * carry out the allowed call c for the task t (a copy), returning the
 * call's result as the candidate gets it (>= 0) or -errno.
 * notify_fs.c: the file-changing calls; notify_net.c: connect, bind, sends. */
bool vg_nt_fs_takes(const struct vg_call *c);
long vg_nt_fs(struct nt *n, struct vg_task *t, struct vg_call *c, struct vg_call_verdict *v);
bool vg_nt_net_takes(const struct vg_call *c);
long vg_nt_net(struct nt *n, struct vg_task *t, struct vg_call *c, struct vg_call_verdict *v);
/* In the thread acting as the candidate: an O_PATH fd of path inside
 * root_fd with no symlink followed (flags: O_DIRECTORY, O_NOFOLLOW), or
 * -errno; and of its parent directory, *name its last component
 * (-EEXIST for "/" itself, which has none). */
int vg_nt_open_in_root(int root_fd, const char *path, int flags);
int vg_nt_open_parent(int root_fd, const char *path, const char **name);

/* A note and the end of the run, for what the engine cannot go on with. */
void vg_nt_fail(struct nt *n, const char *why, int32_t pid);
#endif
