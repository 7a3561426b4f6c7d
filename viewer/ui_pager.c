/* ui_pager.c: the views that are just lines of text: processes (with a
 * selected line), summary and help (scroll only). */
#include <limits.h>
#include <stdio.h>

#include "viewer/report.h"
#include "viewer/ui.h"

static struct ui_pager *pager_of(struct ui *ui)
{
    return &ui->pagers[ui_current(ui)->pager];
}

void ui_pager_draw(struct ui *ui, struct ui_pager *p, int y, int h)
{
    ui->body_h = h;
    if (p->cursor && p->cur >= p->top + (size_t)h)
        p->top = p->cur - (size_t)h + 1;
    if (p->cursor && p->cur < p->top)
        p->top = p->cur;
    for (int r = 0; r < h; r++) {
        size_t i = p->top + (size_t)r;
        if (i >= p->lines.n)
            break;
        const struct vw_line *l = &p->lines.v[i];
        ui_put_long(ui, y + r, 0, COLS, l->text, (enum vw_style)l->style, p->cursor && i == p->cur,
               p->cursor && i == p->cur);
    }
}

static size_t clamp_add(size_t v, long delta, size_t max)
{
    if (delta == LONG_MIN || (delta < 0 && (size_t)-delta > v))
        return 0;
    if (delta == LONG_MAX || (delta > 0 && v + (size_t)delta > max))
        return max;
    return delta < 0 ? v - (size_t)-delta : v + (size_t)delta;
}

void ui_pager_move(struct ui *ui, struct ui_pager *p, long delta, int h)
{
    (void)ui;
    size_t n = p->lines.n;
    if (p->cursor) {
        p->cur = clamp_add(p->cur, delta, n ? n - 1 : 0);
        return;
    }
    size_t max_top = n > (size_t)h ? n - (size_t)h : 0;
    p->top = clamp_add(p->top, delta, max_top);
}

static void draw(struct ui *ui, int y, int h)
{
    ui_pager_draw(ui, pager_of(ui), y, h);
}

static void go(struct ui *ui, long delta)
{
    ui_pager_move(ui, pager_of(ui), delta, ui->body_h);
}

static void position(struct ui *ui, char *buf, size_t n)
{
    struct ui_pager *p = pager_of(ui);
    snprintf(buf, n, "line %zu/%zu", (p->cursor ? p->cur : p->top) + (p->lines.n ? 1 : 0),
             p->lines.n);
}

/* Rebuild the lines, keeping the place (follow mode rebuilds often). */
static void rebuild(struct ui *ui, int id, void (*fill)(struct ui *, struct vw_lines *))
{
    struct ui_pager *p = &ui->pagers[id];
    vw_lines_clear(&p->lines);
    fill(ui, &p->lines);
    size_t n = p->lines.n;
    if (p->cur >= n)
        p->cur = n ? n - 1 : 0;
    if (p->top >= n)
        p->top = n ? n - 1 : 0;
}

/* ---- processes ---- */
static void fill_tree(struct ui *ui, struct vw_lines *l)
{
    vw_tree_lines(&ui->m->tree, l, ui->utf8);
    if (!l->n)
        vw_lines_add(l, VW_ST_DIM, 0, "(no processes in this log)");
}

static void tree_open(struct ui *ui)
{
    ui->pagers[UI_PG_TREE].cursor = true;
    rebuild(ui, UI_PG_TREE, fill_tree);
}

/* Enter: show this process's events in the list. */
static void tree_enter(struct ui *ui)
{
    struct ui_pager *p = &ui->pagers[UI_PG_TREE];
    if (p->cur >= p->lines.n || !p->lines.v[p->cur].ref)
        return;
    const struct vw_proc *proc = vw_tree_find(&ui->m->tree, p->lines.v[p->cur].ref);
    if (!proc)
        return;
    ui->filter.proc = proc->id;
    ui->filter.pid = proc->pid;
    ui_pop(ui);
    ui_refilter(ui);
    ui_message(ui, false, "showing process %d (x clears filters)", proc->pid);
}

const struct ui_view ui_tree_view = {
    .name = "processes", .scope = UI_SC_TREE, .pager = UI_PG_TREE,
    .open = tree_open, .draw = draw, .go = go, .enter = tree_enter,
    .grew = tree_open, .position = position,
};

/* ---- summary ---- */
static void fill_summary(struct ui *ui, struct vw_lines *l)
{
    vw_report_summary(ui->m, ui->follow, l);
}

static void summary_open(struct ui *ui)
{
    rebuild(ui, UI_PG_SUMMARY, fill_summary);
}

const struct ui_view ui_summary_view = {
    .name = "summary", .scope = UI_SC_PAGE, .pager = UI_PG_SUMMARY,
    .open = summary_open, .draw = draw, .go = go, .grew = summary_open,
    .position = position,
};

/* ---- help ---- */
static void fill_help(struct ui *ui, struct vw_lines *l)
{
    (void)ui;
    ui_help_lines(l);
}

static void help_open(struct ui *ui)
{
    rebuild(ui, UI_PG_HELP, fill_help);
}

const struct ui_view ui_help_view = {
    .name = "help", .scope = UI_SC_PAGE, .pager = UI_PG_HELP,
    .open = help_open, .draw = draw, .go = go, .position = position,
};
