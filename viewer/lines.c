/* lines.c: see lines.h. */
#include "viewer/lines.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/util.h"

void vw_lines_add(struct vw_lines *l, enum vw_style style, uint64_t ref,
                  const char *fmt, ...)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = vg_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    va_list ap;
    va_start(ap, fmt);
    char *s;
    if (vasprintf(&s, fmt, ap) < 0)
        s = vg_xstrdup("?");
    va_end(ap);
    l->v[l->n++] = (struct vw_line){s, (uint8_t)style, ref};
}

void vw_lines_clear(struct vw_lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].text);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static const enum vw_style decision_styles[VG_DEC_NDECISIONS] = {
    [VG_DEC_ALLOW] = VW_ST_ALLOW,
    [VG_DEC_DENY] = VW_ST_DENY,
    [VG_DEC_KILL] = VW_ST_KILL,
    [VG_DEC_WOULD_DENY] = VW_ST_WOULD,
    [VG_DEC_WOULD_KILL] = VW_ST_WOULDKILL,
};

enum vw_style vw_decision_style(enum vg_decision d)
{
    return (unsigned)d < VG_DEC_NDECISIONS ? decision_styles[d] : VW_ST_NORMAL;
}
