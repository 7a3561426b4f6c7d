/* escape.c: see escape.h. */
#include "util/escape.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#define ASCII_FIRST_PRINTABLE 0x20
#define ASCII_DEL 0x7f

static bool plain(unsigned char c, enum vg_esc_form form)
{
    if (c < ASCII_FIRST_PRINTABLE || c >= ASCII_DEL)
        return false;
    return form == VG_ESC_TEXT || (c != '"' && c != '\\');
}

void vg_esc_put(struct vg_buf *b, const char *s, size_t n, enum vg_esc_form form)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        const unsigned char *run = p; /* copy plain bytes in one go */
        while (p < end && plain(*p, form))
            p++;
        vg_buf_put(b, run, (size_t)(p - run));
        if (p == end)
            return;
        if (*p == '"' || *p == '\\')
            vg_buf_printf(b, "\\%c", *p);
        else if (*p == '\n')
            vg_buf_puts(b, "\\n");
        else if (*p == '\t')
            vg_buf_puts(b, "\\t");
        else
            vg_buf_printf(b, "\\x%02x", *p);
        p++;
    }
}

void vg_esc_puts(struct vg_buf *b, const char *s, enum vg_esc_form form)
{
    if (!s)
        s = "?";
    vg_esc_put(b, s, strlen(s), form);
}

char *vg_esc_dup(const char *s)
{
    struct vg_buf b = {0};
    vg_esc_puts(&b, s, VG_ESC_FIELD);
    vg_buf_put(&b, "", 1); /* an empty string is still a string */
    return b.data;
}

void vg_say(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg;
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort(); /* as vg_xasprintf: no memory, no supervisor */
    struct vg_buf b = {0};
    vg_esc_put(&b, msg, (size_t)n, VG_ESC_TEXT);
    vg_buf_puts(&b, "\n");
    free(msg);
    fwrite(b.data, 1, b.len, f);
    fflush(f);
    vg_buf_free(&b);
}

/* Bidi embeddings, overrides, isolates and marks (Unicode's Bidi_Control
 * property): they reorder what follows on the line, so the viewer shows
 * them escaped even should a locale give them a width. */
static const struct {
    uint32_t first, last;
} bidi_controls[] = {
    {0x061c, 0x061c}, {0x200e, 0x200f}, {0x202a, 0x202e}, {0x2066, 0x2069},
};

#define C1_FIRST 0x80
#define C1_LAST 0x9f
#define LINE_SEPARATOR 0x2028
#define PARAGRAPH_SEPARATOR 0x2029

bool vg_esc_cp_unsafe(uint32_t cp)
{
    if ((cp >= C1_FIRST && cp <= C1_LAST) || cp == LINE_SEPARATOR || cp == PARAGRAPH_SEPARATOR)
        return true;
    for (size_t i = 0; i < VG_ARRAY_LEN(bidi_controls); i++)
        if (cp >= bidi_controls[i].first && cp <= bidi_controls[i].last)
            return true;
    return false;
}

bool vg_esc_wchar_shown(wint_t wc, int width)
{
    return width > 0 && !iswcntrl(wc) && wc != ASCII_DEL && !vg_esc_cp_unsafe((uint32_t)wc);
}
