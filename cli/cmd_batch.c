/* cmd_batch.c: `vigil batch TASKS.jsonl --out DIR [-j N] [--shard I/N]`:
 * the command line of batch/. */
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "util/escape.h"
#include "util/sharedir.h"

#define MAX_JOBS 256

static const char usage_text[] =
    "usage: vigil batch TASKS.jsonl --out DIR [-j N] [--shard I/N] [-p POLICY]\n"
    "       vigil batch TASKS.jsonl --out DIR --rerun failed|all\n"
    "       vigil batch TASKS.jsonl --out DIR --merge\n"
    "\n"
    "Run every task of TASKS.jsonl (one JSON object a line) in its own fresh\n"
    "sandbox, N at a time.  Each task gets OUT/tasks/ID/ (run.msgpack,\n"
    "result.json, task.json, work/); OUT/results.jsonl gets one line per task:\n"
    "its result record, its task_id, its key (the SHA-256 of everything that\n"
    "decides the run: command or code, input and stdin bytes, policy with its\n"
    "includes, image digest, limits, env, vigil's version) and its files'\n"
    "manifest.  A task with a complete result of its key (not status error) is\n"
    "not run again: rerun the same command to finish a stopped batch; a\n"
    "changed task runs again.  Task keys: id, argv | code + language (python,\n"
    "shell, node), inputs, stdin, policy, image, limits, env, dry_run, and\n"
    "labels (what the task is, for vigil report --by; not in the key);\n"
    "relative paths are the current directory's (vigil-running(7), \"Many\n"
    "candidates\").\n"
    "\n";

static const char usage_tail[] =
    "\n"
    "Exit status: 0 every task has a result; 1 some task's run could not be\n"
    "carried out (status error: a retry runs it again); 2 the batch is\n"
    "misconfigured (bad task file, policy, input, flag or --out: do not retry);\n"
    "3 interrupted or results missing (a retry resumes).\n";

/* What the command line gives; the shard is worked out after it. */
struct batch_args {
    struct vg_batch_opts o;
    const char *shard, *shards;
    int progress;          /* PROGRESS_* */
};

enum { PROGRESS_AUTO, PROGRESS_ALWAYS, PROGRESS_NEVER };
static const char *const rerun_names[] = {
    [VG_RERUN_CHANGED] = "changed", [VG_RERUN_FAILED] = "failed", [VG_RERUN_ALL] = "all", NULL,
};

static const char *const progress_names[] = {
    [PROGRESS_AUTO] = "auto", [PROGRESS_ALWAYS] = "always", [PROGRESS_NEVER] = "never", NULL,
};

#define AT(field) offsetof(struct batch_args, field)

static const struct vg_opt rows[] = {
    {"out", 'o', "DIR", "the batch directory (created; vigil's own)",
     .kind = VG_OPT_STRING, .off = AT(o.out)},
    {"jobs", 'j', "N", "runs at once", .def = "1",
     .kind = VG_OPT_UINT, .off = AT(o.jobs), .min = 1, .max = MAX_JOBS},
    {"prepare", 0, "K", "sandboxes prepared ahead for the next tasks\n"
     "(vigil run --hold), so a slot that frees starts\nits next candidate at once",
     .def_text = "-j's N", .kind = VG_OPT_UINT, .off = AT(o.prepare), .min = 0, .max = MAX_JOBS,
     .seen = VG_OPT_SEEN(struct batch_args, o.prepare_set)},
    {"no-prepare", 0, NULL, "prepare nothing: every task's run is cold\n(--prepare 0)",
     .kind = VG_OPT_FLAG, .off = AT(o.no_prepare)},
    {"uid-range", 0, "A-B", "each task's run a host uid of its own from\n"
     "uids A to B while it lives (root)",
     .kind = VG_OPT_STRING, .off = AT(o.uid_range)},
    {"shard", 0, "I/N", "run only shard I of N (0-based)", .def_text =
     "from SLURM_ARRAY_TASK_ID/_COUNT/_MIN, or\nJOB_COMPLETION_INDEX with --shards N (or VIGIL_SHARDS)",
     .kind = VG_OPT_STRING, .off = AT(shard)},
    {"shards", 0, "N", "the shard count for JOB_COMPLETION_INDEX",
     .kind = VG_OPT_STRING, .off = AT(shards)},
    {"policy", 'p', "P",
     "the policy of tasks that name none (a path: the\ncurrent directory's)",
     .kind = VG_OPT_STRING, .off = AT(o.policy)},
    {"image", 0, "IMAGE", "the image of tasks that name none (else their\n"
     "policy's 'image'); found once, each run gets its digest",
     .kind = VG_OPT_STRING, .off = AT(o.image)},
    {"rerun", 0, "WHAT", "which tasks run again: changed (new, changed,\n"
     "interrupted or status error), failed (those and\nany not ok), all", .def = "changed",
     .kind = VG_OPT_CHOICE, .off = AT(o.rerun), .choices = rerun_names},
    {"merge", 0, NULL, "run nothing: join every shard's results into\nOUT/results.jsonl",
     .kind = VG_OPT_FLAG, .off = AT(o.merge)},
    {"progress", 0, "WHEN", "a progress bar: auto (stderr a terminal), always, never",
     .def = "auto", .kind = VG_OPT_CHOICE, .off = AT(progress), .choices = progress_names},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

static const struct vg_example examples[] = {
    {"vigil batch tasks.jsonl --out runs -j 4",
     "run every task, four at a time; rerun it to finish a stopped batch"},
    {"vigil batch tasks.jsonl --out runs --shard 0/8",
     "run one eighth of the tasks (one node of eight)"},
    {"vigil batch tasks.jsonl --out runs --merge",
     "join every shard's results into runs/results.jsonl"},
};

const struct vg_optcmd vg_batch_optcmd = {
    .name = "batch", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows),
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

static int usage_error(const char *fmt, const char *arg)
{
    /* arg is what the caller typed: escaped with the rest of the line */
    char *what = vg_xasprintf(fmt, arg);
    vg_say(stderr, "vigil batch: %s (try 'vigil batch --help')", what);
    free(what);
    return VG_BATCH_CONFIG;
}

/* --uid-range: root's, and wide enough that no two live runs share a uid
 * (two per run at once: a task's refusing held vigil may still be ending
 * when its cold run starts).  o->uids set; 0, or a usage error said. */
static int uid_range(struct vg_batch_opts *o, struct vg_uid_range *uids)
{
    struct vg_err err;
    if (!o->uid_range || o->merge)
        return 0;
    if (geteuid() != 0)
        return usage_error("--uid-range %s: needs vigil to run as root (an unprivileged "
                           "batch's candidates are the caller)", o->uid_range);
    if (vg_uid_range_parse(uids, o->uid_range, "--uid-range", &err) < 0)
        return usage_error("%s", err.msg);
    unsigned long need = 2ul * (o->jobs + o->prepare);
    if (vg_uid_range_size(uids) < need) {
        vg_errf(&err, "--uid-range %s: %lu uids at least for -j %u --prepare %u (two per run "
                      "at once)", o->uid_range, need, o->jobs, o->prepare);
        return usage_error("%s", err.msg);
    }
    o->uids = uids;
    return 0;
}

static bool parse_uint(const char *s, unsigned max, unsigned *out)
{
    uint64_t v;
    if (!s || !vg_parse_u64(s, &v) || v > max)
        return false;
    *out = (unsigned)v;
    return true;
}

static bool parse_shard(const char *s, unsigned *i, unsigned *n)
{
    const char *slash = s ? strchr(s, '/') : NULL;
    if (!slash)
        return false;
    char *first = vg_xstrndup(s, (size_t)(slash - s));
    bool ok = parse_uint(first, INT_MAX, i) && parse_uint(slash + 1, INT_MAX, n) && *n > 0 &&
              *i < *n;
    free(first);
    return ok;
}

/* The shard when --shard is not given: what the job scheduler says. */
static int shard_from_env(const char *shards_flag, unsigned *i, unsigned *n)
{
    const char *id = getenv("SLURM_ARRAY_TASK_ID"), *count = getenv("SLURM_ARRAY_TASK_COUNT");
    if (id && count) {
        unsigned idx, min = 0;
        const char *m = getenv("SLURM_ARRAY_TASK_MIN");
        if (!parse_uint(id, INT_MAX, &idx) || !parse_uint(count, INT_MAX, n) || !*n ||
            (m && !parse_uint(m, INT_MAX, &min)) || idx < min || idx - min >= *n)
            return usage_error("SLURM_ARRAY_TASK_ID=%s does not name a shard", id);
        *i = idx - min;
        return 0;
    }
    const char *k = getenv("JOB_COMPLETION_INDEX");
    if (k) {
        const char *total = shards_flag ? shards_flag : getenv("VIGIL_SHARDS");
        if (!total)
            return usage_error("JOB_COMPLETION_INDEX=%s needs --shards N (or VIGIL_SHARDS)", k);
        if (!parse_uint(k, INT_MAX, i) || !parse_uint(total, INT_MAX, n) || !*n || *i >= *n)
            return usage_error("JOB_COMPLETION_INDEX=%s does not name a shard", k);
        return 0;
    }
    *i = 0;
    *n = 1;
    return 0;
}

int vg_cmd_batch(int argc, char **argv)
{
    struct batch_args a = {.shard = NULL};
    struct vg_err err;
    int first, rc = vg_opts_parse(&vg_batch_optcmd, argc, argv, &a, &first, &err);
    if (rc == VG_OPTS_HELP) {
        vg_opts_help(&vg_batch_optcmd, stdout);
        return 0;
    }
    if (rc < 0)
        return usage_error("%s", err.msg);
    struct vg_batch_opts o = a.o;
    const char *shard = a.shard, *shards = a.shards;
    o.progress = a.progress == PROGRESS_AUTO ? isatty(STDERR_FILENO) : a.progress == PROGRESS_ALWAYS;
    if (first != argc - 1)
        return usage_error("%s", first >= argc ? "no task file given" : "one task file only");
    if (!o.out)
        return usage_error("%s", "--out DIR is required");
    o.tasks_path = argv[first];
    if (o.no_prepare && o.prepare_set && o.prepare)
        return usage_error("%s", "--no-prepare and --prepare K > 0 say opposite things");
    if (!o.prepare_set)
        o.prepare = o.jobs;
    if (o.no_prepare)
        o.prepare = 0;
    if (shard) {
        if (!parse_shard(shard, &o.shard, &o.nshards))
            return usage_error("--shard %s: give I/N with 0 <= I < N", shard);
    } else if (!o.merge && shard_from_env(shards, &o.shard, &o.nshards) != 0) {
        return VG_BATCH_CONFIG;
    }
    char self[PATH_MAX];
    if (!vg_self_exe(self, sizeof self))
        return usage_error("%s", "cannot find the vigil binary (/proc/self/exe)");
    o.vigil = self;

    /* Every run works in its own directory, so the batch's paths are made
     * absolute; the directory itself is created only once the tasks are
     * known to be good (vg_batch_run): bad input leaves nothing behind. */
    char cwd[PATH_MAX];
    if (o.out[0] != '/' && !getcwd(cwd, sizeof cwd))
        return usage_error("%s", "cannot read the current directory");
    char *out = o.out[0] == '/' ? vg_xstrdup(o.out) : vg_xasprintf("%s/%s", cwd, o.out);
    o.out = out;

    struct vg_batch_tasks ts;
    if (vg_batch_load(o.tasks_path, &ts, &err) < 0) {
        vg_say(stderr, "vigil batch: %s", err.msg);
        free(out);
        return VG_BATCH_CONFIG;
    }
    struct vg_uid_range uids = {0};
    rc = uid_range(&o, &uids);
    /* every policy and file checked, and the keys made, before anything runs */
    if (rc) {
        /* said */
    } else if (vg_batch_check(&o, &ts, &err) < 0) {
        vg_say(stderr, "vigil batch: %s", err.msg);
        rc = VG_BATCH_CONFIG;
    } else {
        rc = vg_batch_run(&o, &ts);
    }
    vg_batch_free(&ts);
    free(out);
    vg_uid_range_free(&uids);
    return rc;
}
