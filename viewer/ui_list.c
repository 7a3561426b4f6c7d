/* ui_list.c: the event list, one row per record, and the detail pane that
 * splits the screen under it (Enter).  Rows come from the summary arena,
 * so drawing never decodes; only the selected record is decoded, for the
 * detail pane. */
#include <limits.h>
#include <stdio.h>

#include "viewer/report.h"
#include "viewer/ui.h"

#define PID_W 7
#define CLASS_W 8
#define DEC_W 11

static size_t clamp_add(size_t v, long delta, size_t n)
{
    size_t max = n ? n - 1 : 0;
    if (delta == LONG_MIN || (delta < 0 && (size_t)-delta > v))
        return 0;
    if (delta == LONG_MAX || (delta > 0 && v + (size_t)delta > max))
        return max;
    return delta < 0 ? v - (size_t)-delta : v + (size_t)delta;
}

/* Width of the time column: enough for the latest timestamp. */
static int time_width(const struct vw_model *m)
{
    uint64_t last = m->n ? m->meta[m->n - 1].ts_ns : 0;
    int w = snprintf(NULL, 0, "+%.3f", last / 1e9);
    return w < 7 ? 7 : w;
}

static const char *kind_name(const struct vw_meta *mt)
{
    if (mt->type == VG_REC_SYSCALL)
        return vg_class_name((enum vg_class)mt->cls);
    if (mt->type == VW_TYPE_BAD)
        return "?";
    return vg_rec_type_name((enum vg_rec_type)mt->type);
}

static void draw_row(struct ui *ui, int y, size_t rec, bool sel, int tw)
{
    const struct vw_meta *mt = &ui->m->meta[rec];
    char cell[64];
    int x = 0;
    snprintf(cell, sizeof cell, "%+*.3f ", tw, mt->ts_ns / 1e9);
    x += ui_put(ui, y, x, tw + 1, cell, VW_ST_DIM, sel, true);
    if (mt->pid)
        snprintf(cell, sizeof cell, "%*d ", PID_W - 1, mt->pid);
    else
        snprintf(cell, sizeof cell, "%*s", PID_W, "");
    x += ui_put(ui, y, x, PID_W, cell, VW_ST_NORMAL, sel, true);
    bool sys = mt->type == VG_REC_SYSCALL;
    x += ui_put(ui, y, x, CLASS_W, kind_name(mt), sys ? VW_ST_NORMAL : VW_ST_DIM, sel, true);
    bool decided = sys || mt->type == VG_REC_DNS; /* dns records are decisions too */
    const char *dec = decided ? vg_decision_name((enum vg_decision)mt->decision) : "";
    enum vw_style st = decided ? vw_decision_style((enum vg_decision)mt->decision) : VW_ST_NORMAL;
    if (mt->type == VG_REC_SERVICE) {  /* what happened to the request: red when refused */
        dec = vg_svc_kind_name((enum vg_svc_kind)mt->kind);
        st = mt->kind == VG_SVC_REFUSED ? VW_ST_DENY
           : mt->kind == VG_SVC_LOST || mt->kind == VG_SVC_CANCELLED ? VW_ST_WARN : VW_ST_NORMAL;
    }
    x += ui_put(ui, y, x, DEC_W, dec, st, sel, true);
    ui_put_long(ui, y, x, COLS - x, vw_model_summary(ui->m, rec),
                mt->type == VW_TYPE_BAD ? VW_ST_WARN : mt->probe ? VW_ST_DIM : VW_ST_NORMAL, sel,
                true);
}

static void draw_columns(struct ui *ui, int y, int tw)
{
    char head[128];
    snprintf(head, sizeof head, "%*s %*s %-*s%-*s%s", tw, "TIME", PID_W - 1, "PID", CLASS_W,
             "CLASS", DEC_W, "DECISION", "EVENT");
    ui_put(ui, y, 0, COLS, head, VW_ST_HEAD, false, true);
}

/* (Re)build the detail lines when the selection moved to another record. */
static void detail_update(struct ui *ui, size_t rec)
{
    if (ui->detail_valid && ui->detail_rec == rec)
        return;
    vw_lines_clear(&ui->detail_lines);
    ui->detail_rec = rec;
    ui->detail_top = 0;
    ui->detail_valid = true;
    const struct vw_meta *mt = &ui->m->meta[rec];
    struct vg_err err = {{0}};
    const struct vg_record *r = vw_model_record(ui->m, rec, &err);
    if (r)
        vw_report_record(r, &ui->detail_lines);
    else
        vw_lines_add(&ui->detail_lines, VW_ST_WARN, 0, "cannot decode this record: %s", err.msg);
    vw_lines_add(&ui->detail_lines, VW_ST_DIM, 0, "record %zu of %zu, %u bytes at offset %llu",
                 rec + 1, ui->m->n, mt->len, (unsigned long long)mt->off);
}

static void draw_detail(struct ui *ui, int y, int h, size_t nvis)
{
    if (!nvis) {
        ui_put(ui, y, 0, COLS, " detail: no record selected", VW_ST_DIM, true, true);
        return;
    }
    detail_update(ui, ui->rows.v[ui->cur]);
    char bar[160];
    snprintf(bar, sizeof bar, " detail  (J/K scroll, Enter closes)  line %zu/%zu",
             ui->detail_top + 1, ui->detail_lines.n);
    ui_put(ui, y, 0, COLS, bar, VW_ST_HEAD, true, true);
    for (int r = 1; r < h; r++) {
        size_t i = ui->detail_top + (size_t)(r - 1);
        if (i >= ui->detail_lines.n)
            break;
        const struct vw_line *l = &ui->detail_lines.v[i];
        ui_put_long(ui, y + r, 1, COLS - 1, l->text, (enum vw_style)l->style, false, false);
    }
}

static void list_draw(struct ui *ui, int y, int h)
{
    size_t nvis = ui_visible_rows(ui);
    int tw = time_width(ui->m);
    int list_h = h - 1;  /* the column header takes a row */
    int det_h = 0;
    if (ui->detail) {
        list_h = (h - 1) * 2 / 5;
        if (list_h < 3)
            list_h = 3;
        det_h = h - 1 - list_h;
    }
    ui->body_h = list_h;
    if (ui->cur >= nvis)
        ui->cur = nvis ? nvis - 1 : 0;
    if (ui->cur < ui->top)
        ui->top = ui->cur;
    if (ui->cur >= ui->top + (size_t)list_h)
        ui->top = ui->cur - (size_t)list_h + 1;
    draw_columns(ui, y, tw);
    for (int r = 0; r < list_h; r++) {
        size_t row = ui->top + (size_t)r;
        if (row >= nvis)
            break;
        draw_row(ui, y + 1 + r, ui->rows.v[row], row == ui->cur, tw);
    }
    if (!nvis)
        ui_put(ui, y + 1, 2, COLS - 2,
               vw_filter_active(&ui->filter) ? "no event matches the filter (x clears it)"
                                             : "no events yet",
               VW_ST_DIM, false, false);
    if (det_h > 0)
        draw_detail(ui, y + 1 + list_h, det_h, nvis);
}

static void list_go(struct ui *ui, long delta)
{
    ui->cur = clamp_add(ui->cur, delta, ui_visible_rows(ui));
}

void ui_detail_scroll(struct ui *ui, long delta)
{
    if (!ui->detail) {
        ui_message(ui, false, "the detail pane is closed (Enter opens it)");
        return;
    }
    ui->detail_top = clamp_add(ui->detail_top, delta, ui->detail_lines.n);
}

static void list_enter(struct ui *ui)
{
    ui->detail = !ui->detail;
}

static void list_position(struct ui *ui, char *buf, size_t n)
{
    size_t nvis = ui_visible_rows(ui);
    snprintf(buf, n, "row %zu", nvis ? ui->cur + 1 : 0);
}

const struct ui_view ui_list_view = {
    .name = "events", .scope = UI_SC_LIST, .pager = -1,
    .draw = list_draw, .go = list_go, .enter = list_enter, .position = list_position,
};
