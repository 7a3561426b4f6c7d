/* recheck_fmt.c: a recheck as people and scripts read it (recheck.h):
 * each run's changes, its verdict and what cannot be known, as text or as
 * one JSON object; a batch's table and summary.  Every name from a log is
 * escaped as `vigil log` escapes it (util/escape.c). */
#include <stdio.h>
#include <string.h>

#include "event/reader.h"
#include "insight/recheck.h"
#include "util/json.h"

#define NS_PER_S 1000000000ull
#define NS_PER_US 1000ull
#define NS_PER_MS 1000000ull
#define TASK_WIDTH 24   /* the table's first column; longer ids push the row */

static const char *const kind_name[] = {
    [VG_RK_CALL] = "call", [VG_RK_EXEC_CHECK] = "exec-check", [VG_RK_NAME] = "dns",
};

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s && s[1] ? s + 1 : p;
}

static void put_rule(struct vg_buf *b, const struct vg_recheck_rule *r)
{
    vg_buf_puts(b, "(");
    if (r->file) {
        vg_text_escaped(b, base_name(r->file));
        vg_buf_printf(b, ":%u ", r->line);
    }
    vg_text_escaped(b, r->text);
    vg_buf_puts(b, ")");
}

static void put_change(struct vg_buf *b, const struct vg_recheck_change *c)
{
    vg_buf_printf(b, "  +%llu.%06llu", (unsigned long long)(c->ts_ns / NS_PER_S),
                  (unsigned long long)(c->ts_ns % NS_PER_S / NS_PER_US));
    if (c->pid)
        vg_buf_printf(b, " [%d]", c->pid);
    vg_buf_printf(b, " %s ", c->kind == VG_RK_NAME ? "dns" : vg_class_name(c->cls));
    vg_text_escaped(b, c->name);
    vg_buf_puts(b, " ");
    vg_text_escaped(b, c->target);
    vg_buf_printf(b, ": %s ", vg_decision_name(c->old_dec));
    put_rule(b, &c->old_rule);
    vg_buf_printf(b, " -> %s ", vg_decision_name(c->new_dec));
    put_rule(b, &c->new_rule);
    const char *err = c->new_errno > 0 ? strerrorname_np(c->new_errno) : NULL;
    if (err)
        vg_buf_printf(b, " %s", err);
    if (c->probe)
        vg_buf_puts(b, " [probe]");
    if (c->source) {
        vg_buf_puts(b, " from ");
        vg_text_escaped(b, c->source);
    }
    vg_buf_puts(b, "\n");
}

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

void vg_recheck_verdict(const struct vg_recheck_run *run, struct vg_buf *out)
{
    uint64_t calls = run->refused - run->refused_probes;
    if (run->killed) {
        vg_buf_puts(out, "would be killed at ");
        vg_text_escaped(out, run->kill_what);
    } else if (calls || run->names_refused) {
        vg_buf_puts(out, "would be refused ");
        if (calls)
            vg_buf_printf(out, "%llu call%s", (unsigned long long)calls, plural(calls));
        if (calls && run->names_refused)
            vg_buf_puts(out, " and ");
        if (run->names_refused)
            vg_buf_printf(out, "%llu name%s", (unsigned long long)run->names_refused,
                          plural(run->names_refused));
    } else {
        vg_buf_puts(out, "would pass");
    }
    if (run->refused_probes)
        vg_buf_printf(out, " (%llu probe%s refused too: ENOENT either way)",
                      (unsigned long long)run->refused_probes, plural(run->refused_probes));
    if (run->cap_seq)
        vg_buf_printf(out, "; the refusals cap (%llu) would end it at +%llu.%03llu",
                      (unsigned long long)run->cap, (unsigned long long)(run->cap_ts_ns / NS_PER_S),
                      (unsigned long long)(run->cap_ts_ns % NS_PER_S / NS_PER_MS));
}

void vg_recheck_text(const struct vg_recheck_run *run, size_t max, struct vg_buf *out)
{
    vg_text_escaped(out, run->log);
    if (run->task_id) {
        vg_buf_puts(out, " (task ");
        vg_text_escaped(out, run->task_id);
        vg_buf_puts(out, ")");
    }
    vg_buf_printf(out, ": %s run under ", run->dry_run ? "a dry" : "an enforcing");
    vg_text_escaped(out, base_name(run->old_policy));
    vg_buf_printf(out, "; %llu decision%s made again, %zu differ%s\n",
                  (unsigned long long)run->decided, plural(run->decided), run->nchanges,
                  run->nchanges == 1 ? "s" : "");
    size_t shown = max && max < run->nchanges ? max : run->nchanges;
    for (size_t i = 0; i < shown; i++)
        put_change(out, &run->changes[i]);
    if (shown < run->nchanges)
        vg_buf_printf(out, "  (%zu more: --all shows every change)\n", run->nchanges - shown);
    vg_buf_puts(out, "  verdict: ");
    vg_recheck_verdict(run, out);
    vg_buf_puts(out, "\n");
    for (size_t i = 0; i < run->nunknown; i++) {
        vg_buf_puts(out, "  cannot know: ");
        vg_text_escaped(out, run->unknown[i]);
        vg_buf_puts(out, "\n");
    }
}

/* ---- JSON ---- */

static void json_rule(struct vg_json *j, const struct vg_recheck_rule *r)
{
    vg_json_obj_begin(j);
    vg_json_key(j, "file"); vg_json_str(j, r->file);
    vg_json_key(j, "line"); vg_json_uint(j, r->line);
    vg_json_key(j, "text"); vg_json_str(j, r->text);
    vg_json_obj_end(j);
}

static void json_change(struct vg_json *j, const struct vg_recheck_change *c)
{
    vg_json_obj_begin(j);
    vg_json_key(j, "seq"); vg_json_uint(j, c->seq);
    vg_json_key(j, "ts"); vg_json_uint(j, c->ts_ns);
    vg_json_key(j, "pid"); vg_json_int(j, c->pid);
    vg_json_key(j, "kind"); vg_json_str(j, kind_name[c->kind]);
    vg_json_key(j, "class"); vg_json_str(j, vg_class_name(c->cls));
    vg_json_key(j, "name"); vg_json_str(j, c->name);
    vg_json_key(j, "target"); vg_json_str(j, c->target);
    vg_json_key(j, "probe"); vg_json_bool(j, c->probe);
    vg_json_key(j, "old");
    vg_json_obj_begin(j);
    vg_json_key(j, "decision"); vg_json_str(j, vg_decision_name(c->old_dec));
    vg_json_key(j, "rule"); json_rule(j, &c->old_rule);
    vg_json_obj_end(j);
    vg_json_key(j, "new");
    vg_json_obj_begin(j);
    vg_json_key(j, "decision"); vg_json_str(j, vg_decision_name(c->new_dec));
    vg_json_key(j, "rule"); json_rule(j, &c->new_rule);
    vg_json_key(j, "errno");
    if (c->new_errno)
        vg_json_int(j, c->new_errno);
    else
        vg_json_null(j);
    vg_json_obj_end(j);
    vg_json_key(j, "source"); vg_json_str(j, c->source);
    vg_json_obj_end(j);
}

static void json_at(struct vg_json *j, const char *key, bool set, uint64_t seq)
{
    vg_json_key(j, key);
    if (set)
        vg_json_uint(j, seq);
    else
        vg_json_null(j);
}

void vg_recheck_json(const struct vg_recheck_run *run, struct vg_buf *out)
{
    struct vg_json j;
    vg_json_init(&j, out, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "type"); vg_json_str(&j, "run");
    vg_json_key(&j, "log"); vg_json_str(&j, run->log);
    vg_json_key(&j, "task_id"); vg_json_str(&j, run->task_id);
    vg_json_key(&j, "mode"); vg_json_str(&j, run->dry_run ? "dry-run" : "enforce");
    vg_json_key(&j, "recorded_policy"); vg_json_str(&j, run->old_policy);
    vg_json_key(&j, "status"); vg_json_str(&j, run->status);
    vg_json_key(&j, "complete"); vg_json_bool(&j, !run->truncated);
    vg_json_key(&j, "decided"); vg_json_uint(&j, run->decided);
    vg_json_key(&j, "changed"); vg_json_uint(&j, run->nchanges);
    vg_json_key(&j, "to_refused"); vg_json_uint(&j, run->to_refused);
    vg_json_key(&j, "to_allowed"); vg_json_uint(&j, run->to_allowed);
    vg_json_key(&j, "refused"); vg_json_uint(&j, run->refused);
    vg_json_key(&j, "refused_probes"); vg_json_uint(&j, run->refused_probes);
    vg_json_key(&j, "names_refused"); vg_json_uint(&j, run->names_refused);
    json_at(&j, "killed_seq", run->killed, run->kill_seq);
    vg_json_key(&j, "refusals_cap"); vg_json_uint(&j, run->cap);
    json_at(&j, "cap_seq", run->cap_seq != 0, run->cap_seq);
    json_at(&j, "diverges_seq", run->diverges_seq != 0, run->diverges_seq);
    json_at(&j, "first_refused_seq", run->first_refused_seq != 0, run->first_refused_seq);
    vg_json_key(&j, "passes"); vg_json_bool(&j, vg_recheck_passes(run));
    struct vg_buf verdict = {0};
    vg_recheck_verdict(run, &verdict);
    vg_json_key(&j, "verdict"); vg_json_str(&j, verdict.data);
    vg_buf_free(&verdict);
    vg_json_key(&j, "unknown");
    vg_json_arr_begin(&j);
    for (size_t i = 0; i < run->nunknown; i++)
        vg_json_str(&j, run->unknown[i]);
    vg_json_arr_end(&j);
    vg_json_key(&j, "changes");
    vg_json_arr_begin(&j);
    for (size_t i = 0; i < run->nchanges; i++)
        json_change(&j, &run->changes[i]);
    vg_json_arr_end(&j);
    vg_json_obj_end(&j);
}

/* ---- the batch ---- */

struct tally {
    size_t runs, changed, pass, refused, killed;
    uint64_t changes;
};

static void tally(const struct vg_recheck_run *const *runs, size_t n, struct tally *t)
{
    *t = (struct tally){0};
    for (size_t i = 0; i < n; i++) {
        const struct vg_recheck_run *r = runs[i];
        if (!r)
            continue;
        t->runs++;
        t->changed += vg_recheck_changed(r);
        t->changes += r->nchanges;
        if (r->killed)
            t->killed++;
        else if (vg_recheck_passes(r))
            t->pass++;
        else
            t->refused++;
    }
}

void vg_recheck_table(const struct vg_recheck_run *const *runs, const char *const *ids,
                      const char *const *absent, size_t n, struct vg_buf *out)
{
    vg_buf_printf(out, "%-*s %-8s %8s %8s %9s %9s  %s\n", TASK_WIDTH, "TASK", "MODE", "DECIDED",
                  "CHANGED", "->REFUSED", "->ALLOWED", "VERDICT");
    for (size_t i = 0; i < n; i++) {
        const struct vg_recheck_run *r = runs[i];
        struct vg_buf id = {0};
        vg_text_escaped(&id, ids[i]);
        vg_buf_printf(out, "%-*s ", TASK_WIDTH, id.data);
        vg_buf_free(&id);
        if (!r) {
            vg_buf_printf(out, "%-8s %8s %8s %9s %9s  %s\n", "-", "-", "-", "-", "-", absent[i]);
            continue;
        }
        vg_buf_printf(out, "%-8s %8llu %8zu %9llu %9llu  ", r->dry_run ? "dry-run" : "enforce",
                      (unsigned long long)r->decided, r->nchanges,
                      (unsigned long long)r->to_refused, (unsigned long long)r->to_allowed);
        vg_recheck_verdict(r, out);
        vg_buf_puts(out, r->nunknown ? " (see cannot know)\n" : "\n");
    }
    struct tally t;
    tally(runs, n, &t);
    vg_buf_printf(out, "%zu run%s: %zu would pass, %zu would be refused, %zu would be killed; "
                  "%zu with changes (%llu decision%s)", t.runs, plural(t.runs), t.pass, t.refused,
                  t.killed, t.changed, (unsigned long long)t.changes, plural(t.changes));
    if (n > t.runs)
        vg_buf_printf(out, "; %zu not rechecked", n - t.runs);
    vg_buf_puts(out, "\n");
}

void vg_recheck_summary_json(const struct vg_recheck_run *const *runs, size_t n, size_t missing,
                             size_t failed, struct vg_buf *out)
{
    struct tally t;
    tally(runs, n, &t);
    struct vg_json j;
    vg_json_init(&j, out, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "type"); vg_json_str(&j, "summary");
    vg_json_key(&j, "runs"); vg_json_uint(&j, t.runs);
    vg_json_key(&j, "changed_runs"); vg_json_uint(&j, t.changed);
    vg_json_key(&j, "changes"); vg_json_uint(&j, t.changes);
    vg_json_key(&j, "pass"); vg_json_uint(&j, t.pass);
    vg_json_key(&j, "refused"); vg_json_uint(&j, t.refused);
    vg_json_key(&j, "killed"); vg_json_uint(&j, t.killed);
    vg_json_key(&j, "missing"); vg_json_uint(&j, missing);
    vg_json_key(&j, "failed"); vg_json_uint(&j, failed);
    vg_json_obj_end(&j);
}
