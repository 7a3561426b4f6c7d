/* text_table.c: see text_table.h. */
#include "insight/text_table.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"

/* A cell longer than this is cut (the last column never is). */
#define MAX_CELL 40
#define CUT_MARK "..."
/* "\xNN": a cut never splits one */
#define ESCAPE_LEN 4
#define COL_GAP "  "
#define FIRST_CELLS 64

static void put(struct vg_table *t, char *cell)
{
    if (t->ncells == t->cap) {
        t->cap = t->cap ? 2 * t->cap : FIRST_CELLS;
        t->cells = vg_xrealloc(t->cells, t->cap * sizeof *t->cells);
    }
    t->cells[t->ncells++] = cell;
}

void vg_table_text(struct vg_table *t, const char *s)
{
    struct vg_buf e = {0};
    vg_esc_puts(&e, s, VG_ESC_TEXT);
    vg_buf_put(&e, "", 1);
    put(t, e.data);
}

void vg_table_num(struct vg_table *t, uint64_t n)
{
    put(t, vg_xasprintf("%" PRIu64, n));
}

void vg_table_own(struct vg_table *t, const char *s)
{
    put(t, vg_xstrdup(s));
}

void vg_table_start(struct vg_table *t, const char *align, const char *const *heads)
{
    memset(t, 0, sizeof *t);
    t->ncols = strlen(align);
    t->align = align;
    for (size_t i = 0; i < t->ncols; i++)
        vg_table_own(t, heads[i]);
}

/* The bytes of the cell shown: all, or (cut) up to MAX_CELL with the mark. */
static size_t shown_len(const char *s, bool last, bool *cut)
{
    size_t n = strlen(s);
    *cut = !last && n > MAX_CELL;
    if (!*cut)
        return n;
    size_t keep = MAX_CELL - strlen(CUT_MARK);
    /* back off to before an escape the cut would split */
    for (size_t k = keep > ESCAPE_LEN ? keep - ESCAPE_LEN : 0; k < keep; k++)
        if (s[k] == '\\')
            return k;
    return keep;
}

static size_t width(const char *s, bool last)
{
    bool cut;
    size_t n = shown_len(s, last, &cut);
    return n + (cut ? strlen(CUT_MARK) : 0);
}

void vg_table_finish(struct vg_table *t, struct vg_buf *out)
{
    size_t nrows = t->ncols ? t->ncells / t->ncols : 0;
    size_t *w = vg_xcalloc(t->ncols + 1, sizeof *w);
    for (size_t i = 0; i < nrows * t->ncols; i++) {
        size_t c = i % t->ncols, n = width(t->cells[i], c + 1 == t->ncols);
        w[c] = n > w[c] ? n : w[c];
    }
    for (size_t r = 0; r < nrows; r++) {
        vg_buf_puts(out, COL_GAP);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            bool cut, last = c + 1 == t->ncols, right = t->align[c] == 'r';
            size_t n = shown_len(s, last, &cut), pad = w[c] - width(s, last);
            if (right)
                vg_buf_printf(out, "%*s", (int)pad, "");
            vg_buf_put(out, s, n);
            if (cut)
                vg_buf_puts(out, CUT_MARK);
            if (!last)
                vg_buf_printf(out, "%*s%s", right ? 0 : (int)pad, "", COL_GAP);
        }
        vg_buf_puts(out, "\n");
    }
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->cells);
    free(w);
    memset(t, 0, sizeof *t);
}
