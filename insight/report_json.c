/* report_json.c: vigil report --json, one object: the fleet, each group
 * and each candidate, every list whole (the text and the page show the
 * first --top items).  docs/REPORT.md describes every key. */
#include <stdlib.h>
#include <string.h>

#include "insight/report_int.h"
#include "util/json.h"

#define REPORT_FORMAT 1

static void decisions(struct vg_json *j, unsigned mask)
{
    vg_json_arr_begin(j);
    for (int d = 0; d < VG_DEC_NDECISIONS; d++)
        if (mask & (1u << d))
            vg_json_str(j, vg_decision_name(d));
    vg_json_arr_end(j);
}

static void item(struct vg_json *j, int l, const struct vg_tally_ent *e)
{
    vg_json_obj_begin(j);
    if (l == VG_REP_SOURCES) {
        vg_json_key(j, "text");
        vg_json_str(j, vg_rep_src_text(e));
        vg_json_key(j, "location");
        vg_json_str(j, e->extra);
        vg_json_key(j, "first_in");
        vg_json_str(j, e->example);
    } else {
        vg_json_key(j, "what");
        vg_json_str(j, e->key);
        if (e->extra) {
            vg_json_key(j, "host");
            vg_json_str(j, e->extra);
        }
    }
    vg_json_key(j, "count");
    vg_json_uint(j, e->count);
    vg_json_key(j, "candidates");
    vg_json_uint(j, e->cands);
    if (l != VG_REP_PROGRAMS) {
        vg_json_key(j, "decisions");
        decisions(j, e->decisions);
    }
    vg_json_obj_end(j);
}

static void list(struct vg_json *j, int l, const struct vg_rep_list *li)
{
    vg_json_key(j, vg_rep_lists[l].key);
    vg_json_obj_begin(j);
    vg_json_key(j, "count");
    vg_json_uint(j, li->count);
    vg_json_key(j, "candidates");
    vg_json_uint(j, li->cands);
    if (l < VG_SUM_NCATS) {
        vg_json_key(j, "untracked");
        vg_json_uint(j, li->untracked);
    }
    vg_json_key(j, "items");
    vg_json_arr_begin(j);
    const struct vg_tally_ent **v = vg_tally_sorted(&li->items);
    for (size_t i = 0; i < li->items.n; i++)
        item(j, l, v[i]);
    free(v);
    vg_json_arr_end(j);
    vg_json_obj_end(j);
}

/* {"ok": 3, ...}: candidates per entry, most first. */
static void tally_obj(struct vg_json *j, const char *key, const struct vg_tally *t)
{
    vg_json_key(j, key);
    vg_json_obj_begin(j);
    const struct vg_tally_ent **v = vg_tally_sorted(t);
    for (size_t i = 0; i < t->n; i++) {
        vg_json_key(j, v[i]->key);
        vg_json_uint(j, v[i]->cands);
    }
    free(v);
    vg_json_obj_end(j);
}

static void refusals(struct vg_json *j, const uint64_t *by_class, uint64_t total)
{
    vg_json_key(j, "refusals");
    vg_json_obj_begin(j);
    vg_json_key(j, "total");
    vg_json_uint(j, total);
    for (int c = 0; c < VG_CLASS_NCLASSES; c++) {
        vg_json_key(j, vg_class_name(c));
        vg_json_uint(j, by_class[c]);
    }
    vg_json_obj_end(j);
}

static void group(struct vg_json *j, const struct vg_rep_group *g)
{
    vg_json_obj_begin(j);
    if (!g->fleet) {
        vg_json_key(j, "name");
        vg_json_str(j, g->name);
    }
    vg_json_key(j, "candidates");
    vg_json_uint(j, g->ncand);
    tally_obj(j, "status", &g->status);
    tally_obj(j, "limits_hit", &g->limits);
    refusals(j, g->refusals, g->refused);
    vg_json_key(j, "refused_candidates");
    vg_json_uint(j, g->refused_cands);
    vg_json_key(j, "refusals_without_source");
    vg_json_uint(j, g->no_source);
    for (int l = 0; l < VG_REP_NLISTS; l++)
        list(j, l, &g->list[l]);
    vg_json_obj_end(j);
}

static void candidate(struct vg_json *j, const struct vg_report *r, const struct vg_rep_cand *c)
{
    vg_json_obj_begin(j);
    vg_json_key(j, "task_id");
    vg_json_str(j, c->id);
    if (r->by) {
        vg_json_key(j, "group");
        vg_json_str(j, c->group);
    }
    vg_json_key(j, "status");
    vg_json_str(j, c->status);
    vg_json_key(j, "exit_code");
    if (c->has_exit)
        vg_json_int(j, c->exit_code);
    else
        vg_json_null(j);
    vg_json_key(j, "limits_hit");
    vg_json_arr_begin(j);
    for (const char *p = c->limits; *p;) {
        size_t n = strcspn(p, " ");
        vg_json_strn(j, p, n);
        p += n + (p[n] == ' ');
    }
    vg_json_arr_end(j);
    refusals(j, c->refusals, c->refused);
    for (int l = 0; l < VG_REP_NLISTS; l++) {
        vg_json_key(j, vg_rep_lists[l].key);
        vg_json_uint(j, c->n[l]);
    }
    vg_json_key(j, "summary");
    vg_json_bool(j, c->summary);
    vg_json_key(j, "log");
    vg_json_str(j, vg_rep_log_names[c->log]);
    vg_json_obj_end(j);
}

void vg_report_json(const struct vg_report *r, struct vg_buf *out)
{
    struct vg_json j;
    vg_json_init(&j, out, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "format");
    vg_json_uint(&j, REPORT_FORMAT);
    vg_json_key(&j, "results");
    vg_json_str(&j, r->results);
    vg_json_key(&j, "by");
    vg_json_str(&j, r->by);
    vg_json_key(&j, "candidates");
    vg_json_uint(&j, r->ncands);
    vg_json_key(&j, "fleet");
    group(&j, &r->fleet);
    vg_json_key(&j, "groups");
    vg_json_arr_begin(&j);
    for (size_t i = 0; i < r->ngroups; i++)
        group(&j, &r->groups[i]);
    vg_json_arr_end(&j);
    vg_json_key(&j, "per_candidate");
    vg_json_arr_begin(&j);
    for (size_t i = 0; i < r->ncands; i++)
        candidate(&j, r, &r->cands[i]);
    vg_json_arr_end(&j);
    vg_json_key(&j, "warnings");
    vg_json_arr_begin(&j);
    for (size_t i = 0; i < r->nwarnings; i++)
        vg_json_str(&j, r->warnings[i]);
    vg_json_arr_end(&j);
    vg_json_obj_end(&j);
    vg_buf_puts(out, "\n");
}
