/* batch.h: `vigil batch`, many candidates, each in its own fresh sandbox.
 *
 * A task file holds one JSON object per line (taskfile.c says which keys);
 * each task runs as one `vigil run` of this same binary, in OUT/tasks/ID/
 * (its log, its result, its work directory); results.c joins the results
 * into one JSON Lines file.  A task whose result is complete is never run
 * again, so a killed or retried batch (or shard) only runs what is
 * missing.  docs/RUN.md, "Many candidates", is the user's side of this. */
#ifndef VG_BATCH_H
#define VG_BATCH_H
#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

/* Exit statuses of `vigil batch`, also its contract with job schedulers. */
enum vg_batch_exit {
    VG_BATCH_OK = 0,         /* every task of the shard has a result */
    VG_BATCH_TASK_ERROR = 1, /* some task's run could not be carried out (status error) */
    VG_BATCH_CONFIG = 2,     /* the batch itself is misconfigured: do not retry */
    VG_BATCH_INCOMPLETE = 3, /* interrupted, or results missing: a retry resumes */
};

/* One task, as the task file gave it. */
struct vg_batch_task {
    char *id;
    unsigned line;           /* in the task file, 1-based */
    char **argv;             /* the command (NULL-terminated) */
    char *code;              /* or the code, written to the work dir... */
    const struct vg_language *lang; /* ...and run by this language's command */
    char **inputs;           /* host files copied into the work dir */
    unsigned ninputs;
    char *policy;            /* a file or a shipped policy's name; NULL: the batch's */
    char **flags;            /* extra `vigil run` flags: --timeout 5s --env N=V ... */
    unsigned nflags;
};

struct vg_language {
    const char *name;
    const char *file;        /* what the code is written to */
    const char *const *argv; /* how it runs */
    const char *policy;      /* the shipped policy it defaults to */
};

struct vg_batch_tasks {
    struct vg_batch_task *t;
    unsigned n;
};

struct vg_batch_opts {
    const char *tasks_path;
    const char *out;         /* the batch directory */
    unsigned jobs;           /* runs at once */
    unsigned shard, nshards; /* this process runs the tasks of shard `shard` of `nshards` */
    const char *policy;      /* for tasks that name none */
    const char *vigil;       /* the binary each run uses (this one) */
    bool merge;              /* only join the results, run nothing */
    bool progress;           /* a progress bar (a terminal) rather than lines */
};

/* taskfile.c */
int vg_batch_load(const char *path, struct vg_batch_tasks *out, struct vg_err *err);
void vg_batch_free(struct vg_batch_tasks *ts);
/* Which shard a task belongs to: stable under reordering and additions. */
unsigned vg_batch_shard(const struct vg_batch_task *t, unsigned nshards);

/* results.c */
/* OUT/tasks/ID (malloc'd). */
char *vg_batch_task_dir(const char *out, const struct vg_batch_task *t);
/* Does the task have a complete result?  Its status in *status (malloc'd)
 * when it does. */
bool vg_batch_task_done(const char *out, const struct vg_batch_task *t, char **status);
/* Writes one JSON line per task of the shard that has a result, in
 * task-file order, to path (replaced atomically).  Returns how many tasks
 * have none, or -1 with err. */
int vg_results_write(const char *out, const struct vg_batch_tasks *ts, unsigned shard,
                     unsigned nshards, const char *path, struct vg_err *err);

/* runner.c: runs the shard's missing tasks; a vg_batch_exit. */
int vg_batch_run(const struct vg_batch_opts *o, const struct vg_batch_tasks *ts);

/* progress.c */
struct vg_progress {
    bool bar;
    unsigned total, done, failed, running, skipped;
    uint64_t start_ns;
};
void vg_progress_task(struct vg_progress *p, const struct vg_batch_task *t, const char *status,
                      double secs);
void vg_progress_end(struct vg_progress *p);
#endif
