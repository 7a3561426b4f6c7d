/* probes.c: see probes.h. */
#include "insight/probes.h"

#include <stdlib.h>
#include <string.h>

#include "event/reader.h"

#define NS_PER_S 1000000000ull
#define NS_PER_US 1000ull

bool vg_is_probe(const struct vg_record *r)
{
    return r->type == VG_REC_SYSCALL && r->u.sys.probe;
}

static const char *probe_path(const struct vg_syscall_ev *e)
{
    return e->args.resolved ? e->args.resolved : e->args.path ? e->args.path : "?";
}

static const char *last_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s && s[1] ? s + 1 : p;
}

bool vg_probe_joins(const struct vg_probe_group *g, const struct vg_record *r)
{
    const struct vg_syscall_ev *e = &r->u.sys;
    return g->active && vg_is_probe(r) && e->proc == g->proc && e->cls == g->cls &&
           !strcmp(last_name(probe_path(e)), g->base);
}

void vg_probe_add(struct vg_probe_group *g, const struct vg_record *r, const struct vg_buf *line)
{
    const struct vg_syscall_ev *e = &r->u.sys;
    if (!g->active) {
        g->active = true;
        g->proc = e->proc;
        g->pid = e->pid;
        g->cls = e->cls;
        g->first_ts = e->ts_ns;
        g->base = vg_xstrdup(last_name(probe_path(e)));
        g->single.len = 0;
        vg_buf_put(&g->single, line->data, line->len);
    }
    g->decisions |= 1u << e->decision;
    if (g->n++ < VG_PROBE_SHOWN) {
        vg_buf_puts(&g->paths, " ");
        vg_text_escaped(&g->paths, probe_path(e));
    }
}

static void put_decisions(struct vg_buf *b, unsigned mask)
{
    const char *sep = "";
    for (int d = 0; d < VG_DEC_NDECISIONS; d++)
        if (mask & (1u << d)) {
            vg_buf_printf(b, "%s%s", sep, vg_decision_name(d));
            sep = "/";
        }
}

void vg_probe_flush(struct vg_probe_group *g, struct vg_buf *out)
{
    if (!g->active)
        return;
    if (g->n == 1) {
        vg_buf_put(out, g->single.data, g->single.len);
    } else {
        vg_buf_printf(out, "+%llu.%06llu [%d] %-7s probed %u paths for ",
                      (unsigned long long)(g->first_ts / NS_PER_S),
                      (unsigned long long)(g->first_ts % NS_PER_S / NS_PER_US), g->pid,
                      vg_class_name(g->cls), g->n);
        vg_text_escaped(out, g->base);
        vg_buf_puts(out, ":");
        vg_buf_put(out, g->paths.data, g->paths.len);
        if (g->n > VG_PROBE_SHOWN)
            vg_buf_printf(out, " (+%u more)", g->n - VG_PROBE_SHOWN);
        vg_buf_puts(out, " -> ");
        put_decisions(out, g->decisions);
    }
    vg_buf_puts(out, "\n");
    free(g->base);
    g->base = NULL;
    g->paths.len = 0;
    g->active = false;
    g->n = 0;
    g->decisions = 0;
}

void vg_probe_free(struct vg_probe_group *g)
{
    free(g->base);
    vg_buf_free(&g->paths);
    vg_buf_free(&g->single);
    memset(g, 0, sizeof *g);
}
