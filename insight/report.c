/* report.c: see report.h.  One pass over the results file: each line is
 * one candidate, its record's summary and counts taken as they are, its
 * log read for what they lack (report_log.c), all of it added to the
 * fleet and to the candidate's group.  The results file is input like
 * any other: a line that is not a result record is an error naming the
 * file and line, and a task id is used as a directory name only when it
 * is one vigil batch could have made. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "insight/report_int.h"
#include "util/jsonr.h"

#define RESULTS_FILE "results.jsonl"
#define LOG_FILE "run.msgpack"
#define WORK_DIR "work"
#define WORK_NAME "$WORK"   /* as vigil learn and the policies call the work dir */
/* As vigil batch: one result line is at most this long. */
#define MAX_LINE (64u << 20)
/* As vigil batch's ids (batch/taskfile.c), which name the task's directory. */
#define MAX_ID 100

const struct vg_rep_list_info vg_rep_lists[VG_REP_NLISTS] = {
    [VG_REP_SECRETS] = {"secrets", "secrets and home paths touched", "attempt"},
    [VG_REP_NETWORK] = {"network", "network attempts and names refused", "attempt"},
    [VG_REP_EXEC] = {"exec", "programs the policy does not allow", "attempt"},
    [VG_REP_WRITES] = {"writes", "writes outside the workdir", "attempt"},
    [VG_REP_DELETIONS] = {"deletions", "deletions outside the workdir", "attempt"},
    [VG_REP_PROGRAMS] = {"programs", "programs run", "exec"},
    [VG_REP_SOURCES] = {"sources", "source lines behind refusals", "refusal"},
};

const char *const vg_rep_log_names[VG_REP_LOG_NSTATES] = {
    [VG_REP_LOG_READ] = "read", [VG_REP_LOG_NONE] = "none", [VG_REP_LOG_MISSING] = "missing",
    [VG_REP_LOG_CUT] = "cut", [VG_REP_LOG_UNSAFE] = "not looked for",
};

static void warn(struct vg_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct vg_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg;
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort(); /* as vg_xasprintf */
    r->warnings = vg_xrealloc(r->warnings, (r->nwarnings + 1) * sizeof *r->warnings);
    r->warnings[r->nwarnings++] = msg;
}

/* A task id vigil batch accepts: it names OUT/tasks/ID, so nothing else
 * (a '/', "..", a leading '.') may become a path. */
static bool task_dir_name(const char *id)
{
    size_t n = strlen(id);
    if (!n || n > MAX_ID || id[0] == '.')
        return false;
    return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static uint64_t num(const struct vg_jv *v)
{
    uint64_t n = 0;
    if (v && v->type == VG_JNUM && !vg_parse_u64(v->s, &n))
        n = 0;
    return n;
}

/* ---- a group ---- */

static struct vg_rep_group *group_of(struct vg_report *r, const char *name)
{
    for (size_t i = 0; i < r->ngroups; i++)
        if (name ? r->groups[i].name && !strcmp(r->groups[i].name, name) : !r->groups[i].name)
            return &r->groups[i];
    r->groups = vg_xrealloc(r->groups, (r->ngroups + 1) * sizeof *r->groups);
    struct vg_rep_group *g = &r->groups[r->ngroups++];
    memset(g, 0, sizeof *g);
    g->name = name ? vg_xstrdup(name) : NULL;
    return g;
}

static void group_free(struct vg_rep_group *g)
{
    free(g->name);
    vg_tally_free(&g->status);
    vg_tally_free(&g->limits);
    for (int l = 0; l < VG_REP_NLISTS; l++)
        vg_tally_free(&g->list[l].items);
}

/* A path in the candidate's own work dir as "$WORK/...": every task has
 * a work dir of its own (and its ~ is it), so the fleet's hundreds of
 * ".../tasks/ID/work/.ssh/id_rsa" are one thing tried, "$WORK/.ssh/id_rsa". */
static char *fleet_name(const char *what, const char *workdir)
{
    size_t n = workdir ? strlen(workdir) : 0;
    if (n > 1 && !strncmp(what, workdir, n) && (what[n] == '/' || !what[n]))
        return vg_xasprintf("%s%s", WORK_NAME, what + n);
    return vg_xstrdup(what);
}

/* One summary category of the record into the list and the candidate. */
static void add_category(struct vg_rep_list *l, const struct vg_jv *cat, const char *workdir,
                         size_t ci, uint64_t *n)
{
    *n = num(vg_jv_get(cat, "count"));
    l->count += *n;
    l->cands += *n > 0;
    l->untracked += num(vg_jv_get(cat, "untracked"));
    const struct vg_jv *items = vg_jv_get(cat, "items");
    for (size_t i = 0; items && items->type == VG_JARR && i < items->n; i++) {
        const struct vg_jv *it = &items->items[i];
        const char *what = vg_jv_str(it, "what");
        if (!what)
            continue;
        char *name = fleet_name(what, workdir);
        struct vg_tally_ent *e = vg_tally_add(&l->items, name, ci, num(vg_jv_get(it, "count")));
        free(name);
        /* a name refused is "dns NAME" already: its host says it again */
        const char *host = vg_jv_get(it, "rcode") ? NULL : vg_jv_str(it, "host");
        if (host && !e->extra)
            e->extra = vg_xstrdup(host);
        const struct vg_jv *ds = vg_jv_get(it, "decisions");
        for (size_t k = 0; ds && ds->type == VG_JARR && k < ds->n; k++) {
            int d = ds->items[k].type == VG_JSTR ? vg_decision_from_name(ds->items[k].s) : -1;
            if (d >= 0)
                e->decisions |= 1u << d;
        }
    }
}

/* The log's facts into a list: each entry once for this candidate. */
static void add_facts(struct vg_rep_list *l, const struct vg_tally *from, size_t ci,
                      const char *id, uint64_t *n)
{
    *n = 0;
    for (size_t i = 0; i < from->n; i++) {
        const struct vg_tally_ent *src = &from->e[i];
        struct vg_tally_ent *e = vg_tally_add(&l->items, src->key, ci, src->count);
        e->decisions |= src->decisions;
        if (!e->extra && src->extra)
            e->extra = vg_xstrdup(src->extra);
        if (!e->example)
            e->example = vg_xstrdup(id);
        *n += src->count;
    }
    l->count += *n;
    l->cands += *n > 0;
}

/* A candidate whole into g (the fleet or its group); c gets its numbers. */
static void add_cand(struct vg_rep_group *g, struct vg_rep_cand *c, size_t ci,
                     const struct vg_jv *rec, const struct vg_rep_logfacts *f)
{
    g->ncand++;
    vg_tally_add(&g->status, c->status, ci, 1);
    const struct vg_jv *hits = vg_jv_get(rec, "limits_hit");
    for (size_t i = 0; hits && hits->type == VG_JARR && i < hits->n; i++)
        if (hits->items[i].type == VG_JSTR)
            vg_tally_add(&g->limits, hits->items[i].s, ci, 1);
    for (int k = 0; k < VG_CLASS_NCLASSES; k++)
        g->refusals[k] += c->refusals[k];
    g->refused += c->refused;
    g->refused_cands += c->refused > 0;
    const struct vg_jv *sum = vg_jv_get(rec, "summary");
    const char *workdir = vg_jv_str(rec, "workdir");
    for (int k = 0; k < VG_SUM_NCATS; k++)
        add_category(&g->list[k], vg_jv_get(sum, vg_rep_lists[k].key), workdir, ci, &c->n[k]);
    if (f) {
        add_facts(&g->list[VG_REP_PROGRAMS], &f->programs, ci, c->id, &c->n[VG_REP_PROGRAMS]);
        add_facts(&g->list[VG_REP_SOURCES], &f->sources, ci, c->id, &c->n[VG_REP_SOURCES]);
        g->no_source += f->no_source;
    }
}

/* ---- a candidate ---- */

/* Refusals by class: the record's counts, every decision but allow. */
static void refusals_of(struct vg_rep_cand *c, const struct vg_jv *counts)
{
    for (size_t i = 0; counts && counts->type == VG_JOBJ && i < counts->n; i++) {
        int cls = vg_class_from_name(counts->keys[i]);
        const struct vg_jv *by = &counts->items[i];
        for (size_t k = 0; cls >= 0 && by->type == VG_JOBJ && k < by->n; k++) {
            if (vg_decision_from_name(by->keys[k]) == VG_DEC_ALLOW)
                continue;
            uint64_t n = num(&by->items[k]);
            c->refusals[cls] += n;
            c->refused += n;
        }
    }
}

static char *limits_of(const struct vg_jv *hits)
{
    struct vg_buf b = {0};
    vg_buf_puts(&b, "");
    for (size_t i = 0; hits && hits->type == VG_JARR && i < hits->n; i++)
        if (hits->items[i].type == VG_JSTR) {
            if (b.len)
                vg_buf_puts(&b, " ");
            vg_buf_puts(&b, hits->items[i].s);
        }
    return b.data;
}

/* Reads the candidate's log, when it has one; its state. */
static enum vg_rep_log read_log(struct vg_report *r, const struct vg_rep_cand *c,
                                const struct vg_jv *rec, struct vg_rep_logfacts *f)
{
    const struct vg_jv *named = vg_jv_get(rec, "log");
    if (!named || named->type != VG_JSTR)
        return VG_REP_LOG_NONE;
    if (!task_dir_name(c->id)) {
        warn(r, "task '%s': not a task id vigil batch makes: its log was not looked for", c->id);
        return VG_REP_LOG_UNSAFE;
    }
    /* the task's own directory, where the log is now: the batch directory
     * may have moved since the run wrote its path into the record */
    char *path = vg_xasprintf("%s/tasks/%s/%s", r->dir, c->id, LOG_FILE);
    char *work = vg_xasprintf("%s/tasks/%s/%s", r->dir, c->id, WORK_DIR);
    struct vg_err err;
    struct stat st;
    enum vg_rep_log state = VG_REP_LOG_READ;
    if (stat(path, &st) < 0 && errno == ENOENT) {
        warn(r, "task '%s': %s: no log", c->id, path);
        state = VG_REP_LOG_MISSING;
    } else {
        int rc = vg_rep_log_read(path, work, f, &err);
        if (rc != 0) {
            warn(r, "task '%s': %s", c->id, err.msg);
            state = rc < 0 ? VG_REP_LOG_MISSING : VG_REP_LOG_CUT;
        }
    }
    free(path);
    free(work);
    return state;
}

static int add_line(struct vg_report *r, const struct vg_jv *rec, struct vg_err *err)
{
    const char *id = vg_jv_str(rec, "task_id"), *status = vg_jv_str(rec, "status");
    if (!id || !status) {
        vg_errf(err, "not a result record of vigil batch (no %s)", id ? "status" : "task_id");
        return -1;
    }
    if (r->ncands == r->capcands) {
        r->capcands = r->capcands ? 2 * r->capcands : 64;
        r->cands = vg_xrealloc(r->cands, r->capcands * sizeof *r->cands);
    }
    size_t ci = r->ncands++;
    struct vg_rep_cand *c = &r->cands[ci];
    memset(c, 0, sizeof *c);
    c->id = vg_xstrdup(id);
    c->status = vg_xstrdup(status);
    const char *label = r->by ? vg_jv_str(vg_jv_get(rec, "labels"), r->by) : NULL;
    c->group = label ? vg_xstrdup(label) : NULL;
    const struct vg_jv *code = vg_jv_get(rec, "exit_code");
    char *end;
    if (code && code->type == VG_JNUM) {
        errno = 0;
        c->exit_code = strtoll(code->s, &end, 10);
        c->has_exit = !*end && !errno;
    }
    c->limits = limits_of(vg_jv_get(rec, "limits_hit"));
    const struct vg_jv *sum = vg_jv_get(rec, "summary");
    c->summary = sum && sum->type == VG_JOBJ;
    refusals_of(c, vg_jv_get(rec, "counts"));
    struct vg_rep_logfacts f;
    memset(&f, 0, sizeof f);
    c->log = read_log(r, c, rec, &f);
    bool facts = c->log == VG_REP_LOG_READ || c->log == VG_REP_LOG_CUT;
    add_cand(&r->fleet, c, ci, rec, facts ? &f : NULL);
    if (r->by)
        add_cand(group_of(r, c->group), c, ci, rec, facts ? &f : NULL);
    vg_rep_logfacts_free(&f);
    return 0;
}

/* ---- the results file ---- */

/* dir or file: the batch directory and its results file. */
static int locate(struct vg_report *r, const char *arg, struct vg_err *err)
{
    struct stat st;
    if (stat(arg, &st) < 0) {
        vg_errf(err, "%s: %s", arg, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        r->dir = vg_xstrdup(arg);
        r->results = vg_xasprintf("%s/%s", arg, RESULTS_FILE);
        if (stat(r->results, &st) < 0) {
            vg_errf(err, "%s: %s (not a batch directory, or a sharded batch not yet joined: "
                         "vigil batch --merge)", r->results, strerror(errno));
            return -1;
        }
        return 0;
    }
    /* a shard's results file: its directory is the batch directory */
    const char *slash = strrchr(arg, '/');
    r->dir = slash ? vg_xstrndup(arg, (size_t)(slash - arg) + (slash == arg)) : vg_xstrdup(".");
    r->results = vg_xstrdup(arg);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const struct vg_rep_group *x = a, *y = b;
    if (!x->name || !y->name)
        return !x->name - !y->name; /* the candidates without the label last */
    return strcmp(x->name, y->name);
}

static int read_results(struct vg_report *r, struct vg_err *err)
{
    FILE *f = fopen(r->results, "re");
    if (!f) {
        vg_errf(err, "%s: %s", r->results, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned lineno = 0;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (strspn(line, " \t\r\n") == (size_t)n)
            continue;
        struct vg_err e;
        struct vg_jv *rec = (size_t)n > MAX_LINE ? NULL : vg_jv_parse(line, (size_t)n, &e);
        if ((size_t)n > MAX_LINE)
            vg_errf(&e, "longer than %u bytes", MAX_LINE);
        if (!rec || add_line(r, rec, &e) < 0) {
            vg_errf(err, "%s:%u: %s", r->results, lineno, e.msg);
            rc = -1;
        }
        vg_jv_free(rec);
    }
    if (rc == 0 && ferror(f)) {
        vg_errf(err, "%s: %s", r->results, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc;
}

int vg_report_load(const struct vg_report_opts *o, struct vg_report **out, struct vg_err *err)
{
    struct vg_report *r = vg_xcalloc(1, sizeof *r);
    r->fleet.fleet = true;
    r->top = o->top;
    r->by = o->by ? vg_xstrdup(o->by) : NULL;
    *out = NULL;
    if (locate(r, o->dir, err) < 0 || read_results(r, err) < 0) {
        vg_report_free(r);
        return -1;
    }
    if (!r->ncands) {
        vg_errf(err, "%s: no results", r->results);
        vg_report_free(r);
        return -1;
    }
    if (r->by && r->ngroups == 1 && !r->groups[0].name) {
        vg_errf(err, "--by %s: no task of %s has the label '%s'", r->by, r->results, r->by);
        vg_report_free(r);
        return -1;
    }
    if (r->ngroups)
        qsort(r->groups, r->ngroups, sizeof *r->groups, by_name);
    *out = r;
    return r->nwarnings ? 1 : 0;
}

size_t vg_report_nwarnings(const struct vg_report *r) { return r->nwarnings; }

const char *vg_report_warning(const struct vg_report *r, size_t i) { return r->warnings[i]; }

void vg_report_free(struct vg_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ncands; i++) {
        free(r->cands[i].id);
        free(r->cands[i].group);
        free(r->cands[i].status);
        free(r->cands[i].limits);
    }
    free(r->cands);
    group_free(&r->fleet);
    for (size_t i = 0; i < r->ngroups; i++)
        group_free(&r->groups[i]);
    free(r->groups);
    for (size_t i = 0; i < r->nwarnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    free(r->dir);
    free(r->results);
    free(r->by);
    free(r);
}
