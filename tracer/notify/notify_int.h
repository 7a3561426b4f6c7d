/* notify_int.h: the notify engine's state, shared by its files:
 * notify_engine.c (threads, the listener, the life of processes),
 * notify_call.c (one notification: decode, decide, record, reply) and
 * notify_open.c (opens carried out by the opener thread, opener.h). */
#ifndef VG_NOTIFY_INT_H
#define VG_NOTIFY_INT_H
#include <linux/seccomp.h>
#include <pthread.h>
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
    struct seccomp_notif_sizes sizes;
    struct seccomp_notif *req;
    struct seccomp_notif_resp *resp;
};

/* notify_call.c: handle the notification in n->req (lock held). */
void vg_nt_handle(struct nt *n);

/* notify_open.c: is nr a call vigil carries out itself? */
bool vg_nt_carried_out(int nr);
/* Carry out the allowed open c for the task t that n->req came from:
 * open the decided path as the candidate (opener.h) and return the fd to
 * install, or -errno for the call to fail with. */
int vg_nt_open(struct nt *n, struct vg_task *t, struct vg_call *c);

/* A note and the end of the run, for what the engine cannot go on with. */
void vg_nt_fail(struct nt *n, const char *why, int32_t pid);
#endif
