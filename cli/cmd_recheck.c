/* cmd_recheck.c: `vigil recheck -p POLICY LOG... | BATCHDIR`: every
 * decision the logs record, made again under POLICY (insight/recheck.h),
 * nothing run.  A directory is a `vigil batch --out` directory: its tasks
 * in results.jsonl's order (else tasks/ by name), then a table.  Exit 0
 * when no decision changes, 1 when some does, 2 for usage errors, a bad
 * policy or a log that cannot be read (the others are rechecked still). */
#include <dirent.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch/batch.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "insight/recheck.h"
#include "policy/policy.h"
#include "util/escape.h"
#include "util/jsonr.h"

#define EXIT_SAME 0
#define EXIT_CHANGED 1
#define EXIT_BAD 2
#define SHOWN_CHANGES 20            /* per run in the text, unless --all */
#define RESULTS_FILE "results.jsonl"
#define TASKS_DIR "tasks"
#define TASK_LOG "run.msgpack"
#define RESULTS_MAX (1u << 30)      /* a results.jsonl larger than this is not one */

static const char usage_text[] =
    "usage: vigil recheck -p POLICY [--json] [--all] [--home DIR] LOG... | BATCHDIR\n"
    "Decide every call the logs record again under POLICY, with the decider the\n"
    "engines use, and run nothing: the calls whose decision changes (old ->\n"
    "new, the rule that decides now, the candidate's Python line when the\n"
    "record has one), a verdict per run (would pass, would be refused N calls,\n"
    "would be killed), and what the log cannot tell (calls the run's policy\n"
    "did not record, what a candidate would have done after another answer).\n"
    "A dry run's log holds every attempt; an enforcing run's only what the\n"
    "candidate did with the answers it got.  BATCHDIR is a 'vigil batch --out'\n"
    "directory: each task's log, then a table of all of them.\n";

static const char usage_tail[] =
    "Exit status: 0 no decision changes; 1 some decision changes; 2 usage, a bad\n"
    "policy, or a log or batch directory that cannot be read (the others are\n"
    "rechecked and printed all the same).\n";

struct recheck_args {
    const char *policy, *home;
    bool json, all;
};

#define AT(field) offsetof(struct recheck_args, field)

static const struct vg_opt rows[] = {
    {"policy", 'p', "POLICY", "the new policy: a file, or a shipped policy's name",
     .kind = VG_OPT_STRING, .off = AT(policy)},
    {"json", 0, NULL, "JSON Lines: one object per run (all its changes), then\na summary",
     .kind = VG_OPT_FLAG, .off = AT(json)},
    {"all", 0, NULL, "every change of a run in the text (else the first 20)",
     .kind = VG_OPT_FLAG, .off = AT(all)},
    {"home", 0, "DIR", "~ as the runs had it (a log does not record it)",
     .def_text = "$HOME", .kind = VG_OPT_STRING, .off = AT(home)},
    {"help", 'h', NULL, "this text", .kind = VG_OPT_STOP, .value = VG_OPTS_HELP},
};

static const struct vg_example examples[] = {
    {"vigil recheck -p strict.policy dry.msgpack",
     "what a dry run's calls would get under strict.policy"},
    {"vigil recheck -p strict.policy runs --json",
     "a whole batch, as JSON Lines for a script"},
};

const struct vg_optcmd vg_recheck_optcmd = {
    .name = "recheck", .usage = usage_text, .epilog = usage_tail,
    .rows = rows, .n = VG_ARRAY_LEN(rows),
    .examples = examples, .nexamples = VG_ARRAY_LEN(examples),
};

static int usage_error(const char *what)
{
    vg_say(stderr, "vigil recheck: %s (try 'vigil recheck --help')", what);
    return EXIT_BAD;
}

/* ---- what to recheck ---- */

struct item {
    char *id;    /* the table's name for it */
    char *log;   /* NULL: a task with no log */
};

struct items {
    struct item *v;
    size_t n, cap;
    bool batch;  /* a directory was given: print the table */
};

static void add(struct items *it, char *id, char *log)
{
    if (it->n == it->cap) {
        it->cap = it->cap ? 2 * it->cap : 16;
        it->v = vg_xrealloc(it->v, it->cap * sizeof *it->v);
    }
    it->v[it->n++] = (struct item){.id = id, .log = log};
}

/* A task of dir: its log if it has one (a task whose sandbox never
 * started has none). */
static void add_task(struct items *it, const char *dir, const char *id)
{
    char *log = vg_xasprintf("%s/%s/%s/%s", dir, TASKS_DIR, id, TASK_LOG);
    struct stat st;
    if (stat(log, &st) < 0) {
        free(log);
        log = NULL;
    }
    add(it, vg_xstrdup(id), log);
}

/* The tasks in results.jsonl's order: the results of their current keys. */
static int from_results(struct items *it, const char *dir, const char *path, struct vg_err *err)
{
    size_t len;
    char *text = vg_read_file(path, RESULTS_MAX, &len, err);
    if (!text)
        return -1;
    int rc = 0;
    unsigned line = 0;
    for (char *p = text, *nl; rc == 0 && p < text + len; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(text + len - p));
        if (!nl)
            nl = text + len;
        line++;
        if (nl == p)
            continue;
        struct vg_err why;
        struct vg_jv *v = vg_jv_parse(p, (size_t)(nl - p), &why);
        const char *id = v ? vg_jv_str(v, "task_id") : NULL;
        if (!v)
            vg_errf(err, "%s:%u: %s", path, line, why.msg);
        else if (!id || !vg_batch_valid_word(id, NAME_MAX))
            vg_errf(err, "%s:%u: no task_id that names a task directory", path, line);
        else
            add_task(it, dir, id);
        rc = v && id && vg_batch_valid_word(id, NAME_MAX) ? 0 : -1;
        vg_jv_free(v);
    }
    free(text);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct item *)a)->id, ((const struct item *)b)->id);
}

/* No results.jsonl (a shard's batch): every task directory, by name. */
static int from_tasks(struct items *it, const char *dir, struct vg_err *err)
{
    char *tasks = vg_xasprintf("%s/%s", dir, TASKS_DIR);
    DIR *d = opendir(tasks);
    if (!d) {
        vg_errf(err, "%s: not a vigil batch directory (no %s, no %s/)", dir, RESULTS_FILE,
                TASKS_DIR);
        free(tasks);
        return -1;
    }
    size_t first = it->n;
    for (struct dirent *e; (e = readdir(d));)
        if (vg_batch_valid_word(e->d_name, NAME_MAX)) /* .ID.prev: a rerun's old result */
            add_task(it, dir, e->d_name);
    closedir(d);
    free(tasks);
    qsort(it->v + first, it->n - first, sizeof *it->v, by_name);
    return 0;
}

static int add_operand(struct items *it, const char *arg, struct vg_err *err)
{
    struct stat st;
    if (stat(arg, &st) < 0 || !S_ISDIR(st.st_mode)) {
        add(it, vg_xstrdup(arg), vg_xstrdup(arg)); /* a log: read errors are its own */
        return 0;
    }
    it->batch = true;
    char *results = vg_xasprintf("%s/%s", arg, RESULTS_FILE);
    int rc = access(results, F_OK) == 0 ? from_results(it, arg, results, err)
                                        : from_tasks(it, arg, err);
    free(results);
    return rc;
}

static void items_free(struct items *it)
{
    for (size_t i = 0; i < it->n; i++) {
        free(it->v[i].id);
        free(it->v[i].log);
    }
    free(it->v);
}

/* ---- running it ---- */

static int emit(struct vg_buf *b)
{
    int rc = b->len && fwrite(b->data, 1, b->len, stdout) != b->len ? -1 : 0;
    b->len = 0;
    return rc;
}

struct outcome {
    size_t missing, failed;
    bool changed, write_failed;
};

#define NO_LOG "no log (its run never started)"
#define UNREADABLE "not rechecked: its log cannot be read (above)"

/* Recheck one item into *slot (NULL when it could not be: *absent says why). */
static void one(const struct recheck_args *a, const struct vg_recheck_opts *o,
                const struct item *item, struct vg_recheck_run **slot, const char **absent,
                struct outcome *out)
{
    *slot = NULL;
    *absent = NO_LOG;
    if (!item->log) {
        out->missing++;
        return;
    }
    *absent = UNREADABLE;
    struct vg_recheck_run *run = vg_xcalloc(1, sizeof *run);
    struct vg_err err;
    if (vg_recheck_log(o, item->log, run, &err) < 0) {
        vg_say(stderr, "vigil: recheck: %s", err.msg);
        vg_recheck_run_free(run);
        free(run);
        out->failed++;
        return;
    }
    out->changed |= vg_recheck_changed(run);
    struct vg_buf b = {0};
    if (a->json) {
        vg_recheck_json(run, &b);
        vg_buf_puts(&b, "\n");
    } else {
        vg_recheck_text(run, a->all ? 0 : SHOWN_CHANGES, &b);
        vg_buf_puts(&b, "\n");
    }
    out->write_failed |= emit(&b) < 0;
    vg_buf_free(&b);
    *slot = run;
}

static int recheck_all(const struct recheck_args *a, const struct vg_recheck_opts *o,
                       const struct items *it)
{
    struct vg_recheck_run **runs = vg_xcalloc(it->n ? it->n : 1, sizeof *runs);
    const char **ids = vg_xcalloc(it->n ? it->n : 1, sizeof *ids);
    const char **absent = vg_xcalloc(it->n ? it->n : 1, sizeof *absent);
    struct outcome out = {0};
    for (size_t i = 0; i < it->n; i++) {
        one(a, o, &it->v[i], &runs[i], &absent[i], &out);
        ids[i] = it->v[i].id;
    }
    struct vg_buf b = {0};
    if (a->json)
        vg_recheck_summary_json((const struct vg_recheck_run *const *)runs, it->n, out.missing,
                                out.failed, &b);
    else if (it->n && (it->batch || it->n > 1))
        vg_recheck_table((const struct vg_recheck_run *const *)runs, ids, absent, it->n, &b);
    if (a->json)
        vg_buf_puts(&b, "\n");
    out.write_failed |= emit(&b) < 0 || fflush(stdout) != 0;
    vg_buf_free(&b);
    for (size_t i = 0; i < it->n; i++)
        if (runs[i]) {
            vg_recheck_run_free(runs[i]);
            free(runs[i]);
        }
    free(runs);
    free(ids);
    free(absent);
    if (out.write_failed) {
        vg_say(stderr, "vigil: recheck: cannot write the output");
        return EXIT_BAD;
    }
    return out.failed ? EXIT_BAD : out.changed ? EXIT_CHANGED : EXIT_SAME;
}

int vg_cmd_recheck(int argc, char **argv)
{
    struct recheck_args a = {0};
    struct vg_err err;
    int first, rc = vg_opts_parse(&vg_recheck_optcmd, argc, argv, &a, &first, &err);
    if (rc == VG_OPTS_HELP) {
        vg_opts_help(&vg_recheck_optcmd, stdout);
        return 0;
    }
    if (rc < 0)
        return usage_error(err.msg);
    if (!a.policy)
        return usage_error("give the new policy: -p POLICY");
    if (first >= argc)
        return usage_error("give a LOG or a BATCHDIR");
    char *policy = vg_policy_find(a.policy, &err);
    struct vg_recheck_opts o = {.policy = policy, .home = a.home ? a.home : getenv("HOME")};
    if (!policy || vg_recheck_policy_check(&o, &err) < 0) {
        vg_say(stderr, "vigil: recheck: %s", err.msg);
        free(policy);
        return EXIT_BAD;
    }
    struct items it = {0};
    int bad = 0;
    for (int i = first; i < argc; i++)
        if (add_operand(&it, argv[i], &err) < 0) {
            vg_say(stderr, "vigil: recheck: %s", err.msg);
            bad = 1;
        }
    rc = recheck_all(&a, &o, &it);
    items_free(&it);
    free(policy);
    return bad ? EXIT_BAD : rc;
}
