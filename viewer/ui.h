/* ui.h: the ncurses viewer, internal to viewer/ui*.c.
 *
 * The screen is a stack of views (the event list at the bottom, then
 * overlays: processes, summary, help), a status bar and a message line.
 * A view is a struct of callbacks; every key goes through the one keymap
 * table in ui_keys.c, which is also where the help screen comes from. */
#ifndef VW_UI_H
#define VW_UI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curses.h>

#include "viewer/view_filter.h"
#include "viewer/lines.h"
#include "viewer/model.h"
#include "viewer/replay.h"

/* Function keys are tagged so they can never collide with a character. */
#define UI_FKEY 0x1000000
#define FK(k) (UI_FKEY | (k))
#define CTRL(c) ((c) & 0x1f)

/* Smallest usable terminal; below it only a message is shown. */
#define UI_MIN_COLS 60
#define UI_MIN_LINES 10

/* Which views a key works in. */
enum {
    UI_SC_LIST = 1,
    UI_SC_TREE = 2,
    UI_SC_PAGE = 4, /* summary, help */
    UI_SC_ANY = 7,
};

enum ui_pager_id { UI_PG_TREE, UI_PG_SUMMARY, UI_PG_HELP, UI_NPAGERS };

/* A scrolling list of text lines; with a cursor, one line is selected. */
struct ui_pager {
    struct vw_lines lines;
    size_t top, cur;
    bool cursor;
};

struct ui;

struct ui_view {
    const char *name;
    unsigned scope;                            /* UI_SC_* */
    int pager;                                 /* enum ui_pager_id, -1: none */
    void (*open)(struct ui *ui);               /* build content when shown */
    void (*draw)(struct ui *ui, int y, int h); /* paint screen rows [y, y+h) */
    void (*go)(struct ui *ui, long delta);     /* cursor/scroll; +-LONG_MAX = ends */
    void (*enter)(struct ui *ui);
    void (*grew)(struct ui *ui);               /* follow mode indexed new records */
    void (*position)(struct ui *ui, char *buf, size_t n); /* for the status bar */
};

struct ui {
    struct vw_model *m;
    struct vw_filter filter;
    struct vw_rows rows;
    struct vw_replay replay;
    bool follow, quit, color, utf8;
    /* event list */
    size_t cur, top;            /* selected row, first row on screen */
    int body_h;                 /* rows the current view had last time */
    bool detail;                /* detail pane open */
    size_t detail_rec, detail_top;
    int hscroll;                /* columns of long lines scrolled off to the left */
    struct vw_lines detail_lines;
    bool detail_valid;
    char *search;               /* last search text */
    /* overlays */
    const struct ui_view *stack[4];
    int depth;
    struct ui_pager pagers[UI_NPAGERS];
    /* message line */
    char msg[256];
    bool msg_warn;
    uint64_t last_poll;
    attr_t styles[VW_NSTYLES];  /* how each style paints (colour or not) */
};

extern const struct ui_view ui_list_view, ui_tree_view, ui_summary_view, ui_help_view;

const struct ui_view *ui_current(const struct ui *ui);
void ui_push(struct ui *ui, const struct ui_view *v);
void ui_pop(struct ui *ui);
void ui_message(struct ui *ui, bool warn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Rows currently shown in the list (replay hides the tail). */
size_t ui_visible_rows(const struct ui *ui);
/* Re-apply the filter, keeping the selection on the same record if it is
 * still shown. */
void ui_refilter(struct ui *ui);
void ui_draw(struct ui *ui);

/* ui_keys.c */
void ui_dispatch(struct ui *ui, int key);
void ui_help_lines(struct vw_lines *out);

/* ui_draw.c: painting helpers */
void ui_colors_init(struct ui *ui);
/* Text at (y, x), at most w columns, control bytes made visible; pad fills
 * the rest of the w columns with spaces.  Returns the columns used. */
int ui_put(const struct ui *ui, int y, int x, int w, const char *s, enum vw_style st,
           bool reverse, bool pad);
/* The same for a line that may be longer than the screen: its first
 * ui->hscroll columns are scrolled off to the left (Left/Right). */
int ui_put_long(const struct ui *ui, int y, int x, int w, const char *s, enum vw_style st,
                bool reverse, bool pad);

/* ui_pager.c */
void ui_pager_draw(struct ui *ui, struct ui_pager *p, int y, int h);
void ui_pager_move(struct ui *ui, struct ui_pager *p, long delta, int h);

/* ui_prompt.c: read a line on the message line; NULL when cancelled. */
char *ui_prompt(struct ui *ui, const char *label);

/* ui_list.c: scroll the detail pane. */
void ui_detail_scroll(struct ui *ui, long delta);

#endif
