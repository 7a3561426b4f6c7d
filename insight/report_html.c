/* report_html.c: vigil report -o FILE.html, one self-contained page: the
 * style inline, the charts inline SVG (insight/svg.c), no script at all,
 * and a Content-Security-Policy that forbids every fetch and every script
 * should anything from outside ever get past the escaping (util/html.h:
 * every string from a results file or a log goes through it, in text and
 * in attribute values alike).  Opened from a file, it loads nothing. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "insight/report_int.h"
#include "insight/svg.h"
#include "util/html.h"

/* One colour per class, per status, per group: no two palettes share a
 * colour (a test finds each chart's colours in a screenshot), and none
 * is a grey or black that text and rules are drawn in. */
static const char *const class_colors[VG_CLASS_NCLASSES] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
};
static const struct {
    const char *status, *color;
} status_colors[] = {
    {"ok", "#4caf50"}, {"nonzero", "#ff9800"}, {"signal", "#795548"}, {"timeout", "#9c27b0"},
    {"limit", "#3f51b5"}, {"killed", "#d81b60"}, {"error", "#00bcd4"},
};
#define OTHER_STATUS_COLOR "#cddc39"
static const char *const group_colors[] = {
    "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#1f78b4",
};

static const char style[] =
    "body{font-family:sans-serif;color:#222;background:#fff;margin:16px 24px;max-width:1400px}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 8px}"
    "h3{font-size:14px;margin:16px 0 6px}"
    ".meta,.note{color:#555;font-size:13px}"
    "svg.chart{display:block;font-size:12px}svg text{fill:#222}svg text.small{font-size:11px}"
    ".legend{font-size:12px;margin:4px 0 0}.key{margin-right:14px;white-space:nowrap}"
    ".key svg{vertical-align:-1px}"
    "table{border-collapse:collapse;font-size:12px;margin:4px 0}"
    "th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}"
    "th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "td code{white-space:pre-wrap;word-break:break-all}";

static const char *status_color(const char *status)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(status_colors); i++)
        if (!strcmp(status_colors[i].status, status))
            return status_colors[i].color;
    return OTHER_STATUS_COLOR;
}

static const char *group_color(size_t i)
{
    return group_colors[i % VG_ARRAY_LEN(group_colors)];
}

/* The groups the charts show: each group with --by, else the fleet. */
struct shown {
    const struct vg_rep_group **g;
    char **names;
    size_t n;
};

static void shown_groups(const struct vg_report *r, struct shown *s)
{
    s->n = r->ngroups ? r->ngroups : 1;
    s->g = vg_xcalloc(s->n, sizeof *s->g);
    s->names = vg_xcalloc(s->n, sizeof *s->names);
    for (size_t i = 0; i < s->n; i++) {
        s->g[i] = r->ngroups ? &r->groups[i] : &r->fleet;
        struct vg_buf b = {0};
        vg_rep_group_name(r, s->g[i], &b);
        s->names[i] = b.data;
    }
}

static void shown_free(struct shown *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->g);
}

static void num_cell(struct vg_buf *out, uint64_t n)
{
    vg_buf_printf(out, "<td class=\"n\">%" PRIu64 "</td>", n);
}

static void text_cell(struct vg_buf *out, const char *s)
{
    vg_buf_puts(out, "<td>");
    vg_html_puts(out, s);
    vg_buf_puts(out, "</td>");
}

/* ---- the charts ---- */

static void refusals_chart(struct vg_buf *out, const struct shown *s)
{
    struct vg_svg_series series[VG_CLASS_NCLASSES];
    uint64_t *v = vg_xcalloc(s->n * VG_CLASS_NCLASSES, sizeof *v);
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        series[c] = (struct vg_svg_series){vg_class_name(c), class_colors[c]};
    for (size_t i = 0; i < s->n; i++)
        memcpy(&v[i * VG_CLASS_NCLASSES], s->g[i]->refusals, sizeof s->g[i]->refusals);
    vg_buf_puts(out, "<section id=\"refusals\"><h2>Refusals by class</h2>\n");
    struct vg_svg_chart c = {
        .id = "chart-refusals", .title = "refusals by class, per group",
        .rows = (const char *const *)s->names, .nrows = s->n, .series = series,
        .nseries = VG_CLASS_NCLASSES, .values = v, .stacked = true,
    };
    vg_svg_bars(out, &c);
    vg_buf_puts(out, "</section>\n");
    free(v);
}

/* What share of each group tried each thing. */
static void tried_chart(struct vg_buf *out, const struct shown *s)
{
    static const char *const rows[] = {
        "had a call refused", "secrets and home paths", "network or names",
        "programs refused", "writes outside the workdir", "deletions outside the workdir",
    };
    size_t nr = VG_ARRAY_LEN(rows);
    struct vg_svg_series *series = vg_xcalloc(s->n, sizeof *series);
    uint64_t *v = vg_xcalloc(nr * s->n, sizeof *v), *of = vg_xcalloc(s->n, sizeof *of);
    for (size_t i = 0; i < s->n; i++) {
        series[i] = (struct vg_svg_series){s->names[i], group_color(i)};
        of[i] = s->g[i]->ncand;
        v[i] = s->g[i]->refused_cands;
        for (int l = 0; l < VG_SUM_NCATS; l++)
            v[(size_t)(l + 1) * s->n + i] = s->g[i]->list[l].cands;
    }
    vg_buf_puts(out, "<section id=\"tried\"><h2>Candidates that tried</h2>\n");
    struct vg_svg_chart c = {
        .id = "chart-tried", .title = "candidates that tried each, out of the group's",
        .rows = rows, .nrows = nr, .series = series, .nseries = s->n, .values = v, .of = of,
    };
    vg_svg_bars(out, &c);
    vg_buf_puts(out, "</section>\n");
    free(series);
    free(v);
    free(of);
}

static void endings_chart(struct vg_buf *out, const struct vg_report *r, const struct shown *s)
{
    const struct vg_tally *st = &r->fleet.status;
    const struct vg_tally_ent **order = vg_tally_sorted(st);
    struct vg_svg_series *series = vg_xcalloc(st->n, sizeof *series);
    uint64_t *v = vg_xcalloc(s->n * st->n, sizeof *v);
    for (size_t k = 0; k < st->n; k++) {
        series[k] = (struct vg_svg_series){order[k]->key, status_color(order[k]->key)};
        for (size_t i = 0; i < s->n; i++) {
            const struct vg_tally_ent *e = vg_tally_find(&s->g[i]->status, order[k]->key);
            v[i * st->n + k] = e ? e->cands : 0;
        }
    }
    vg_buf_puts(out, "<section id=\"endings\"><h2>How the runs ended</h2>\n");
    struct vg_svg_chart c = {
        .id = "chart-endings", .title = "candidates by status, per group",
        .rows = (const char *const *)s->names, .nrows = s->n, .series = series,
        .nseries = st->n, .values = v, .stacked = true,
    };
    vg_svg_bars(out, &c);
    vg_buf_puts(out, "</section>\n");
    free(order);
    free(series);
    free(v);
}

/* A source entry as a person reads it: its line, else where it was. */
static const char *source_label(const struct vg_tally_ent *e)
{
    return vg_rep_src_text(e) ? vg_rep_src_text(e) : e->extra ? e->extra : "?";
}

static void sources_chart(struct vg_buf *out, const struct vg_report *r, const struct shown *s)
{
    const struct vg_tally *t = &r->fleet.list[VG_REP_SOURCES].items;
    size_t nr = t->n < r->top ? t->n : r->top;
    vg_buf_puts(out, "<section id=\"sources\"><h2>Source lines behind refusals</h2>\n");
    if (!nr) {
        vg_buf_puts(out, "<p class=\"note\">No refusal came from a line of the candidates' "
                         "own Python code.</p></section>\n");
        return;
    }
    const struct vg_tally_ent **order = vg_tally_sorted(t);
    const char **rows = vg_xcalloc(nr, sizeof *rows);
    struct vg_svg_series *series = vg_xcalloc(s->n, sizeof *series);
    uint64_t *v = vg_xcalloc(nr * s->n, sizeof *v);
    for (size_t i = 0; i < s->n; i++)
        series[i] = (struct vg_svg_series){s->names[i], group_color(i)};
    for (size_t k = 0; k < nr; k++) {
        rows[k] = source_label(order[k]);
        for (size_t i = 0; i < s->n; i++) {
            const struct vg_tally_ent *e =
                vg_tally_find(&s->g[i]->list[VG_REP_SOURCES].items, order[k]->key);
            v[k * s->n + i] = e ? e->count : 0;
        }
    }
    struct vg_svg_chart c = {
        .id = "chart-sources", .title = "refusals per source line, per group",
        .rows = rows, .nrows = nr, .series = series, .nseries = s->n, .values = v,
        .stacked = true, .wide = true,
    };
    vg_svg_bars(out, &c);
    vg_buf_puts(out, "</section>\n");
    free(order);
    free(rows);
    free(series);
    free(v);
}

/* ---- the tables ---- */

static void groups_table(struct vg_buf *out, const struct vg_report *r)
{
    vg_buf_puts(out, "<section id=\"groups\"><h2>Groups</h2><table><tr><th>group</th>"
                     "<th>candidates</th><th>ok</th><th>not ok</th><th>refusals</th>");
    for (int c = 0; c < VG_CLASS_NCLASSES; c++)
        vg_buf_printf(out, "<th>%s</th>", vg_class_name(c));
    for (int l = 0; l < VG_SUM_NCATS; l++)
        vg_buf_printf(out, "<th>%s</th>", vg_rep_lists[l].key);
    vg_buf_puts(out, "<th>limits hit</th></tr>\n");
    for (size_t i = 0; i <= r->ngroups; i++) {
        const struct vg_rep_group *g = i ? &r->groups[i - 1] : &r->fleet;
        struct vg_buf name = {0};
        vg_rep_group_name(r, g, &name);
        vg_buf_puts(out, "<tr>");
        text_cell(out, name.data);
        vg_buf_free(&name);
        num_cell(out, g->ncand);
        num_cell(out, vg_rep_ok(g));
        num_cell(out, g->ncand - vg_rep_ok(g));
        num_cell(out, g->refused);
        for (int c = 0; c < VG_CLASS_NCLASSES; c++)
            num_cell(out, g->refusals[c]);
        for (int l = 0; l < VG_SUM_NCATS; l++)
            num_cell(out, g->list[l].cands);
        vg_buf_puts(out, "<td>");
        const struct vg_tally_ent **v = vg_tally_sorted(&g->limits);
        for (size_t k = 0; k < g->limits.n; k++) {
            vg_buf_puts(out, k ? ", " : "");
            vg_html_puts(out, v[k]->key);
            vg_buf_printf(out, " %" PRIu64, v[k]->cands);
        }
        free(v);
        vg_buf_puts(out, "</td></tr>\n");
    }
    vg_buf_puts(out, "</table><p class=\"note\">refusals: calls refused; the classes' columns "
                     "likewise; secrets ... deletions: candidates that tried one.</p></section>\n");
}

static void list_table(struct vg_buf *out, const struct vg_report *r, int l)
{
    const struct vg_rep_list *li = &r->fleet.list[l];
    bool src = l == VG_REP_SOURCES;
    vg_buf_printf(out, "<h3 id=\"list-%s\">%s: ", vg_rep_lists[l].key, vg_rep_lists[l].title);
    if (!li->count) {
        vg_buf_puts(out, "none</h3>\n");
        return;
    }
    vg_buf_printf(out, "%" PRIu64 " candidate%s, %" PRIu64 " %s%s</h3>\n<table><tr><th>%s</th>"
                       "%s<th>candidates</th><th>%ss</th>%s", li->cands, li->cands == 1 ? "" : "s",
                  li->count, vg_rep_lists[l].unit, li->count == 1 ? "" : "s",
                  src ? "line" : "what", src ? "<th>first in</th>" : "", vg_rep_lists[l].unit,
                  l == VG_REP_PROGRAMS ? "" : "<th>decisions</th>");
    for (size_t i = 0; i < r->ngroups; i++) {
        struct vg_buf name = {0};
        vg_rep_group_name(r, &r->groups[i], &name);
        vg_buf_puts(out, "<th>");
        vg_html_puts(out, name.data);
        vg_buf_puts(out, "</th>");
        vg_buf_free(&name);
    }
    vg_buf_puts(out, "</tr>\n");
    const struct vg_tally_ent **v = vg_tally_sorted(&li->items);
    size_t shown = li->items.n < r->top ? li->items.n : r->top;
    for (size_t k = 0; k < shown; k++) {
        const struct vg_tally_ent *e = v[k];
        vg_buf_puts(out, "<tr><td><code>");
        vg_html_puts(out, src ? source_label(e) : e->key);
        if (e->extra && !src) {
            vg_buf_puts(out, " (");
            vg_html_puts(out, e->extra);
            vg_buf_puts(out, ")");
        }
        vg_buf_puts(out, "</code></td>");
        if (src) {
            struct vg_buf where = {0};
            vg_buf_printf(&where, "%s %s", e->example ? e->example : "?",
                          e->extra ? e->extra : "?");
            text_cell(out, where.data);
            vg_buf_free(&where);
        }
        num_cell(out, e->cands);
        num_cell(out, e->count);
        if (l != VG_REP_PROGRAMS) {
            struct vg_buf d = {0};
            vg_rep_decisions(e->decisions, &d);
            text_cell(out, d.data ? d.data : "");
            vg_buf_free(&d);
        }
        for (size_t i = 0; i < r->ngroups; i++) {
            const struct vg_tally_ent *ge = vg_tally_find(&r->groups[i].list[l].items, e->key);
            num_cell(out, ge ? ge->cands : 0);
        }
        vg_buf_puts(out, "</tr>\n");
    }
    free(v);
    vg_buf_puts(out, "</table>\n");
    if (li->items.n > shown)
        vg_buf_printf(out, "<p class=\"note\">... and %zu more (vigil report --json lists them "
                           "all)</p>\n", li->items.n - shown);
}

static void candidates_table(struct vg_buf *out, const struct vg_report *r)
{
    vg_buf_puts(out, "<section id=\"candidates\"><h2>Candidates</h2><table><tr><th>task</th>");
    if (r->by)
        vg_buf_puts(out, "<th>group</th>");
    vg_buf_puts(out, "<th>status</th><th>exit</th><th>refusals</th>");
    for (int l = 0; l <= VG_REP_PROGRAMS; l++)
        vg_buf_printf(out, "<th>%s</th>", vg_rep_lists[l].key);
    vg_buf_puts(out, "<th>log</th><th>limits hit</th></tr>\n");
    for (size_t i = 0; i < r->ncands; i++) {
        const struct vg_rep_cand *c = &r->cands[i];
        vg_buf_puts(out, "<tr>");
        text_cell(out, c->id);
        if (r->by) {
            struct vg_buf g = {0};
            vg_rep_label_name(r, c->group, &g);
            text_cell(out, g.data);
            vg_buf_free(&g);
        }
        text_cell(out, c->status);
        if (c->has_exit)
            vg_buf_printf(out, "<td class=\"n\">%" PRId64 "</td>", c->exit_code);
        else
            vg_buf_puts(out, "<td></td>");
        num_cell(out, c->refused);
        for (int l = 0; l <= VG_REP_PROGRAMS; l++)
            num_cell(out, c->n[l]);
        text_cell(out, vg_rep_log_names[c->log]);
        text_cell(out, c->limits);
        vg_buf_puts(out, "</tr>\n");
    }
    vg_buf_puts(out, "</table></section>\n");
}

void vg_report_html(const struct vg_report *r, struct vg_buf *out)
{
    vg_buf_puts(out, "<!DOCTYPE html>\n" VG_REPORT_HTML_MARK " (vigil " VG_VERSION "): one file,"
                     " no script, nothing fetched -->\n<html lang=\"en\"><head><meta "
                     "charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content="
                     "\"default-src 'none'; style-src 'unsafe-inline'\">\n<title>vigil report: ");
    vg_html_puts(out, r->results);
    vg_buf_printf(out, "</title>\n<style>%s</style></head>\n<body>\n<h1>vigil report</h1>\n"
                       "<p class=\"meta\">", style);
    vg_html_puts(out, r->results);
    vg_buf_printf(out, ": %zu candidates", r->ncands);
    if (r->by) {
        vg_buf_puts(out, ", by ");
        vg_html_puts(out, r->by);
        vg_buf_printf(out, ": %zu groups", r->ngroups);
    }
    vg_buf_puts(out, "</p>\n");
    struct shown s;
    shown_groups(r, &s);
    refusals_chart(out, &s);
    tried_chart(out, &s);
    endings_chart(out, r, &s);
    sources_chart(out, r, &s);
    shown_free(&s);
    groups_table(out, r);
    vg_buf_puts(out, "<section id=\"lists\"><h2>What was tried, across the fleet</h2>\n");
    for (int l = 0; l < VG_REP_NLISTS; l++)
        list_table(out, r, l);
    vg_buf_puts(out, "</section>\n");
    candidates_table(out, r);
    if (r->nwarnings) {
        vg_buf_puts(out, "<section id=\"warnings\"><h2>Not read whole</h2><ul>");
        for (size_t i = 0; i < r->nwarnings; i++) {
            vg_buf_puts(out, "<li>");
            vg_html_puts(out, r->warnings[i]);
            vg_buf_puts(out, "</li>");
        }
        vg_buf_puts(out, "</ul></section>\n");
    }
    vg_buf_puts(out, "</body></html>\n");
}
