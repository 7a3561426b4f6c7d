/* request.h: a submitted run as the API takes it (docs/SERVE.md
 * "Submitting a run"): parsed and checked whole before anything is made,
 * then written into the run's directory and turned into its `vigil run`
 * command line. */
#ifndef VG_SERVE_REQUEST_H
#define VG_SERVE_REQUEST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "util/util.h"

/* What one request may hold. */
#define VG_SREQ_MAX_FILES 1000
#define VG_SREQ_MAX_ARGS 4096
#define VG_SREQ_MAX_ENV 256
#define VG_SREQ_MAX_PATH 1024
#define VG_SREQ_MAX_DEPTH 16     /* directories of a file's path */

/* What a run's directory holds (STATE/runs/UID/ID/). */
#define VG_SREQ_WORK "work"          /* the candidate's working directory */
#define VG_SREQ_STDIN "stdin"
#define VG_SREQ_POLICY "policy.policy"
#define VG_SREQ_LOG "run.msgpack"
#define VG_SREQ_RESULT "result.json"
#define VG_SREQ_STDOUT "stdout"
#define VG_SREQ_STDERR "stderr"
#define VG_SREQ_RUN "run.json"       /* the daemon's record of the run */

struct vg_sfile {
    char *path;                  /* relative, checked */
    uint8_t *data;
    size_t len;
    bool executable;             /* mode 0755, else 0644 */
};

struct vg_sreq {
    char **argv;                 /* NULL-terminated */
    unsigned argc;
    struct vg_sfile *files;
    unsigned nfiles;
    uint8_t *stdin_data;         /* NULL: /dev/null */
    size_t stdin_len;
    char *policy;                /* a shipped policy's name, or NULL */
    char *policy_text;           /* or a whole policy, or NULL */
    char *limit[VG_LIM_COUNT];   /* as given ("10s"), checked; NULL: not given */
    uint64_t limit_v[VG_LIM_COUNT];
    char *image;
    bool dry_run;
    char **env;                  /* NAME=VALUE */
    unsigned nenv;
    char *task_id;
};

/* Parses body; -1 with err naming the member and what is wrong. */
int vg_sreq_parse(struct vg_sreq *q, const char *body, size_t len, struct vg_err *err);
void vg_sreq_free(struct vg_sreq *q);
/* Writes the request's files (into dir/work, owned by owner), stdin and
 * policy into the run's new directory dir.  -1 with err. */
int vg_sreq_write(const struct vg_sreq *q, const char *dir, uid_t owner, struct vg_err *err);
/* The wall and CPU time the run asks for (its limits, else the table's). */
uint64_t vg_sreq_want_wall_ms(const struct vg_sreq *q);
uint64_t vg_sreq_want_cpu_ms(const struct vg_sreq *q);
/* The `vigil run` command line of the run, NULL-terminated, malloc'd:
 * VIGIL run OPTIONS -- ARGV (the candidate's host uid is put in when it
 * starts, serve/exec.c). */
char **vg_sreq_command(const struct vg_sreq *q, const char *vigil, const char *dir,
                       const char *id, uint64_t cpu_ms, uint64_t wall_ms);
void vg_argv_free(char **v);
#endif
