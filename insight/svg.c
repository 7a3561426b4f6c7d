/* svg.c: see svg.h.  Lengths are whole pixels, laid out here: a column of
 * row labels, the bars, the numbers after them.  A stacked bar's pieces
 * end where the running total, rounded, ends, so together they are the
 * total's length exactly, whatever the rounding of each. */
#include "insight/svg.h"

#include <inttypes.h>
#include <string.h>

#include "util/html.h"

#define LABEL_W 240      /* the row labels' column */
#define WIDE_LABEL_W 420 /* ... for long labels */
#define BAR_W 600        /* the longest bar */
#define VALUE_W 90       /* the numbers after the bars */
#define PAD 6            /* between a label or a bar and its text */
#define ROW_H 24         /* a stacked row */
#define BAR_H 16         /* a stacked bar */
#define SUB_H 12         /* one series' bar in a grouped row */
#define SUB_GAP 2
#define ROW_GAP 10       /* after a grouped row */
#define TEXT_DY 4        /* from a bar's middle to its text's baseline */
#define MAX_LABEL 28     /* bytes of a row label shown; the tooltip has it whole */
#define MAX_WIDE_LABEL 64
#define SWATCH 12        /* a legend's colour square */
#define CUT_MARK "..."
#define PERCENT 100

static unsigned label_w(const struct vg_svg_chart *c)
{
    return c->wide ? WIDE_LABEL_W : LABEL_W;
}

static void label_text(struct vg_buf *out, const struct vg_svg_chart *c, const char *s)
{
    size_t n = strlen(s), max = c->wide ? MAX_WIDE_LABEL : MAX_LABEL;
    vg_html_put(out, s, n > max ? max : n);
    if (n > max)
        vg_buf_puts(out, CUT_MARK);
}

static void rect(struct vg_buf *out, const struct vg_svg_chart *c, size_t r, size_t s,
                 uint64_t x, unsigned y, uint64_t w, unsigned h)
{
    uint64_t v = c->values[r * c->nseries + s];
    vg_buf_printf(out, "<rect class=\"bar\" x=\"%" PRIu64 "\" y=\"%u\" width=\"%" PRIu64
                       "\" height=\"%u\" fill=\"%s\" data-row=\"", x, y, w, h, c->series[s].color);
    vg_html_puts(out, c->rows[r]);
    vg_buf_puts(out, "\" data-series=\"");
    vg_html_puts(out, c->series[s].name);
    vg_buf_printf(out, "\" data-value=\"%" PRIu64 "\"><title>", v);
    vg_html_puts(out, c->rows[r]);
    vg_buf_puts(out, ", ");
    vg_html_puts(out, c->series[s].name);
    vg_buf_printf(out, ": %" PRIu64, v);
    if (c->of)
        vg_buf_printf(out, " of %" PRIu64, c->of[s]);
    vg_buf_puts(out, "</title></rect>");
}

static void row_label(struct vg_buf *out, const struct vg_svg_chart *c, size_t r, unsigned mid)
{
    vg_buf_printf(out, "<text class=\"label\" x=\"%u\" y=\"%u\" text-anchor=\"end\"><title>",
                  label_w(c) - PAD, mid + TEXT_DY);
    vg_html_puts(out, c->rows[r]);
    vg_buf_puts(out, "</title>");
    label_text(out, c, c->rows[r]);
    vg_buf_puts(out, "</text>");
}

static uint64_t row_total(const struct vg_svg_chart *c, size_t r)
{
    uint64_t t = 0;
    for (size_t s = 0; s < c->nseries; s++)
        t += c->values[r * c->nseries + s];
    return t;
}

/* The length of value v on a scale whose longest is max, in pixels. */
static uint64_t scaled(uint64_t v, uint64_t max)
{
    return max ? (v * BAR_W + max / 2) / max : 0;
}

static void stacked(struct vg_buf *out, const struct vg_svg_chart *c)
{
    uint64_t max = 0;
    for (size_t r = 0; r < c->nrows; r++)
        if (row_total(c, r) > max)
            max = row_total(c, r);
    for (size_t r = 0; r < c->nrows; r++) {
        unsigned top = (unsigned)(r * ROW_H), mid = top + ROW_H / 2;
        row_label(out, c, r, mid);
        uint64_t sum = 0, x = 0;
        for (size_t s = 0; s < c->nseries; s++) {
            uint64_t v = c->values[r * c->nseries + s];
            sum += v;
            uint64_t end = scaled(sum, max);
            if (v && end > x)
                rect(out, c, r, s, label_w(c) + x, mid - BAR_H / 2, end - x, BAR_H);
            x = end;
        }
        vg_buf_printf(out, "<text class=\"value\" x=\"%" PRIu64 "\" y=\"%u\">%" PRIu64 "</text>",
                      label_w(c) + x + PAD, mid + TEXT_DY, sum);
    }
}

static uint64_t share_scaled(const struct vg_svg_chart *c, size_t s, uint64_t v, uint64_t max)
{
    if (!c->of)
        return scaled(v, max);
    return c->of[s] ? (v * BAR_W + c->of[s] / 2) / c->of[s] : 0;
}

static void grouped(struct vg_buf *out, const struct vg_svg_chart *c)
{
    uint64_t max = 0;
    for (size_t i = 0; i < c->nrows * c->nseries; i++)
        if (c->values[i] > max)
            max = c->values[i];
    unsigned row_h = (unsigned)(c->nseries * (SUB_H + SUB_GAP)) + ROW_GAP;
    for (size_t r = 0; r < c->nrows; r++) {
        unsigned top = (unsigned)(r * row_h);
        row_label(out, c, r, top + (row_h - ROW_GAP) / 2);
        for (size_t s = 0; s < c->nseries; s++) {
            uint64_t v = c->values[r * c->nseries + s], w = share_scaled(c, s, v, max);
            unsigned y = top + (unsigned)(s * (SUB_H + SUB_GAP));
            if (w)
                rect(out, c, r, s, label_w(c), y, w, SUB_H);
            vg_buf_printf(out, "<text class=\"value small\" x=\"%" PRIu64 "\" y=\"%u\">%" PRIu64,
                          label_w(c) + w + PAD, y + SUB_H / 2 + TEXT_DY, v);
            if (c->of)
                vg_buf_printf(out, " of %" PRIu64 " (%" PRIu64 "%%)", c->of[s],
                              c->of[s] ? (v * PERCENT + c->of[s] / 2) / c->of[s] : 0);
            vg_buf_puts(out, "</text>");
        }
    }
}

/* The series with anything to show, as swatches: a colour absent from
 * the chart is absent from its legend too. */
static void legend(struct vg_buf *out, const struct vg_svg_chart *c)
{
    vg_buf_puts(out, "<p class=\"legend\">");
    for (size_t s = 0; s < c->nseries; s++) {
        uint64_t t = 0;
        for (size_t r = 0; r < c->nrows; r++)
            t += c->values[r * c->nseries + s];
        if (!t)
            continue;
        vg_buf_printf(out, "<span class=\"key\"><svg width=\"%d\" height=\"%d\"><rect "
                           "class=\"swatch\" width=\"%d\" height=\"%d\" fill=\"%s\"/></svg> ",
                      SWATCH, SWATCH, SWATCH, SWATCH, c->series[s].color);
        vg_html_puts(out, c->series[s].name);
        vg_buf_puts(out, "</span>");
    }
    vg_buf_puts(out, "</p>\n");
}

void vg_svg_bars(struct vg_buf *out, const struct vg_svg_chart *c)
{
    unsigned h = c->stacked ? (unsigned)(c->nrows * ROW_H)
                            : (unsigned)(c->nrows * (c->nseries * (SUB_H + SUB_GAP) + ROW_GAP));
    vg_buf_printf(out, "<svg id=\"%s\" class=\"chart\" role=\"img\" width=\"%u\" "
                       "height=\"%u\" aria-label=\"%s\">", c->id,
                  label_w(c) + BAR_W + VALUE_W + PAD, h, c->title);
    if (c->stacked)
        stacked(out, c);
    else
        grouped(out, c);
    vg_buf_puts(out, "</svg>\n");
    legend(out, c);
}
