/* taskfile.c: the task file.  One JSON object per line (blank lines are
 * skipped); every key is checked, so a typo is an error rather than a
 * silently different run:
 *   id        string, required: [A-Za-z0-9._-], 1-100, not starting with '.'
 *   argv      [string]: the command, or
 *   code      string, with
 *   language  python | shell | node: the code is written to the work dir
 *             and run with the language's interpreter and shipped policy
 *   inputs    [string]: host files copied into the work dir (by basename)
 *   stdin     string: the candidate's stdin, or {"file": PATH}: a host file's
 *             bytes (without it, stdin is /dev/null)
 *   policy    string: a policy file or a shipped policy's name
 *   image     string: a stored image's name or digest (vigil run --image)
 *   limits    {name: value}: a limit by its policy name or its `vigil run`
 *             flag (time or timeout, memory, procs, ...), checked here
 *   env       {NAME: "VALUE"}: `vigil run --env NAME=VALUE` for each
 *   dry_run   bool: `vigil run --dry-run`
 *   labels    {NAME: "VALUE"}: what the task is (a model, a prompt, a
 *             temperature), for grouping (`vigil report --by NAME`): carried
 *             into the task's results line untouched.  Not in the key:
 *             labels change nothing of what runs, so relabelling a batch
 *             reruns nothing and the next results file has the new labels
 * A key given twice, in a task or in one of its objects, is an error (a
 * JSON reader would keep one of them, silently); relative paths are the
 * batch's cwd's (key.c resolves and checks them). */
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "policy/policy.h"
#include "util/jsonr.h"
#include "util/sha256.h"

#define MAX_TASK_FILE (256u << 20)
#define MAX_ID 100
#define MAX_LABEL_VALUE 1000
#define MAX_LABELS 32

static const char *const python_argv[] = {"python3", "cand.py", NULL};
static const char *const shell_argv[] = {"sh", "cand.sh", NULL};
static const char *const node_argv[] = {"node", "cand.js", NULL};

static const struct vg_language languages[] = {
    {"python", "cand.py", python_argv, "python"},
    {"shell", "cand.sh", shell_argv, "shell"},
    {"node", "cand.js", node_argv, "node"},
};

static const char *const known_keys[] = {
    "id", "argv", "code", "language", "inputs", "stdin", "policy", "image", "limits", "env",
    "dry_run", "labels",
};

bool vg_batch_valid_word(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n > max || s[0] == '.')
        return false;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-'))
            return false;
    return true;
}

static bool valid_id(const char *id)
{
    return vg_batch_valid_word(id, MAX_ID);
}

/* A [string] member as a NULL-terminated vector; NULL (and *bad) when it
 * is not one. */
static char **strings(const struct vg_jv *v, unsigned *n, bool *bad)
{
    *n = 0;
    if (!v)
        return NULL;
    if (v->type != VG_JARR) {
        *bad = true;
        return NULL;
    }
    char **out = vg_xcalloc(v->n + 1, sizeof *out);
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i].type != VG_JSTR) {
            for (size_t k = 0; k < i; k++)
                free(out[k]);
            free(out);
            *bad = true;
            return NULL;
        }
        out[i] = vg_xstrdup(v->items[i].s);
    }
    *n = (unsigned)v->n;
    return out;
}

/* A key an object has twice, or NULL.  Sorted, so that a task line of
 * many keys costs n log n, not n squared. */
static int by_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *duplicate_key(const struct vg_jv *v)
{
    if (v->n < 2)
        return NULL;
    char **keys = vg_xcalloc(v->n, sizeof *keys);
    memcpy(keys, v->keys, v->n * sizeof *keys);
    qsort(keys, v->n, sizeof *keys, by_key);
    const char *dup = NULL;
    for (size_t i = 1; i < v->n && !dup; i++)
        if (!strcmp(keys[i - 1], keys[i]))
            dup = keys[i];
    free(keys);
    return dup;
}

static void add_flag(struct vg_batch_task *t, char *flag)
{
    t->flags = vg_xrealloc(t->flags, (t->nflags + 1) * sizeof *t->flags);
    t->flags[t->nflags++] = flag;
}

/* A limit by its policy name ("time") or its flag ("timeout"); -1. */
static int limit_of(const char *key)
{
    int l = vg_limit_from_name(key);
    for (int i = 0; l < 0 && i < VG_LIM_COUNT; i++)
        if (!strcmp(vg_limit_row((enum vg_limit)i)->flag, key))
            l = i;
    return l;
}

/* limits and env are objects whose members become `vigil run` flags; a
 * key given twice is an error, not "one of them wins". */
static int flag_object(const struct vg_jv *v, const char *what, struct vg_err *err)
{
    if (v->type != VG_JOBJ) {
        vg_errf(err, "'%s' must be an object", what);
        return -1;
    }
    const char *dup = duplicate_key(v);
    if (dup) {
        vg_errf(err, "%s: duplicate key '%s'", what, dup);
        return -1;
    }
    return 0;
}

static int env_flags(struct vg_batch_task *t, const struct vg_jv *v, struct vg_err *err)
{
    if (flag_object(v, "env", err) < 0)
        return -1;
    for (size_t i = 0; i < v->n; i++) {
        /* an environment holds text: 1 and 1.0 would be two keys of one run */
        if (v->items[i].type != VG_JSTR) {
            vg_errf(err, "env '%s': the value must be a string", v->keys[i]);
            return -1;
        }
        add_flag(t, vg_xstrdup("--env"));
        add_flag(t, vg_xasprintf("%s=%s", v->keys[i], v->items[i].s));
    }
    return 0;
}

/* A limit's value is checked by the parser `vigil run` itself uses, so
 * that a bad one is the batch's error before anything runs. */
static int limit_flags(struct vg_batch_task *t, const struct vg_jv *v, struct vg_err *err)
{
    if (flag_object(v, "limits", err) < 0)
        return -1;
    const char *seen[VG_LIM_COUNT] = {0}; /* by which key: "time" and "timeout" are one */
    for (size_t i = 0; i < v->n; i++) {
        const struct vg_jv *val = &v->items[i];
        int l = limit_of(v->keys[i]);
        uint64_t parsed;
        char names[256], syntax[160];
        if (val->type != VG_JSTR && val->type != VG_JNUM) {
            vg_errf(err, "limits '%s': the value must be a string or a number", v->keys[i]);
            return -1;
        }
        if (l < 0) {
            vg_limit_names(names, sizeof names);
            vg_errf(err, "limits: unknown limit '%s' (%s)", v->keys[i], names);
            return -1;
        }
        if (seen[l]) {
            vg_errf(err, "limits: '%s' and '%s' are one limit", seen[l], v->keys[i]);
            return -1;
        }
        seen[l] = v->keys[i];
        if (!vg_limit_parse((enum vg_limit)l, val->s, &parsed)) {
            vg_limit_syntax((enum vg_limit)l, syntax, sizeof syntax);
            vg_errf(err, "limits '%s': '%s' is not %s", v->keys[i], val->s, syntax);
            return -1;
        }
        add_flag(t, vg_xasprintf("--%s", vg_limit_row((enum vg_limit)l)->flag));
        add_flag(t, vg_xstrdup(val->s));
    }
    return 0;
}

static const struct vg_language *language(const char *name)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(languages); i++)
        if (!strcmp(languages[i].name, name))
            return &languages[i];
    return NULL;
}

/* labels: {NAME: "VALUE"}, names as ids are (a word `--by` can take),
 * values text (1 and 1.0 would be two groups of one model). */
static int labels_from(struct vg_batch_task *t, const struct vg_jv *v, struct vg_err *err)
{
    if (!v)
        return 0;
    if (flag_object(v, "labels", err) < 0)
        return -1;
    if (v->n > MAX_LABELS) {
        vg_errf(err, "labels: %zu labels, at most %d", v->n, MAX_LABELS);
        return -1;
    }
    t->labels = v->n ? vg_xcalloc(v->n, sizeof *t->labels) : NULL;
    for (size_t i = 0; i < v->n; i++) {
        if (!vg_batch_valid_word(v->keys[i], VG_BATCH_MAX_LABEL_NAME)) {
            vg_errf(err, "labels: '%s' is not a label name (1-%d letters, digits, '.', '_' or "
                         "'-', not starting with '.')", v->keys[i], VG_BATCH_MAX_LABEL_NAME);
            return -1;
        }
        if (v->items[i].type != VG_JSTR || strlen(v->items[i].s) > MAX_LABEL_VALUE) {
            vg_errf(err, "labels '%s': the value must be a string of at most %d bytes",
                    v->keys[i], MAX_LABEL_VALUE);
            return -1;
        }
        t->labels[i].name = vg_xstrdup(v->keys[i]);
        t->labels[i].value = vg_xstrdup(v->items[i].s);
        t->nlabels++;
    }
    return 0;
}

static int check_keys(const struct vg_jv *v, struct vg_err *err)
{
    const char *dup = duplicate_key(v);
    if (dup) {
        vg_errf(err, "duplicate key '%s'", dup);
        return -1;
    }
    for (size_t i = 0; i < v->n; i++) {
        bool known = false;
        for (size_t k = 0; k < VG_ARRAY_LEN(known_keys) && !known; k++)
            known = !strcmp(v->keys[i], known_keys[k]);
        if (!known) {
            vg_errf(err, "unknown key '%s' (id argv code language inputs stdin policy image "
                         "limits env dry_run labels)", v->keys[i]);
            return -1;
        }
    }
    return 0;
}

static struct vg_batch_file *file_named(const char *path)
{
    struct vg_batch_file *f = vg_xcalloc(1, sizeof *f);
    f->path = vg_xstrdup(path);
    return f;
}

static int inputs_from(struct vg_batch_task *t, const struct vg_jv *v, struct vg_err *err)
{
    bool bad = false;
    unsigned n;
    char **paths = strings(v, &n, &bad);
    if (bad) {
        vg_errf(err, "'inputs' must be a list of file paths");
        return -1;
    }
    t->inputs = n ? vg_xcalloc(n, sizeof *t->inputs) : NULL;
    for (unsigned i = 0; i < n; i++)
        t->inputs[i].path = paths[i]; /* taken over */
    t->ninputs = n;
    free(paths);
    return 0;
}

/* stdin: "text", or {"file": PATH}. */
static int stdin_from(struct vg_batch_task *t, const struct vg_jv *v, struct vg_err *err)
{
    if (!v)
        return 0;
    if (v->type == VG_JSTR) {
        t->stdin_text = vg_xstrdup(v->s);
        return 0;
    }
    const char *file = vg_jv_str(v, "file");
    if (v->type != VG_JOBJ || v->n != 1 || !file) {
        vg_errf(err, "'stdin' is a string or {\"file\": PATH}");
        return -1;
    }
    t->stdin_file = file_named(file);
    return 0;
}

static int task_from(const struct vg_jv *v, struct vg_batch_task *t, struct vg_err *err)
{
    if (v->type != VG_JOBJ) {
        vg_errf(err, "a task is a JSON object");
        return -1;
    }
    if (check_keys(v, err) < 0)
        return -1;
    const char *id = vg_jv_str(v, "id");
    if (!id || !valid_id(id)) {
        vg_errf(err, "'id' must be a string of 1-%d letters, digits, '.', '_' or '-', not "
                     "starting with '.'", MAX_ID);
        return -1;
    }
    t->id = vg_xstrdup(id);
    bool bad = false;
    unsigned argc;
    t->argv = strings(vg_jv_get(v, "argv"), &argc, &bad);
    const struct vg_jv *code = vg_jv_get(v, "code");
    const char *lang = vg_jv_str(v, "language");
    if (bad || (t->argv && !argc)) {
        vg_errf(err, "'argv' must be a non-empty list of strings");
        return -1;
    }
    if (!t->argv == !code) {
        vg_errf(err, "a task has either 'argv' or 'code' (with 'language'), not %s",
                code ? "both" : "neither");
        return -1;
    }
    if (code) {
        if (code->type != VG_JSTR || !lang || !(t->lang = language(lang))) {
            vg_errf(err, "'code' is a string and needs 'language': python, shell or node");
            return -1;
        }
        t->code = vg_xstrdup(code->s);
    } else if (vg_jv_get(v, "language")) {
        vg_errf(err, "'language' goes with 'code', not with 'argv'");
        return -1;
    }
    if (inputs_from(t, vg_jv_get(v, "inputs"), err) < 0 ||
        stdin_from(t, vg_jv_get(v, "stdin"), err) < 0)
        return -1;
    const struct vg_jv *pol = vg_jv_get(v, "policy");
    if (pol && pol->type != VG_JSTR) {
        vg_errf(err, "'policy' must be a string");
        return -1;
    }
    t->policy = pol ? vg_xstrdup(pol->s) : t->lang ? vg_xstrdup(t->lang->policy) : NULL;
    const struct vg_jv *img = vg_jv_get(v, "image");
    if (img && img->type != VG_JSTR) {
        vg_errf(err, "'image' must be a string");
        return -1;
    }
    t->image = img ? vg_xstrdup(img->s) : NULL;
    const struct vg_jv *dry = vg_jv_get(v, "dry_run");
    if (dry && dry->type != VG_JBOOL) {
        vg_errf(err, "'dry_run' must be true or false");
        return -1;
    }
    if (dry && dry->b)
        add_flag(t, vg_xstrdup("--dry-run"));
    const struct vg_jv *limits = vg_jv_get(v, "limits"), *env = vg_jv_get(v, "env");
    if ((limits && limit_flags(t, limits, err) < 0) || (env && env_flags(t, env, err) < 0))
        return -1;
    return labels_from(t, vg_jv_get(v, "labels"), err);
}

static void task_free(struct vg_batch_task *t)
{
    free(t->id);
    for (char **a = t->argv; a && *a; a++)
        free(*a);
    free(t->argv);
    free(t->code);
    for (unsigned i = 0; i < t->ninputs; i++)
        free(t->inputs[i].path);
    free(t->inputs);
    free(t->stdin_text);
    if (t->stdin_file)
        free(t->stdin_file->path);
    free(t->stdin_file);
    free(t->policy);
    free(t->policy_file);
    free(t->image);
    free(t->image_digest);
    for (unsigned i = 0; i < t->nflags; i++)
        free(t->flags[i]);
    free(t->flags);
    for (unsigned i = 0; i < t->nlabels; i++) {
        free(t->labels[i].name);
        free(t->labels[i].value);
    }
    free(t->labels);
}

void vg_batch_free(struct vg_batch_tasks *ts)
{
    for (unsigned i = 0; i < ts->n; i++)
        task_free(&ts->t[i]);
    free(ts->t);
    ts->t = NULL;
    ts->n = 0;
}

static int one_line(const char *path, unsigned lineno, const char *line, size_t len,
                    struct vg_batch_tasks *ts, struct vg_err *err)
{
    struct vg_err e;
    struct vg_jv *v = vg_jv_parse(line, len, &e);
    if (!v) {
        vg_errf(err, "%s:%u: %s", path, lineno, e.msg);
        return -1;
    }
    ts->t = vg_xrealloc(ts->t, (ts->n + 1) * sizeof *ts->t);
    struct vg_batch_task *t = &ts->t[ts->n++];
    memset(t, 0, sizeof *t);
    t->line = lineno;
    int rc = task_from(v, t, &e);
    vg_jv_free(v);
    if (rc < 0) {
        vg_errf(err, "%s:%u: %s", path, lineno, e.msg);
        return -1;
    }
    for (unsigned i = 0; i + 1 < ts->n; i++)
        if (!strcmp(ts->t[i].id, t->id)) {
            vg_errf(err, "%s:%u: duplicate id '%s' (first on line %u)", path, lineno, t->id,
                    ts->t[i].line);
            return -1;
        }
    return 0;
}

int vg_batch_load(const char *path, struct vg_batch_tasks *ts, struct vg_err *err)
{
    memset(ts, 0, sizeof *ts);
    size_t len;
    char *text = vg_read_file(path, MAX_TASK_FILE, &len, err);
    if (!text)
        return -1;
    unsigned lineno = 0;
    int rc = 0;
    for (const char *p = text, *end = text + len; p < end && rc == 0;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        bool blank = true;
        for (size_t i = 0; i < n && blank; i++)
            blank = p[i] == ' ' || p[i] == '\t' || p[i] == '\r';
        if (!blank)
            rc = one_line(path, lineno, p, n, ts, err);
        p += n + 1;
    }
    free(text);
    if (rc == 0 && !ts->n) {
        vg_errf(err, "%s: no tasks", path);
        rc = -1;
    }
    if (rc < 0)
        vg_batch_free(ts);
    return rc;
}

unsigned vg_batch_shard(const struct vg_batch_task *t, unsigned nshards)
{
    /* the first 64 bits of the id's SHA-256: every shard gets about as
     * many tasks, and a task stays in its shard when others come and go */
    char hex[65];
    vg_sha256_buf(t->id, strlen(t->id), hex);
    hex[16] = 0;
    uint64_t v = strtoull(hex, NULL, 16);
    return nshards ? (unsigned)(v % nshards) : 0;
}
