/* ui_draw.c: colours and the one function that puts log text on screen.
 * Log strings come from the sandboxed program (paths, argv): they may hold
 * escape sequences, newlines or invalid UTF-8, so every byte that is not a
 * printable character (util/escape.h: controls, bidi controls, anything of
 * no width) is shown as \xNN instead of reaching the terminal. */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "util/escape.h"
#include "viewer/ui.h"

static const struct {
    short fg;        /* colour, -1 for none */
    attr_t color;    /* extra attributes with colour */
    attr_t mono;     /* attributes without colour */
} style_def[VW_NSTYLES] = {
    [VW_ST_NORMAL] = {-1, A_NORMAL, A_NORMAL},
    [VW_ST_HEAD] = {-1, A_BOLD, A_BOLD},
    [VW_ST_DIM] = {-1, A_DIM, A_DIM},
    [VW_ST_ALLOW] = {COLOR_GREEN, A_NORMAL, A_NORMAL},
    [VW_ST_DENY] = {COLOR_RED, A_BOLD, A_BOLD},
    [VW_ST_WOULD] = {COLOR_YELLOW, A_NORMAL, A_UNDERLINE},
    [VW_ST_KILL] = {COLOR_MAGENTA, A_BOLD, A_BOLD | A_UNDERLINE},
    [VW_ST_WOULDKILL] = {COLOR_MAGENTA, A_NORMAL, A_UNDERLINE},
    [VW_ST_WARN] = {COLOR_YELLOW, A_BOLD, A_BOLD},
};

void ui_colors_init(struct ui *ui)
{
    /* https://no-color.org: any non-empty NO_COLOR turns colour off. */
    const char *nc = getenv("NO_COLOR");
    ui->color = !(nc && *nc) && has_colors();
    if (ui->color) {
        start_color();
        use_default_colors();
    }
    for (int i = 0; i < VW_NSTYLES; i++) {
        ui->styles[i] = ui->color ? style_def[i].color : style_def[i].mono;
        if (ui->color && style_def[i].fg >= 0) {
            init_pair((short)(i + 1), style_def[i].fg, -1);
            ui->styles[i] |= COLOR_PAIR(i + 1);
        }
    }
}

/* Put one wide character if it fits; false when the line is full. */
static bool put_wc(wchar_t wc, int cw, int *used, int w)
{
    if (*used + cw > w)
        return false;
    addnwstr(&wc, 1);
    *used += cw;
    return true;
}

#define VG_ESCAPED_COLS 4 /* \xNN */

static bool put_escaped(unsigned char c, int *used, int w)
{
    static const char hex[] = "0123456789abcdef";
    if (*used + VG_ESCAPED_COLS > w)
        return false;
    char e[VG_ESCAPED_COLS + 1] = {'\\', 'x', hex[c >> 4], hex[c & 15], 0};
    addstr(e);
    *used += VG_ESCAPED_COLS;
    return true;
}

/* Columns one character takes as ui_put shows it, and its bytes (*k). */
static int char_cols(const char *s, size_t len, mbstate_t *ps, size_t *k)
{
    wchar_t wc;
    *k = mbrtowc(&wc, s, len, ps);
    int cw = (*k == 0 || *k > len) ? -1 : wcwidth(wc);
    if (!vg_esc_wchar_shown((wint_t)wc, cw)) {
        memset(ps, 0, sizeof *ps);
        *k = 1;
        return VG_ESCAPED_COLS;
    }
    return cw;
}

/* s without its first `skip` columns (a character cut in two goes too). */
static const char *skip_cols(const char *s, int skip)
{
    size_t len = strlen(s), k;
    mbstate_t ps;
    memset(&ps, 0, sizeof ps);
    for (int done = 0; len && done < skip; s += k, len -= k)
        done += char_cols(s, len, &ps, &k);
    return s;
}

int ui_put_long(const struct ui *ui, int y, int x, int w, const char *s, enum vw_style st,
                bool reverse, bool pad)
{
    return ui_put(ui, y, x, w, skip_cols(s, ui->hscroll), st, reverse, pad);
}

int ui_put(const struct ui *ui, int y, int x, int w, const char *s, enum vw_style st,
           bool reverse, bool pad)
{
    if (w <= 0 || y < 0 || y >= LINES || x >= COLS)
        return 0;
    if (x + w > COLS)
        w = COLS - x;
    attrset(ui->styles[st] | (reverse ? A_REVERSE : A_NORMAL));
    move(y, x);
    int used = 0;
    size_t len = strlen(s);
    mbstate_t ps;
    memset(&ps, 0, sizeof ps);
    while (len) {
        wchar_t wc;
        size_t k = mbrtowc(&wc, s, len, &ps);
        int cw = (k == 0 || k > len) ? -1 : wcwidth(wc);
        bool ok;
        if (!vg_esc_wchar_shown((wint_t)wc, cw)) {
            memset(&ps, 0, sizeof ps);
            ok = put_escaped((unsigned char)*s, &used, w);
            k = 1;
        } else {
            ok = put_wc(wc, cw, &used, w);
        }
        if (!ok)
            break;
        s += k;
        len -= k;
    }
    for (; pad && used < w; used++)
        addch(' ');
    attrset(A_NORMAL);
    return used;
}
