/* report_fmt.c: what vigil report's renderings share. */
#include <string.h>

#include "insight/report_int.h"

#define FLEET_NAME "all"

void vg_rep_label_name(const struct vg_report *r, const char *value, struct vg_buf *out)
{
    if (!value)
        vg_buf_printf(out, "(no %s)", r->by ? r->by : "label");
    else
        vg_buf_puts(out, value);
}

void vg_rep_group_name(const struct vg_report *r, const struct vg_rep_group *g,
                       struct vg_buf *out)
{
    if (g->fleet)
        vg_buf_puts(out, FLEET_NAME);
    else
        vg_rep_label_name(r, g->name, out);
}

uint64_t vg_rep_ok(const struct vg_rep_group *g)
{
    const struct vg_tally_ent *e = vg_tally_find(&g->status, "ok");
    return e ? e->cands : 0;
}

const char *vg_rep_src_text(const struct vg_tally_ent *e)
{
    return e->key[0] == VG_REP_SRC_TEXT ? e->key + 1 : NULL;
}

void vg_rep_decisions(unsigned mask, struct vg_buf *out)
{
    const char *sep = "";
    for (int d = 0; d < VG_DEC_NDECISIONS; d++)
        if (mask & (1u << d)) {
            vg_buf_printf(out, "%s%s", sep, vg_decision_name(d));
            sep = "/";
        }
}
