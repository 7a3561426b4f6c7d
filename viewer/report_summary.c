/* report_summary.c: vw_report_summary, the whole run on one screen: what ran and
 * how it ended, the limits, counts per class and decision, and the lists
 * a reviewer scans first (denied paths, network, programs, notes). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "viewer/report.h"

#define TOP_PATHS 20

/* How a limit's value reads: by its unit in the table of limits
 * (policy/limit_table.c); a name this vigil does not know is a plain number. */
enum unit { U_COUNT, U_MS, U_SECONDS, U_BYTES, U_MILLICPUS };

static enum unit unit_of(const char *name)
{
    static const struct { const char *unit; enum unit u; } units[] = {
        {"ms", U_MS}, {"s", U_SECONDS}, {"bytes", U_BYTES}, {"millicpus", U_MILLICPUS},
    };
    int l = name ? vg_limit_from_name(name) : -1;
    for (size_t i = 0; l >= 0 && i < VG_ARRAY_LEN(units); i++)
        if (!strcmp(vg_limit_unit((enum vg_limit)l), units[i].unit))
            return units[i].u;
    return U_COUNT;
}

static void fmt_limit(const struct vg_limit_rec *l, char *buf, size_t n)
{
    enum unit u = unit_of(l->name);
    static const char *const sfx[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)l->value;
    unsigned k = 0;
    switch (u) {
    case U_MS: snprintf(buf, n, "%.3gs", v / 1000); break;
    case U_SECONDS: snprintf(buf, n, "%" PRIu64 "s", l->value); break;
    case U_MILLICPUS: snprintf(buf, n, "%.3g CPUs", v / 1000); break;
    case U_BYTES:
        while (v >= 1024 && k + 1 < VG_ARRAY_LEN(sfx)) {
            v /= 1024;
            k++;
        }
        snprintf(buf, n, "%.4g %s", v, sfx[k]);
        break;
    default: snprintf(buf, n, "%" PRIu64, l->value); break;
    }
}

static void run_section(const struct vw_model *m, bool following, struct vw_lines *o)
{
    bool service = m->has_header && m->header.rec.u.header.log_kind;
    vw_lines_add(o, VW_ST_HEAD, 0, service ? "Service log (vigil serve)" : "Run");
    if (service) {
        char when[64];
        vw_utc(m->header.rec.u.header.start_wall_ns, when, sizeof when);
        vw_lines_add(o, VW_ST_NORMAL, 0, "  started   %s   kernel %s", when,
                     m->header.rec.u.header.kernel ? m->header.rec.u.header.kernel : "?");
    } else if (m->has_header) {
        const struct vg_header *h = &m->header.rec.u.header;
        struct vg_buf cmd = {0};
        for (uint32_t i = 0; i < h->argc; i++)
            vg_buf_printf(&cmd, "%s%s", i ? " " : "", h->argv[i] ? h->argv[i] : "");
        vw_lines_add(o, VW_ST_NORMAL, 0, "  command   %s", cmd.data ? cmd.data : "");
        vg_buf_free(&cmd);
        vw_lines_add(o, VW_ST_NORMAL, 0, "  policy    %s   mode %s   engine %s",
                     h->policy_path ? h->policy_path : "?", h->mode ? h->mode : "?",
                     h->engine ? h->engine : "?");
        for (uint32_t i = 0; i < h->nlimits; i++) {
            char v[64];
            fmt_limit(&h->limits[i], v, sizeof v);
            vw_lines_add(o, VW_ST_NORMAL, 0, "  %-9s %-8s %s   (%s)", i ? "" : "limits",
                         h->limits[i].name ? h->limits[i].name : "?", v,
                         h->limits[i].enforced_by ? h->limits[i].enforced_by : "?");
        }
    }
    if (m->has_trailer) {
        const struct vg_trailer *t = &m->trailer.rec.u.trailer;
        bool ok = t->status && !strcmp(t->status, "ok");
        vw_lines_add(o, ok ? VW_ST_ALLOW : VW_ST_DENY, 0,
                     "  ended     %s   exit code %d%s%s   signal %d   after %.3fs   %" PRIu64 " events",
                     t->status ? t->status : "?", t->exit_code, t->limit ? "   limit " : "",
                     t->limit ? t->limit : "", t->signal, t->elapsed_ns / 1e9, t->events);
    } else {
        vw_lines_add(o, following ? VW_ST_DIM : VW_ST_WARN, 0, "  ended     %s",
                     following ? "not yet (following)" : "no trailer: the log was cut short");
    }
}

static void counts_section(const struct vw_model *m, struct vw_lines *o)
{
    const struct vw_stats *s = &m->stats;
    struct vg_buf b = {0};
    vg_buf_printf(&b, "%-10s", "Counts");
    for (int d = 0; d < VG_DEC_NDECISIONS; d++)
        vg_buf_printf(&b, "%11s", vg_decision_name((enum vg_decision)d));
    vg_buf_printf(&b, "%11s", "total");
    vw_lines_add(o, VW_ST_HEAD, 0, "%s", b.data);
    uint64_t col[VG_DEC_NDECISIONS] = {0}, all = 0;
    for (int c = 0; c < VG_CLASS_NCLASSES; c++) {
        uint64_t row = 0;
        b.len = 0;
        vg_buf_printf(&b, "  %-8s", vg_class_name((enum vg_class)c));
        for (int d = 0; d < VG_DEC_NDECISIONS; d++) {
            vg_buf_printf(&b, "%11" PRIu64, s->counts[c][d]);
            row += s->counts[c][d];
            col[d] += s->counts[c][d];
        }
        all += row;
        vg_buf_printf(&b, "%11" PRIu64, row);
        vw_lines_add(o, VW_ST_NORMAL, 0, "%s", b.data);
    }
    b.len = 0;
    vg_buf_printf(&b, "  %-8s", "total");
    for (int d = 0; d < VG_DEC_NDECISIONS; d++)
        vg_buf_printf(&b, "%11" PRIu64, col[d]);
    vg_buf_printf(&b, "%11" PRIu64, all);
    vw_lines_add(o, VW_ST_HEAD, 0, "%s", b.data);
    vg_buf_free(&b);
    vw_lines_add(o, VW_ST_DIM, 0,
                 "  records %zu: %" PRIu64 " syscall, %" PRIu64 " proc, %" PRIu64
                 " note, %" PRIu64 " service, %" PRIu64 " undecodable; %zu processes",
                 m->n, s->types[VG_REC_SYSCALL], s->types[VG_REC_PROC], s->types[VG_REC_NOTE],
                 s->types[VG_REC_SERVICE], m->nbad, m->tree.n);
    if (m->nskipped)
        vw_lines_add(o, VW_ST_WARN, 0,
                     "  %" PRIu64 " records of a type this vigil does not know were skipped "
                     "(a newer log format)", m->nskipped);
}

/* One section per table: heading, then "count  text" lines. */
static void table_section(struct vw_lines *o, const char *title, const struct vw_strtab *t,
                          size_t max, bool by_denied, bool show_denied)
{
    vw_lines_add(o, VW_ST_HEAD, 0, "%s (%zu)%s", title, t->n,
                 show_denied && t->n ? "   count, denied, destination" : "");
    if (!t->n)
        vw_lines_add(o, VW_ST_DIM, 0, "  (none)");
    const struct vw_strent **v = vw_strtab_sorted(t, by_denied);
    for (size_t i = 0; i < t->n && i < max; i++) {
        enum vw_style st = v[i]->denied ? VW_ST_DENY : VW_ST_NORMAL;
        if (show_denied)
            vw_lines_add(o, st, 0, "  %7" PRIu64 " %7" PRIu64 "  %s", v[i]->n, v[i]->denied,
                         v[i]->s);
        else
            vw_lines_add(o, st, 0, "  %7" PRIu64 "  %s", v[i]->n, v[i]->s);
    }
    if (t->n > max)
        vw_lines_add(o, VW_ST_DIM, 0, "  ... and %zu more", t->n - max);
    free(v);
}

/* vigil serve's steps, by kind (only in a log that has them). */
static void service_section(const struct vw_model *m, struct vw_lines *o)
{
    if (!m->stats.types[VG_REC_SERVICE])
        return;
    vw_lines_add(o, VW_ST_HEAD, 0, "Service events (%" PRIu64 ")", m->stats.types[VG_REC_SERVICE]);
    for (int k = 0; k < VG_SVC_NKINDS; k++)
        if (m->stats.svc_kinds[k])
            vw_lines_add(o, k == VG_SVC_REFUSED ? VW_ST_DENY : VW_ST_NORMAL, 0, "  %7" PRIu64 "  %s",
                         m->stats.svc_kinds[k], vg_svc_kind_name((enum vg_svc_kind)k));
    vw_lines_add(o, VW_ST_NORMAL, 0, "%s", "");
}

void vw_report_summary(const struct vw_model *m, bool following, struct vw_lines *out)
{
    run_section(m, following, out);
    vw_lines_add(out, VW_ST_NORMAL, 0, "%s", "");
    service_section(m, out);
    counts_section(m, out);
    vw_lines_add(out, VW_ST_NORMAL, 0, "%s", "");
    table_section(out, "Most-denied paths", &m->stats.denied_paths, TOP_PATHS, true, false);
    vw_lines_add(out, VW_ST_NORMAL, 0, "%s", "");
    table_section(out, "Network destinations", &m->stats.destinations, SIZE_MAX, false, true);
    vw_lines_add(out, VW_ST_NORMAL, 0, "%s", "");
    table_section(out, "Programs executed", &m->stats.programs, SIZE_MAX, false, false);
    vw_lines_add(out, VW_ST_NORMAL, 0, "%s", "");
    table_section(out, "Notes", &m->stats.notes, SIZE_MAX, false, false);
}
