/* batch.h: `vigil batch`, many candidates, each in its own fresh sandbox.
 *
 * A task file holds one JSON object per line (taskfile.c says which keys);
 * each task runs as one `vigil run` of this same binary, in OUT/tasks/ID/
 * (its log, its result, its work directory); results.c joins the results
 * into one JSON Lines file.  A task's key hashes everything that decides
 * its run (key.c); a task whose complete result was made for its key is
 * not run again, so a killed or retried batch (or shard) runs only what is
 * missing, changed or interrupted.  docs/RUN.md, "Many candidates", is the user's side of this. */
#ifndef VG_BATCH_H
#define VG_BATCH_H
#include <stdbool.h>
#include <stdint.h>

#include "launcher/uidrange.h"
#include "util/util.h"

/* Exit statuses of `vigil batch`, also its contract with job schedulers. */
enum vg_batch_exit {
    VG_BATCH_OK = 0,         /* every task of the shard has a result */
    VG_BATCH_TASK_ERROR = 1, /* some task's run could not be carried out (status error) */
    VG_BATCH_CONFIG = 2,     /* the batch itself is misconfigured: do not retry */
    VG_BATCH_INCOMPLETE = 3, /* interrupted, or results missing: a retry resumes */
};

/* A file the task reads: an input, or its stdin.  size and sha256 are
 * what the key was made of (key.c); the copy made for the run is checked
 * against them. */
struct vg_batch_file {
    char *path;              /* on the host, as the task file gave it */
    uint64_t size;
    char sha256[65];
};

/* A label of a task: what it is, for grouping results (not in its key). */
struct vg_batch_label {
    char *name, *value;
};

/* One task, as the task file gave it, and its key once vg_batch_check made it. */
struct vg_batch_task {
    char *id;
    unsigned line;           /* in the task file, 1-based */
    char **argv;             /* the command (NULL-terminated) */
    char *code;              /* or the code, written to the work dir... */
    const struct vg_language *lang; /* ...and run by this language's command */
    struct vg_batch_file *inputs; /* host files copied into the work dir */
    unsigned ninputs;
    char *stdin_text;        /* the candidate's stdin, given inline, or */
    struct vg_batch_file *stdin_file; /* from this file (NULL: none; /dev/null) */
    char *policy;            /* a file or a shipped policy's name; NULL: the batch's */
    char *image;             /* a stored image's name or digest; NULL: the batch's, else the policy's */
    char **flags;            /* extra `vigil run` flags: --timeout 5s --env N=V ... */
    unsigned nflags;
    struct vg_batch_label *labels; /* carried into its results line, never into its key */
    unsigned nlabels;
    /* made by vg_batch_check */
    char *policy_file;       /* the policy, an absolute path; NULL: the built-in default */
    char *image_digest;      /* "sha256:HEX" the run gets (--image), found once; NULL: none */
    char key[65];            /* "" until made: what decides the run, hashed */
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
    unsigned prepare;        /* sandboxes prepared ahead for the next tasks (0: every run cold) */
    bool prepare_set;        /* --prepare was given (else it is jobs) */
    bool no_prepare;         /* --no-prepare: prepare 0 */
    unsigned shard, nshards; /* this process runs the tasks of shard `shard` of `nshards` */
    const char *policy;      /* for tasks that name none */
    const char *image;       /* for tasks that name none (else the policy's `image`) */
    const char *vigil;       /* the binary each run uses (this one) */
    bool merge;              /* only join the results, run nothing */
    int rerun;               /* enum vg_batch_rerun */
    bool progress;           /* a progress bar (a terminal) rather than lines */
    const char *uid_range;   /* --uid-range FIRST-LAST (root), else NULL */
    struct vg_uid_range *uids; /* its uids, one per live run's vigil; NULL: none */
};

/* Which tasks with a result of their own key run again (--rerun). */
enum vg_batch_rerun {
    VG_RERUN_CHANGED,        /* none: only tasks without one (new, changed, interrupted) */
    VG_RERUN_FAILED,         /* and those whose status is not ok */
    VG_RERUN_ALL,            /* every task */
};

/* taskfile.c */
/* A task id or label name: 1-max letters, digits, '.', '_', '-', not
 * starting with '.' (an id names a directory; a label name is a word). */
bool vg_batch_valid_word(const char *s, size_t max);
/* How long a label's name may be (`vigil report --by NAME` takes one). */
#define VG_BATCH_MAX_LABEL_NAME 64
int vg_batch_load(const char *path, struct vg_batch_tasks *out, struct vg_err *err);
void vg_batch_free(struct vg_batch_tasks *ts);
/* Which shard a task belongs to: stable under reordering and additions. */
unsigned vg_batch_shard(const struct vg_batch_task *t, unsigned nshards);

/* key.c: resolves every task's policy (relative to the batch's cwd) and
 * checks it and the task's files; the tasks of the shard (every task with
 * o->merge) also get their key.  The first problem is err, naming the
 * task's line and id: nothing has run yet. */
int vg_batch_check(const struct vg_batch_opts *o, struct vg_batch_tasks *ts, struct vg_err *err);
/* Writes "key", "inputs" and "stdin" (the files' manifest) into an object. */
struct vg_json;
void vg_batch_key_members(const struct vg_batch_task *t, struct vg_json *j);

/* results.c */
/* OUT/tasks/ID (malloc'd). */
char *vg_batch_task_dir(const char *out, const struct vg_batch_task *t);
/* Writes OUT/tasks/ID/task.json (the key) into a fresh task directory,
 * before its run: a result counts only beside the key it was made for. */
int vg_batch_task_write_key(const char *out, const struct vg_batch_task *t, struct vg_err *err);
/* What the task's directory holds. */
enum vg_task_state {
    VG_TASK_NONE,            /* no complete result (never run, or cut off) */
    VG_TASK_STALE,           /* a result, made for another key: the task changed */
    VG_TASK_ERROR,           /* a result of status error: the run was not carried out */
    VG_TASK_DONE,            /* a result of this key */
};
/* Its status in *status (malloc'd) when there is a result (any state but NONE). */
enum vg_task_state vg_batch_task_state(const char *out, const struct vg_batch_task *t,
                                       char **status);
/* Writes one JSON line per task of the shard whose result is of its key
 * (DONE or ERROR), in task-file order, to path (replaced atomically).
 * Returns how many tasks have none, or -1 with err. */
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
