/* ui_prompt.c: a one-line editor on the message line, for / and f.
 * Enter accepts, Esc or Ctrl-C cancels, Backspace and Ctrl-U edit. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "viewer/ui.h"

#define PROMPT_MAX 256

static void draw_prompt(struct ui *ui, const char *label, const char *text)
{
    ui_draw(ui);
    int x = ui_put(ui, LINES - 1, 0, COLS, label, VW_ST_HEAD, false, false);
    x += ui_put(ui, LINES - 1, x, COLS - x - 1, text, VW_ST_NORMAL, false, false);
    move(LINES - 1, x);
    clrtoeol();
    curs_set(1);
}

/* Remove the last (possibly multibyte) character. */
static void backspace(char *buf, size_t *len)
{
    while (*len) {
        unsigned char c = (unsigned char)buf[--*len];
        if ((c & 0xc0) != 0x80)
            break;
    }
    buf[*len] = 0;
}

char *ui_prompt(struct ui *ui, const char *label)
{
    char buf[PROMPT_MAX] = "";
    size_t len = 0;
    timeout(-1);
    for (;;) {
        draw_prompt(ui, label, buf);
        wint_t ch;
        int rc = get_wch(&ch);
        if (rc == ERR)
            continue;
        if (rc == KEY_CODE_YES) {
            if (ch == KEY_BACKSPACE)
                backspace(buf, &len);
            else if (ch == KEY_ENTER)
                break;
            continue;
        }
        if (ch == '\n' || ch == '\r')
            break;
        if (ch == 27 || ch == CTRL('c') || ch == CTRL('g')) {
            curs_set(0);
            return NULL;
        }
        if (ch == 127 || ch == CTRL('h')) {
            backspace(buf, &len);
        } else if (ch == CTRL('u')) {
            len = 0;
            buf[0] = 0;
        } else if (ch >= ' ') {
            char mb[MB_LEN_MAX];
            mbstate_t ps;
            memset(&ps, 0, sizeof ps);
            size_t k = wcrtomb(mb, (wchar_t)ch, &ps);
            if (k != (size_t)-1 && len + k < sizeof buf) {
                memcpy(buf + len, mb, k);
                len += k;
                buf[len] = 0;
            }
        }
    }
    curs_set(0);
    return vg_xstrdup(buf);
}
