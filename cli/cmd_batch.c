/* cmd_batch.c: `vigil batch TASKS.jsonl --out DIR [-j N] [--shard I/N]`:
 * the command line of batch/. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "cli/cli.h"
#include "util/escape.h"

#define MAX_JOBS 256

static const char usage_text[] =
    "usage: vigil batch TASKS.jsonl --out DIR [-j N] [--shard I/N] [-p POLICY]\n"
    "       vigil batch TASKS.jsonl --out DIR --merge\n"
    "\n"
    "Run every task of TASKS.jsonl (one JSON object a line) in its own fresh\n"
    "sandbox, N at a time.  Each task gets OUT/tasks/ID/ (run.msgpack,\n"
    "result.json, work/); OUT/results.jsonl gets one line per task: its result\n"
    "record, its task_id and the sha256 of what ran.  A task whose result is\n"
    "complete is not run again: rerun the same command to finish a batch that\n"
    "was stopped.  Task keys: id, argv | code + language (python, shell, node),\n"
    "inputs, policy, limits, env, dry_run (docs/RUN.md, \"Many candidates\").\n"
    "\n"
    "  -o, --out DIR      the batch directory (created; vigil's own)\n"
    "  -j, --jobs N       runs at once (default 1)\n"
    "      --shard I/N    run only shard I of N (0-based); default from\n"
    "                     SLURM_ARRAY_TASK_ID/_COUNT/_MIN, or JOB_COMPLETION_INDEX\n"
    "                     with --shards N (or VIGIL_SHARDS)\n"
    "      --shards N     the shard count for JOB_COMPLETION_INDEX\n"
    "  -p, --policy P     the policy of tasks that name none\n"
    "      --merge        run nothing: join every shard's results into\n"
    "                     OUT/results.jsonl\n"
    "      --progress WHEN  a progress bar: auto (stderr is a terminal), always, never\n"
    "\n"
    "Exit status: 0 every task has a result; 1 some task's run could not be\n"
    "carried out (status error: a retry may help); 2 the batch is misconfigured\n"
    "(bad task file, flag or --out: do not retry); 3 interrupted or results\n"
    "missing (a retry resumes).\n";

static int usage_error(const char *fmt, const char *arg)
{
    /* arg is what the caller typed: escaped with the rest of the line */
    char *what = vg_xasprintf(fmt, arg);
    vg_say(stderr, "vigil batch: %s (try 'vigil batch --help')", what);
    free(what);
    return VG_BATCH_CONFIG;
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
    enum { OPT_SHARD = 256, OPT_SHARDS, OPT_MERGE, OPT_PROGRESS };
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},   {"jobs", required_argument, NULL, 'j'},
        {"policy", required_argument, NULL, 'p'}, {"shard", required_argument, NULL, OPT_SHARD},
        {"shards", required_argument, NULL, OPT_SHARDS}, {"merge", no_argument, NULL, OPT_MERGE},
        {"progress", required_argument, NULL, OPT_PROGRESS}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct vg_batch_opts o = {.jobs = 1, .nshards = 0, .progress = isatty(2)};
    const char *shard = NULL, *shards = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:j:p:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o.out = optarg; break;
        case 'j':
            if (!parse_uint(optarg, MAX_JOBS, &o.jobs) || !o.jobs)
                return usage_error("-j %s: give 1 to 256 runs at once", optarg);
            break;
        case 'p': o.policy = optarg; break;
        case OPT_SHARD: shard = optarg; break;
        case OPT_SHARDS: shards = optarg; break;
        case OPT_MERGE: o.merge = true; break;
        case OPT_PROGRESS:
            if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
                return usage_error("--progress %s: auto, always or never", optarg);
            if (strcmp(optarg, "auto"))
                o.progress = !strcmp(optarg, "always");
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: return VG_BATCH_CONFIG;
        }
    }
    if (optind != argc - 1)
        return usage_error("%s", optind >= argc ? "no task file given" : "one task file only");
    if (!o.out)
        return usage_error("%s", "--out DIR is required");
    o.tasks_path = argv[optind];
    if (shard) {
        if (!parse_shard(shard, &o.shard, &o.nshards))
            return usage_error("--shard %s: give I/N with 0 <= I < N", shard);
    } else if (!o.merge && shard_from_env(shards, &o.shard, &o.nshards) != 0) {
        return VG_BATCH_CONFIG;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return usage_error("%s", "cannot find the vigil binary (/proc/self/exe)");
    self[n] = 0;
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
    struct vg_err err;
    if (vg_batch_load(o.tasks_path, &ts, &err) < 0) {
        vg_say(stderr, "vigil batch: %s", err.msg);
        free(out);
        return VG_BATCH_CONFIG;
    }
    int rc = vg_batch_run(&o, &ts);
    vg_batch_free(&ts);
    free(out);
    return rc;
}
