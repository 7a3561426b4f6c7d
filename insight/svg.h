/* svg.h: horizontal bar charts as inline SVG, for vigil report's page: no
 * script, no font or file fetched, every label escaped (util/html.h).
 * Every bar is a <rect> of whole pixels with its numbers in data-*
 * attributes (data-row, data-series, data-value) and a <title> tooltip,
 * so a browser draws it exactly and a test can find it in the DOM. */
#ifndef VG_INSIGHT_SVG_H
#define VG_INSIGHT_SVG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

struct vg_svg_series {
    const char *name;    /* may come from outside: escaped */
    const char *color;   /* "#rrggbb", vigil's own */
};

struct vg_svg_chart {
    const char *id;      /* the element's id, vigil's own */
    const char *title;   /* what it shows, vigil's own (aria-label) */
    const char *const *rows; /* row labels, may come from outside */
    size_t nrows;
    const struct vg_svg_series *series;
    size_t nseries;
    const uint64_t *values;  /* nrows * nseries, row by row */
    /* stacked: one bar per row, its series end to end, as long as the
     * row's total; else one bar per series in each row */
    bool stacked;
    /* not stacked: when set, a bar is values[r][s] out of of[s] (a share
     * of the series' own whole: groups of unequal size compare) */
    const uint64_t *of;
    bool wide;           /* long row labels (source lines): a wider column for them */
};

/* Appends the chart (an <svg> element, then its legend) to out. */
void vg_svg_bars(struct vg_buf *out, const struct vg_svg_chart *c);
#endif
