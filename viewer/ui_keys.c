/* ui_keys.c: THE keymap.  Every key the viewer understands is one row of
 * the table below: its keys, the views it works in, what it does and the
 * help text; the help screen is generated from the same rows. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer/ui.h"

struct ui_key {
    int keys[3];           /* 0-terminated when fewer */
    unsigned scope;        /* UI_SC_* */
    void (*fn)(struct ui *ui, long arg);
    long arg;
    const char *group;     /* heading in the help screen */
    const char *help;
};

enum { MV_LINE, MV_PAGE, MV_END };

/* ---- actions ---- */

static void act_move(struct ui *ui, long arg)
{
    long n = labs(arg) == MV_PAGE ? (ui->body_h > 1 ? ui->body_h - 1 : 1) : 1;
    long d = arg < 0 ? -n : n;
    if (labs(arg) == MV_END)
        d = arg < 0 ? LONG_MIN : LONG_MAX;
    ui_current(ui)->go(ui, d);
}

/* Long lines: half a screen to the right or left, or (0) back to the start. */
static void act_hscroll(struct ui *ui, long dir)
{
    int step = COLS / 2 > 1 ? COLS / 2 : 1;
    ui->hscroll = dir == 0 ? 0 : ui->hscroll + (int)dir * step;
    if (ui->hscroll < 0)
        ui->hscroll = 0;
    if (ui->hscroll)
        ui_message(ui, false, "lines scrolled %d columns to the right (0: back)", ui->hscroll);
}

static void act_enter(struct ui *ui, long arg)
{
    (void)arg;
    const struct ui_view *v = ui_current(ui);
    if (v->enter)
        v->enter(ui);
}

static void act_detail_scroll(struct ui *ui, long arg)
{
    ui_detail_scroll(ui, arg);
}

/* Show a view on top, or close it when it is the one showing. */
static void act_toggle_view(struct ui *ui, long arg)
{
    static const struct ui_view *const views[] = {&ui_tree_view, &ui_summary_view, &ui_help_view};
    const struct ui_view *v = views[arg];
    if (ui_current(ui) == v)
        ui_pop(ui);
    else
        ui_push(ui, v);
}

static void act_quit(struct ui *ui, long arg)
{
    if (arg || !ui->depth)
        ui->quit = true;
    else
        ui_pop(ui);
}

static void act_denials(struct ui *ui, long arg)
{
    (void)arg;
    ui->filter.decisions = ui->filter.decisions ? 0 : VW_REFUSED_MASK;
    ui_refilter(ui);
}

static void act_class(struct ui *ui, long arg)
{
    (void)arg;
    int c = ui->filter.cls + 1;
    ui->filter.cls = c >= VG_CLASS_NCLASSES ? -1 : c;
    ui_refilter(ui);
}

static void act_text_filter(struct ui *ui, long arg)
{
    (void)arg;
    char *s = ui_prompt(ui, "filter: ");
    if (!s)
        return;
    free(ui->filter.text);
    ui->filter.text = *s ? s : NULL;
    if (!*s)
        free(s);
    ui_refilter(ui);
}

static void act_clear(struct ui *ui, long arg)
{
    (void)arg;
    vw_filter_clear(&ui->filter);
    ui_refilter(ui);
}

static void jump(struct ui *ui, long row, const char *none)
{
    if (row < 0)
        ui_message(ui, true, "%s", none);
    else
        ui->cur = (size_t)row;
}

static void act_search_next(struct ui *ui, long dir)
{
    if (!ui->search) {
        ui_message(ui, false, "no search yet: / searches");
        return;
    }
    char none[300];
    snprintf(none, sizeof none, "not found: %s", ui->search);
    jump(ui, vw_find_text(ui->m, &ui->rows, ui_visible_rows(ui), ui->cur, (int)dir, ui->search),
         none);
}

static void act_search(struct ui *ui, long arg)
{
    (void)arg;
    char *s = ui_prompt(ui, "/");
    if (!s)
        return;
    if (*s) {
        free(ui->search);
        ui->search = s;
    } else {
        free(s);  /* empty: repeat the last search, like less */
    }
    act_search_next(ui, 1);
}

static void act_denial(struct ui *ui, long dir)
{
    jump(ui, vw_find_refused(ui->m, &ui->rows, ui_visible_rows(ui), ui->cur, (int)dir),
         "no denials shown");
}

static size_t cur_record(const struct ui *ui)
{
    return ui->rows.n && ui->cur < ui->rows.n ? ui->rows.v[ui->cur] : 0;
}

static void act_play(struct ui *ui, long arg)
{
    (void)arg;
    vw_replay_toggle(&ui->replay, ui->m, cur_record(ui), vg_now_mono_ns());
}

static void act_step(struct ui *ui, long arg)
{
    (void)arg;
    bool bottom = ui->cur + 1 >= ui_visible_rows(ui);
    vw_replay_step(&ui->replay, ui->m, cur_record(ui));
    if (bottom)
        ui->cur = SIZE_MAX;  /* the list clamps it to the last row */
}

static void act_speed(struct ui *ui, long dir)
{
    if (!vw_replay_faster(&ui->replay, (int)dir))
        ui_message(ui, false, "speed stays at %gx", vw_replay_speed(&ui->replay));
}

static void act_follow(struct ui *ui, long arg)
{
    (void)arg;
    ui->follow = !ui->follow;
    ui->last_poll = 0;  /* look at the file right away */
    ui_message(ui, false, "follow %s", ui->follow ? "on" : "off");
}

static void act_redraw(struct ui *ui, long arg)
{
    (void)arg;
    (void)ui;
    clearok(curscr, TRUE);
}

static const struct ui_key keymap[] = {
    {{'j', FK(KEY_DOWN)}, UI_SC_ANY, act_move, MV_LINE, "Moving", "next line"},
    {{'k', FK(KEY_UP)}, UI_SC_ANY, act_move, -MV_LINE, "Moving", "previous line"},
    {{FK(KEY_NPAGE), CTRL('f')}, UI_SC_ANY, act_move, MV_PAGE, "Moving", "next page"},
    {{FK(KEY_PPAGE), CTRL('b')}, UI_SC_ANY, act_move, -MV_PAGE, "Moving", "previous page"},
    {{'g', FK(KEY_HOME)}, UI_SC_ANY, act_move, -MV_END, "Moving", "first line"},
    {{'G', FK(KEY_END)}, UI_SC_ANY, act_move, MV_END, "Moving", "last line"},
    {{'l', FK(KEY_RIGHT)}, UI_SC_ANY, act_hscroll, 1, "Moving",
     "scroll long lines right (half a screen)"},
    {{'h', FK(KEY_LEFT)}, UI_SC_ANY, act_hscroll, -1, "Moving", "scroll long lines left"},
    {{'0'}, UI_SC_ANY, act_hscroll, 0, "Moving", "back to the start of the lines"},
    {{'\n', '\r', FK(KEY_ENTER)}, UI_SC_LIST, act_enter, 0, "Views",
     "open/close the detail pane of the selected event"},
    {{'\n', '\r', FK(KEY_ENTER)}, UI_SC_TREE, act_enter, 0, "Views",
     "show the selected process's events"},
    {{'J'}, UI_SC_LIST, act_detail_scroll, 1, "Views", "scroll the detail pane down"},
    {{'K'}, UI_SC_LIST, act_detail_scroll, -1, "Views", "scroll the detail pane up"},
    {{'p', '\t'}, UI_SC_ANY, act_toggle_view, 0, "Views", "process tree"},
    {{'s'}, UI_SC_ANY, act_toggle_view, 1, "Views", "summary: counts, paths, network, programs"},
    {{'?', FK(KEY_F(1))}, UI_SC_ANY, act_toggle_view, 2, "Views", "this help"},
    {{'q', 27}, UI_SC_ANY, act_quit, 0, "Views", "close the view on top; quit from the list"},
    {{'Q'}, UI_SC_ANY, act_quit, 1, "Views", "quit"},
    {{CTRL('l')}, UI_SC_ANY, act_redraw, 0, "Views", "redraw the screen"},
    {{'d'}, UI_SC_LIST, act_denials, 0, "Filter and search", "denials only (on/off)"},
    {{'c'}, UI_SC_LIST, act_class, 0, "Filter and search", "next class filter (all, read, ...)"},
    {{'f'}, UI_SC_LIST, act_text_filter, 0, "Filter and search",
     "filter on text in the event (empty clears)"},
    {{'x'}, UI_SC_LIST, act_clear, 0, "Filter and search", "clear every filter"},
    {{'/'}, UI_SC_LIST, act_search, 0, "Filter and search", "search forward for text"},
    {{'n'}, UI_SC_LIST, act_search_next, 1, "Filter and search", "next match"},
    {{'N'}, UI_SC_LIST, act_search_next, -1, "Filter and search", "previous match"},
    {{']'}, UI_SC_LIST, act_denial, 1, "Filter and search", "next denial"},
    {{'['}, UI_SC_LIST, act_denial, -1, "Filter and search", "previous denial"},
    {{' '}, UI_SC_LIST, act_play, 0, "Replay and follow",
     "replay from the selected event / pause / resume"},
    {{'.'}, UI_SC_LIST, act_step, 0, "Replay and follow", "reveal one more event"},
    {{'+', '='}, UI_SC_LIST, act_speed, 1, "Replay and follow", "replay faster (up to 64x)"},
    {{'-'}, UI_SC_LIST, act_speed, -1, "Replay and follow", "replay slower (down to 0.25x)"},
    {{'F'}, UI_SC_ANY, act_follow, 0, "Replay and follow",
     "follow the file as it grows (on/off)"},
};

static unsigned scope_of(const struct ui *ui)
{
    return ui_current(ui)->scope;
}

void ui_dispatch(struct ui *ui, int key)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(keymap); i++) {
        const struct ui_key *k = &keymap[i];
        if (!(k->scope & scope_of(ui)))
            continue;
        for (size_t j = 0; j < VG_ARRAY_LEN(k->keys) && k->keys[j]; j++)
            if (k->keys[j] == key) {
                k->fn(ui, k->arg);
                return;
            }
    }
    ui_message(ui, false, "no such key here (? for help)");
}

/* ---- help ---- */

static const struct {
    int key;
    const char *name;
} key_names[] = {
    {FK(KEY_DOWN), "Down"}, {FK(KEY_UP), "Up"}, {FK(KEY_NPAGE), "PgDn"},
    {FK(KEY_PPAGE), "PgUp"}, {FK(KEY_HOME), "Home"}, {FK(KEY_END), "End"},
    {FK(KEY_LEFT), "Left"}, {FK(KEY_RIGHT), "Right"},
    {FK(KEY_ENTER), NULL}, {'\r', NULL}, {'\n', "Enter"}, {'\t', "Tab"}, {' ', "Space"},
    {27, "Esc"}, {FK(KEY_F(1)), "F1"},
};

/* Name of a key for the help screen; NULL for an alias not worth listing. */
static const char *key_label(int key, char *buf, size_t n)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(key_names); i++)
        if (key_names[i].key == key)
            return key_names[i].name;
    if (key < 32)
        snprintf(buf, n, "Ctrl-%c", key + '@');
    else
        snprintf(buf, n, "%c", key);
    return buf;
}

static const char *scope_name(unsigned scope)
{
    switch (scope) {
    case UI_SC_LIST: return "events";
    case UI_SC_TREE: return "processes";
    case UI_SC_PAGE: return "summary, help";
    default: return "";
    }
}

void ui_help_lines(struct vw_lines *out)
{
    const char *group = NULL;
    for (size_t i = 0; i < VG_ARRAY_LEN(keymap); i++) {
        const struct ui_key *k = &keymap[i];
        if (!group || strcmp(group, k->group)) {
            if (group)
                vw_lines_add(out, VW_ST_NORMAL, 0, "%s", "");
            group = k->group;
            vw_lines_add(out, VW_ST_HEAD, 0, "%s", group);
        }
        char keys[64] = "", buf[16];
        for (size_t j = 0; j < VG_ARRAY_LEN(k->keys) && k->keys[j]; j++) {
            const char *name = key_label(k->keys[j], buf, sizeof buf);
            if (!name)
                continue;
            size_t len = strlen(keys);
            snprintf(keys + len, sizeof keys - len, "%s%s", len ? ", " : "", name);
        }
        const char *sc = scope_name(k->scope);
        vw_lines_add(out, VW_ST_NORMAL, 0, "  %-16s %s%s%s%s", keys, k->help, *sc ? "  (" : "",
                     sc, *sc ? ")" : "");
    }
    vw_lines_add(out, VW_ST_NORMAL, 0, "%s", "");
    vw_lines_add(out, VW_ST_DIM, 0, "Status bar: file, filter, shown/total events, position, "
                                    "follow/replay state, warnings.");
}
