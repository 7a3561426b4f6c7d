/* tasks.h: the threads the supervisor traces, by host tid (open addressing;
 * a run rarely has more than a few hundred). */
#ifndef VG_TASKS_H
#define VG_TASKS_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct vg_task {
    pid_t tid;          /* host tid; 0 = free slot */
    pid_t tgid;         /* host pid of its process */
    pid_t ptid;         /* host tid of the parent (for processes) */
    int32_t nspid, nstid; /* as the candidate sees them */
    uint64_t proc;      /* process identity, shared by its threads */
    bool is_thread;
    bool attached;      /* its initial ptrace stop has been seen */
    bool logged;        /* its start record is written */
    bool identified;    /* tgid/ns ids read */
    bool announced;     /* its creator's fork/clone event has been handled */
    bool held;          /* stopped at its first stop, waiting for that event */
    bool own_restart;   /* notify: its ERESTARTSYS is a blocking call's own (stops.c) */
};

struct vg_tasks {
    struct vg_task *slots;
    size_t cap, n;
    uint64_t next_proc;
};

void vg_tasks_init(struct vg_tasks *ts);
void vg_tasks_free(struct vg_tasks *ts);
struct vg_task *vg_tasks_get(struct vg_tasks *ts, pid_t tid);
/* The task's entry, new or existing; NULL for tid <= 0 or a full table
 * (which the caller must treat as a task it cannot follow). */
struct vg_task *vg_tasks_add(struct vg_tasks *ts, pid_t tid);
void vg_tasks_del(struct vg_tasks *ts, pid_t tid);
uint64_t vg_tasks_new_proc(struct vg_tasks *ts);
/* Fill tgid and ns ids from /proc/TID/status.  False when the task is
 * already gone (its status cannot be read). */
bool vg_task_identify(struct vg_tasks *ts, struct vg_task *t);
#endif
