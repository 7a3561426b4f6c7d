/* ui.c: the viewer's main loop: draw the view on top, the status bar and
 * the message line; wait for a key, for the next replay tick or for the
 * next look at a followed file; dispatch the key through the keymap. */
#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer/ui.h"
#include "viewer/viewer.h"

#define POLL_NS 200000000ull   /* follow: look at the file every 200 ms */
#define TICK_MS 40             /* replay: reveal at 25 frames a second */

const struct ui_view *ui_current(const struct ui *ui)
{
    return ui->depth ? ui->stack[ui->depth - 1] : &ui_list_view;
}

void ui_push(struct ui *ui, const struct ui_view *v)
{
    int j = 0;
    for (int i = 0; i < ui->depth; i++)  /* at most one of each view */
        if (ui->stack[i] != v)
            ui->stack[j++] = ui->stack[i];
    ui->depth = j;
    if (ui->depth < (int)VG_ARRAY_LEN(ui->stack))
        ui->stack[ui->depth++] = v;
    if (v->open)
        v->open(ui);
}

void ui_pop(struct ui *ui)
{
    if (ui->depth)
        ui->depth--;
}

void ui_message(struct ui *ui, bool warn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ui->msg, sizeof ui->msg, fmt, ap);
    va_end(ap);
    ui->msg_warn = warn;
}

size_t ui_visible_rows(const struct ui *ui)
{
    return vw_rows_upto(&ui->rows, vw_replay_visible(&ui->replay, ui->m));
}

static bool at_bottom(const struct ui *ui)
{
    return ui->cur + 1 >= ui_visible_rows(ui);
}

static void to_bottom(struct ui *ui)
{
    size_t n = ui_visible_rows(ui);
    ui->cur = n ? n - 1 : 0;
}

void ui_refilter(struct ui *ui)
{
    size_t rec = ui->cur < ui->rows.n ? ui->rows.v[ui->cur] : 0;
    vw_rows_rebuild(&ui->rows, ui->m, &ui->filter);
    ui->cur = vw_rows_lower(&ui->rows, rec);
    if (ui->cur >= ui_visible_rows(ui))
        to_bottom(ui);
    ui->detail_valid = false;
}

/* ---- status bar ---- */

struct seg {
    char text[320];
    int drop;   /* dropped first when the bar is too narrow: higher first */
};

static void mode_text(const struct ui *ui, char *buf, size_t n)
{
    const struct vw_replay *r = &ui->replay;
    buf[0] = 0;
    if (r->active)
        snprintf(buf, n, "replay %s %gx", r->playing ? "playing" : "paused", vw_replay_speed(r));
    else if (r->speed != 2)
        snprintf(buf, n, "speed %gx", vw_replay_speed(r));
    if (ui->follow) {
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%sfollow", len ? ", " : "");
    }
}

static void draw_status(struct ui *ui, int y)
{
    const struct ui_view *v = ui_current(ui);
    const char *base = strrchr(ui->m->path, '/');
    base = base ? base + 1 : ui->m->path;
    char filt[280], warn[300];
    struct seg s[7] = {{"", 0}};
    snprintf(s[0].text, sizeof s[0].text, "[%s]", v->name);
    s[0].drop = 4;
    snprintf(s[1].text, sizeof s[1].text, "%s", base);
    s[1].drop = 3;
    vw_filter_describe(&ui->filter, filt, sizeof filt);
    snprintf(s[2].text, sizeof s[2].text, "filter: %s", filt);
    s[2].drop = vw_filter_active(&ui->filter) ? 1 : 5;
    snprintf(s[3].text, sizeof s[3].text, "%zu/%zu", ui_visible_rows(ui), ui->m->n);
    v->position(ui, s[4].text, sizeof s[4].text);
    s[4].drop = 2;
    mode_text(ui, s[5].text, sizeof s[5].text);
    vw_model_warning(ui->m, ui->follow, warn, sizeof warn);
    if (warn[0])
        snprintf(s[6].text, sizeof s[6].text, "! %s", warn);
    /* Drop the least useful segments until the bar fits. */
    for (;;) {
        int width = 0, worst = -1;
        for (int i = 0; i < 7; i++) {
            if (!s[i].text[0])
                continue;
            width += (int)strlen(s[i].text) + 2;
            if (s[i].drop && (worst < 0 || s[i].drop > s[worst].drop))
                worst = i;
        }
        if (width <= COLS || worst < 0)
            break;
        s[worst].text[0] = 0;
    }
    int x = ui_put(ui, y, 0, COLS, " ", VW_ST_NORMAL, true, false);
    for (int i = 0; i < 6; i++)
        if (s[i].text[0]) {
            x += ui_put(ui, y, x, COLS - x, s[i].text, VW_ST_NORMAL, true, false);
            x += ui_put(ui, y, x, COLS - x, "  ", VW_ST_NORMAL, true, false);
        }
    ui_put(ui, y, x, COLS - x, s[6].text, VW_ST_WARN, true, true);
}

static void draw_message(struct ui *ui, int y)
{
    if (ui->msg[0])
        ui_put(ui, y, 0, COLS, ui->msg, ui->msg_warn ? VW_ST_WARN : VW_ST_NORMAL, false, true);
    else
        ui_put(ui, y, 0, COLS,
               "? help  q quit  Enter detail  p processes  s summary  d denials  / search  "
               "Space replay",
               VW_ST_DIM, false, true);
}

void ui_draw(struct ui *ui)
{
    erase();
    if (COLS < UI_MIN_COLS || LINES < UI_MIN_LINES) {
        char msg[128];
        snprintf(msg, sizeof msg, "terminal too small (%dx%d): need %dx%d; q quits", COLS, LINES,
                 UI_MIN_COLS, UI_MIN_LINES);
        ui_put(ui, 0, 0, COLS, msg, VW_ST_WARN, false, false);
        return;
    }
    ui_current(ui)->draw(ui, 0, LINES - 2);
    draw_status(ui, LINES - 2);
    draw_message(ui, LINES - 1);
}

/* ---- the loop ---- */

static void poll_file(struct ui *ui, uint64_t now)
{
    if (!ui->follow || now - ui->last_poll < POLL_NS)
        return;
    ui->last_poll = now;
    bool bottom = at_bottom(ui);
    struct vg_err err = {{0}};
    long added = vw_model_refresh(ui->m, &err);
    if (added < 0) {
        ui_message(ui, true, "stopped following: %s", err.msg);
        ui->follow = false;
        return;
    }
    if (!added)
        return;
    vw_rows_extend(&ui->rows, ui->m, &ui->filter);
    if (bottom)
        to_bottom(ui);
    const struct ui_view *v = ui_current(ui);
    if (v->grew)
        v->grew(ui);
}

static void tick_replay(struct ui *ui, uint64_t now)
{
    bool bottom = at_bottom(ui);
    if (vw_replay_tick(&ui->replay, ui->m, now) && bottom)
        to_bottom(ui);
}

static void loop(struct ui *ui)
{
    while (!ui->quit) {
        uint64_t now = vg_now_mono_ns();
        poll_file(ui, now);
        tick_replay(ui, now);
        ui_draw(ui);
        timeout(ui->replay.playing ? TICK_MS : ui->follow ? (int)(POLL_NS / 1000000) : -1);
        wint_t ch;
        int rc = get_wch(&ch);
        if (rc == ERR)
            continue;
        int key = rc == KEY_CODE_YES ? FK((int)ch) : (int)ch;
        if (key == FK(KEY_RESIZE))
            continue;  /* the next draw uses the new size */
        ui->msg[0] = 0;
        ui_dispatch(ui, key);
    }
}

int vw_ui_run(struct vw_model *m, bool follow)
{
    setlocale(LC_ALL, "");
    struct ui ui = {.m = m, .follow = follow, .filter = {.cls = -1}};
    ui.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
    vw_replay_init(&ui.replay);
    vw_rows_rebuild(&ui.rows, m, &ui.filter);
    if (follow)
        to_bottom(&ui);
    ui.last_poll = vg_now_mono_ns();
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    ui_colors_init(&ui);
    loop(&ui);
    endwin();
    vw_rows_free(&ui.rows);
    vw_filter_clear(&ui.filter);
    vw_lines_clear(&ui.detail_lines);
    for (int i = 0; i < UI_NPAGERS; i++)
        vw_lines_clear(&ui.pagers[i].lines);
    free(ui.search);
    return 0;
}
