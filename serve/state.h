/* state.h: what the daemon knows, shared by serve/'s files.  One lock
 * (vg_serve.lock) guards all of it: the HTTP threads take it for each
 * request, the main loop for each reaped run and each scheduling step. */
#ifndef VG_SERVE_STATE_H
#define VG_SERVE_STATE_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "launcher/uidrange.h"
#include "serve/conf.h"
#include "serve/quota.h"
#include "serve/serve.h"
#include "serve/svclog.h"

/* A run that vigil could not start ends with vigil run's own "vigil
 * failed" status. */
#define VG_SERVE_EXIT_VIGIL 125

enum vg_srun_state { VG_SR_QUEUED, VG_SR_RUNNING, VG_SR_FINISHED, VG_SR_CANCELLED, VG_SR_LOST,
                     VG_SR_NSTATES };

/* A connection waiting for a run to end (GET ...?wait=S). */
struct vg_swaiter {
    void *conn;              /* struct MHD_Connection, suspended */
    int64_t deadline_ms;     /* monotonic */
    bool resumed;
    struct vg_swaiter *next;
};

struct vg_srun {
    char id[32];
    uid_t uid;
    char *dir;               /* STATE/runs/UID/ID, root's, 0700 */
    char *box;               /* while it runs: where its candidate works (serve/boxdir.h) */
    char *task_id;           /* or NULL */
    char **cmd;              /* its `vigil run` command line, NULL-terminated */
    enum vg_srun_state state;
    int64_t submitted_ms, started_ms, ended_ms; /* wall clock; 0: not yet */
    int64_t started_mono_ms;
    uint64_t cpu_grant_ms, wall_grant_ms;
    pid_t pid;               /* its vigil run, while running */
    uid_t host_uid;          /* the candidate's, while running (0: none) */
    int exit_code;
    char status[24];         /* the result's status, or "" */
    char error[sizeof(struct vg_err){0}.msg]; /* why it was cancelled / lost / failed to start */
    double cpu_s, wall_s;
    bool cancel_asked;
    bool pooled;
    bool pool_fit;           /* it asks nothing a prepared sandbox lacks (serve/pool.c) */
    bool deleted;            /* its data is gone; kept for the quotas' windows */
    struct vg_srun *qnext;   /* next in its user's queue */
    struct vg_swaiter *waiters;
};

struct vg_suser {
    uid_t uid;
    char *name;              /* the config's name, else "uid N" */
    struct vg_quota quota;
    struct vg_usage usage;
    struct vg_srun *qhead, *qtail;
};

struct vg_serve {
    const struct vg_serve_opts *o;
    struct vg_serve_conf conf;
    pthread_mutex_t lock;
    struct vg_suser **users;
    size_t nusers;
    struct vg_srun **runs;
    size_t nruns;
    size_t rr;               /* the user whose turn is next (round robin) */
    unsigned workers, running;
    struct vg_uid_range uids;   /* the candidates' (root), one per live run */
    struct vg_svclog *log;
    int kick_fd;             /* eventfd: the main loop has something to do */
    char *runs_dir, *users_dir, *svc_dir;
    bool stopping;
    struct vg_pool *pool;    /* the warm pool, or NULL */
};

/* serve/users.c */
struct vg_suser *vg_serve_user(struct vg_serve *d, uid_t uid, const char *name);
struct vg_srun *vg_serve_find_run(struct vg_serve *d, uid_t uid, const char *id);
void vg_serve_add_run(struct vg_serve *d, struct vg_srun *r);
void vg_srun_free(struct vg_srun *r);
const char *vg_srun_state_name(enum vg_srun_state s);
/* The service log: an event about run r (NULL: the daemon's own). */
void vg_serve_event(struct vg_serve *d, enum vg_svc_kind kind, const struct vg_srun *r,
                    struct vg_svc_event *more);
/* Wake the main loop (a run was queued, cancelled, ...). */
void vg_serve_kick(struct vg_serve *d);

/* serve/persist.c: what is on disk */
/* durable: fsync'd before it counts (an acceptance); else only whole. */
int vg_srun_save(const struct vg_serve *d, const struct vg_srun *r, bool durable,
                 struct vg_err *err);
int vg_suser_save(const struct vg_serve *d, const struct vg_suser *u, bool durable,
                  struct vg_err *err);
int vg_serve_recover(struct vg_serve *d, struct vg_err *err);
uint64_t vg_srun_stored_bytes(const struct vg_srun *r);

/* serve/sched.c: the fair queue and the workers */
void vg_sched_enqueue(struct vg_serve *d, struct vg_srun *r);
bool vg_sched_unqueue(struct vg_serve *d, struct vg_srun *r);
void vg_sched_run_ready(struct vg_serve *d);
/* A host uid no candidate (running or held in the pool) has: 0 when vigil
 * is not root (every candidate is then its own uid), (uid_t)-1 when every
 * uid of the range is taken. */
uid_t vg_sched_take_uid(struct vg_serve *d);
/* A run's candidate uid is free again (its vigil run has exited). */
void vg_sched_give_uid(struct vg_serve *d, uid_t uid);

/* serve/exec.c: a run's `vigil run`: a ready slot of the pool, else cold */
int vg_exec_start(struct vg_serve *d, struct vg_srun *r, struct vg_err *err);
struct rusage;
void vg_exec_reaped(struct vg_serve *d, struct vg_srun *r, int wstatus, const struct rusage *ru);
void vg_exec_cancel(struct vg_serve *d, struct vg_srun *r);
/* The run ended, however: settle its charge, save, log, wake its waiters. */
void vg_serve_ended(struct vg_serve *d, struct vg_srun *r, enum vg_srun_state s);
#endif
