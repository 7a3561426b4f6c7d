/* html.c: see html.h. */
#include "util/html.h"

#include <string.h>

#include "util/escape.h"

void vg_html_put(struct vg_buf *b, const char *s, size_t n)
{
    struct vg_buf plain = {0};
    vg_esc_put(&plain, s, n, VG_ESC_TEXT);
    for (size_t i = 0; i < plain.len; i++) {
        switch (plain.data[i]) {
        case '&': vg_buf_puts(b, "&amp;"); break;
        case '<': vg_buf_puts(b, "&lt;"); break;
        case '>': vg_buf_puts(b, "&gt;"); break;
        case '"': vg_buf_puts(b, "&quot;"); break;
        case '\'': vg_buf_puts(b, "&#39;"); break;
        default: vg_buf_put(b, &plain.data[i], 1); break;
        }
    }
    vg_buf_free(&plain);
}

void vg_html_puts(struct vg_buf *b, const char *s)
{
    if (!s)
        s = "?";
    vg_html_put(b, s, strlen(s));
}
