/* report_text.c: vigil report for a terminal: the groups, refusals by
 * class, how the runs ended, each list's first items with their share per
 * group, and one line per candidate.  Every string from outside goes
 * through util/escape.h; tables are plain columns (no colour, no box
 * drawing: it is read through less and grep as often as on a screen). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insight/report_int.h"
#include "insight/text_table.h"
#include "util/escape.h"

/* bytes of a group's name in a BY GROUP cell */
#define MAX_GROUP_IN_CELL 12
#define CUT_MARK "..."

static void put_group(struct vg_table *b, const struct vg_report *r, const struct vg_rep_group *g)
{
    struct vg_buf name = {0};
    vg_rep_group_name(r, g, &name);
    vg_table_text(b, name.data);
    vg_buf_free(&name);
}

/* The fleet, then each group (none without --by). */
static const struct vg_rep_group *nth_group(const struct vg_report *r, size_t i)
{
    return i == 0 ? &r->fleet : &r->groups[i - 1];
}

static void groups_table(const struct vg_report *r, struct vg_buf *out)
{
    static const char *const heads[] = {
        "GROUP", "CANDIDATES", "OK", "NOT OK", "REFUSED", "SECRETS", "NETWORK", "EXEC",
        "WRITES", "DELETIONS", "LIMITS HIT",
    };
    struct vg_table b;
    vg_table_start(&b, "lrrrrrrrrrr", heads);
    for (size_t i = 0; i <= r->ngroups; i++) {
        const struct vg_rep_group *g = nth_group(r, i);
        put_group(&b, r, g);
        vg_table_num(&b, g->ncand);
        vg_table_num(&b, vg_rep_ok(g));
        vg_table_num(&b, g->ncand - vg_rep_ok(g));
        vg_table_num(&b, g->refused_cands);
        for (int l = 0; l < VG_SUM_NCATS; l++)
            vg_table_num(&b, g->list[l].cands);
        uint64_t limited = 0;
        for (size_t k = 0; k < g->limits.n; k++)
            limited = g->limits.e[k].cands > limited ? g->limits.e[k].cands : limited;
        vg_table_num(&b, limited);
    }
    vg_table_finish(&b, out);
    vg_buf_puts(out, "  (candidates: REFUSED had a call refused, SECRETS ... DELETIONS tried one;"
                     " LIMITS HIT: the most of any one limit)\n");
}

static void refusals_table(const struct vg_report *r, struct vg_buf *out)
{
    const char *heads[VG_CLASS_NCLASSES + 2];
    char upper[VG_CLASS_NCLASSES][16], align[VG_CLASS_NCLASSES + 3];
    heads[0] = "GROUP";
    for (int c = 0; c < VG_CLASS_NCLASSES; c++) {
        snprintf(upper[c], sizeof upper[c], "%s", vg_class_name(c));
        for (char *p = upper[c]; *p; p++)
            *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        heads[c + 1] = upper[c];
    }
    heads[VG_CLASS_NCLASSES + 1] = "TOTAL";
    memset(align, 'r', sizeof align - 1);
    align[0] = 'l';
    align[sizeof align - 1] = 0;
    struct vg_table b;
    vg_table_start(&b, align, heads);
    for (size_t i = 0; i <= r->ngroups; i++) {
        const struct vg_rep_group *g = nth_group(r, i);
        put_group(&b, r, g);
        for (int c = 0; c < VG_CLASS_NCLASSES; c++)
            vg_table_num(&b, g->refusals[c]);
        vg_table_num(&b, g->refused);
    }
    vg_buf_puts(out, "\nrefusals by class\n");
    vg_table_finish(&b, out);
}

/* "ok 9, nonzero 2": a tally's entries by candidates. */
static void tally_line(const struct vg_tally *t, struct vg_buf *out)
{
    const struct vg_tally_ent **v = vg_tally_sorted(t);
    for (size_t i = 0; i < t->n; i++) {
        vg_buf_puts(out, i ? ", " : "");
        vg_esc_puts(out, v[i]->key, VG_ESC_TEXT);
        vg_buf_printf(out, " %" PRIu64, v[i]->cands);
    }
    if (!t->n)
        vg_buf_puts(out, "none");
    free(v);
}

static void endings(const struct vg_report *r, struct vg_buf *out)
{
    vg_buf_puts(out, "\nhow the runs ended\n");
    for (size_t i = 0; i <= r->ngroups; i++) {
        const struct vg_rep_group *g = nth_group(r, i);
        struct vg_buf name = {0};
        vg_rep_group_name(r, g, &name);
        vg_buf_puts(out, "  ");
        vg_esc_puts(out, name.data, VG_ESC_TEXT);
        vg_buf_free(&name);
        vg_buf_puts(out, ": ");
        tally_line(&g->status, out);
        vg_buf_puts(out, "; limits hit: ");
        tally_line(&g->limits, out);
        vg_buf_puts(out, "\n");
    }
}

/* "a 2, b 1": the candidates of each group the fleet's item e counts,
 * each name cut short enough for a few groups to fit the cell. */
static void by_group(const struct vg_report *r, int l, const struct vg_tally_ent *e,
                     struct vg_buf *out)
{
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct vg_tally_ent *ge = vg_tally_find(&r->groups[i].list[l].items, e->key);
        if (!ge)
            continue;
        if (out->len)
            vg_buf_puts(out, ", ");
        struct vg_buf name = {0};
        vg_rep_group_name(r, &r->groups[i], &name);
        vg_buf_put(out, name.data, name.len > MAX_GROUP_IN_CELL ? MAX_GROUP_IN_CELL : name.len);
        if (name.len > MAX_GROUP_IN_CELL)
            vg_buf_puts(out, CUT_MARK);
        vg_buf_free(&name);
        vg_buf_printf(out, " %" PRIu64, ge->cands);
    }
}

static void list_head(const struct vg_report *r, int l, struct vg_buf *out)
{
    const struct vg_rep_list *li = &r->fleet.list[l];
    vg_buf_printf(out, "\n%s: ", vg_rep_lists[l].title);
    if (!li->count) {
        vg_buf_puts(out, "none\n");
        return;
    }
    vg_buf_printf(out, "%" PRIu64 " candidate%s, %" PRIu64 " %s%s", li->cands,
                  li->cands == 1 ? "" : "s", li->count, vg_rep_lists[l].unit,
                  li->count == 1 ? "" : "s");
    if (li->untracked)
        vg_buf_printf(out, " (%" PRIu64 " past the items the summaries list)", li->untracked);
    if (l == VG_REP_SOURCES && r->fleet.no_source)
        vg_buf_printf(out, "; %" PRIu64 " refusals without a line of the candidates'",
                      r->fleet.no_source);
    vg_buf_puts(out, "\n");
}

static void more_line(size_t shown, size_t n, struct vg_buf *out)
{
    if (n > shown)
        vg_buf_printf(out, "  ... and %zu more (vigil report --json lists them all)\n",
                      n - shown);
}

static void list_table(const struct vg_report *r, int l, struct vg_buf *out)
{
    list_head(r, l, out);
    const struct vg_tally *t = &r->fleet.list[l].items;
    if (!t->n)
        return;
    bool groups = r->by != NULL, src = l == VG_REP_SOURCES;
    /* programs run have no decisions; the groups' share is left out
     * without groups */
    bool decided = l != VG_REP_PROGRAMS, fourth = src || groups;
    const char *heads[5];
    char align[VG_ARRAY_LEN(heads) + 1] = "rr"; /* the two counts, then words */
    size_t nh = 0;
    heads[nh++] = "CANDIDATES";
    heads[nh++] = src ? "REFUSALS" : decided ? "ATTEMPTS" : "EXECS";
    if (decided)
        heads[nh++] = "DECISIONS";
    if (fourth)
        heads[nh++] = src ? "FIRST IN" : "BY GROUP";
    heads[nh++] = src ? "LINE" : "WHAT";
    memset(align + 2, 'l', nh - 2);
    align[nh] = 0;
    struct vg_table b;
    vg_table_start(&b, align, heads);
    const struct vg_tally_ent **v = vg_tally_sorted(t);
    size_t shown = t->n < r->top ? t->n : r->top;
    for (size_t i = 0; i < shown; i++) {
        const struct vg_tally_ent *e = v[i];
        vg_table_num(&b, e->cands);
        vg_table_num(&b, e->count);
        if (decided) {
            struct vg_buf s = {0};
            vg_rep_decisions(e->decisions, &s);
            vg_buf_put(&s, "", 1);
            vg_table_own(&b, s.data[0] ? s.data : "-");
            vg_buf_free(&s);
        }
        struct vg_buf w = {0};
        if (src) {
            vg_buf_printf(&w, "%s %s", e->example ? e->example : "?", e->extra ? e->extra : "?");
        } else if (groups) {
            by_group(r, l, e, &w);
        }
        if (fourth) {
            vg_buf_put(&w, "", 1);
            vg_table_text(&b, w.data);
        }
        vg_buf_free(&w);
        struct vg_buf what = {0};
        if (src && !vg_rep_src_text(e))
            vg_buf_puts(&what, "(the line was not read)");
        else
            vg_buf_puts(&what, src ? vg_rep_src_text(e) : e->key);
        if (e->extra && !src) {
            vg_buf_puts(&what, " (");
            vg_buf_puts(&what, e->extra);
            vg_buf_puts(&what, ")");
        }
        vg_buf_put(&what, "", 1);
        vg_table_text(&b, what.data);
        vg_buf_free(&what);
    }
    free(v);
    vg_table_finish(&b, out);
    more_line(shown, t->n, out);
}

static void candidates_table(const struct vg_report *r, struct vg_buf *out)
{
    static const char *const with_group[] = {
        "ID", "GROUP", "STATUS", "EXIT", "REFUSALS", "SECRETS", "NETWORK", "EXEC", "WRITES",
        "DELETIONS", "PROGRAMS", "LOG", "LIMITS HIT"};
    struct vg_table b;
    /* no group column without --by */
    if (r->by)
        vg_table_start(&b, "lllrrrrrrrrll", with_group);
    else
        vg_table_start(&b, "llrrrrrrrrll", (const char *const[]){
            "ID", "STATUS", "EXIT", "REFUSALS", "SECRETS", "NETWORK", "EXEC", "WRITES",
            "DELETIONS", "PROGRAMS", "LOG", "LIMITS HIT"});
    vg_buf_puts(out, "\ncandidates (counts: refusals; attempts, as their summaries; execs)\n");
    for (size_t i = 0; i < r->ncands; i++) {
        const struct vg_rep_cand *c = &r->cands[i];
        vg_table_text(&b, c->id);
        if (r->by) {
            struct vg_buf g = {0};
            vg_rep_label_name(r, c->group, &g);
            vg_buf_put(&g, "", 1);
            vg_table_text(&b, g.data);
            vg_buf_free(&g);
        }
        vg_table_text(&b, c->status);
        char code[sizeof "-9223372036854775808"] = "-";
        if (c->has_exit)
            snprintf(code, sizeof code, "%" PRId64, c->exit_code);
        vg_table_own(&b, code);
        vg_table_num(&b, c->refused);
        for (int l = 0; l < VG_SUM_NCATS; l++)
            vg_table_num(&b, c->n[l]);
        vg_table_num(&b, c->n[VG_REP_PROGRAMS]);
        vg_table_own(&b, vg_rep_log_names[c->log]);
        vg_table_text(&b, c->limits[0] ? c->limits : "-");
    }
    vg_table_finish(&b, out);
}

void vg_report_text(const struct vg_report *r, struct vg_buf *out)
{
    vg_buf_puts(out, "vigil report: ");
    vg_esc_puts(out, r->results, VG_ESC_TEXT);
    vg_buf_printf(out, ": %zu candidate%s", r->ncands, r->ncands == 1 ? "" : "s");
    if (r->by) {
        vg_buf_puts(out, ", by ");
        vg_esc_puts(out, r->by, VG_ESC_TEXT);
        vg_buf_printf(out, ": %zu group%s", r->ngroups, r->ngroups == 1 ? "" : "s");
    }
    vg_buf_puts(out, "\n\n");
    groups_table(r, out);
    refusals_table(r, out);
    endings(r, out);
    for (int l = 0; l < VG_REP_NLISTS; l++)
        list_table(r, l, out);
    candidates_table(r, out);
}
