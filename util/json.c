/* json.c: see json.h.  Strings are emitted as valid JSON even when the input
 * is not valid UTF-8: invalid bytes become U+FFFD so that jq never chokes on a
 * path a candidate made up. */
#include "util/json.h"

#include "util/escape.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void vg_json_init(struct vg_json *j, struct vg_buf *out, bool pretty)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    j->pretty = pretty;
}

static void indent(struct vg_json *j)
{
    if (!j->pretty)
        return;
    vg_buf_puts(j->out, "\n");
    for (int i = 0; i < j->depth; i++)
        vg_buf_puts(j->out, "  ");
}

/* Called before every value or key: emits the separating comma. */
static void pre_value(struct vg_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth > 0) {
        if (j->need_comma[j->depth])
            vg_buf_puts(j->out, ",");
        j->need_comma[j->depth] = true;
        indent(j);
    }
}

static void open_(struct vg_json *j, const char *c)
{
    pre_value(j);
    vg_buf_puts(j->out, c);
    if (j->depth < 63)
        j->depth++;
    j->need_comma[j->depth] = false;
}

static void close_(struct vg_json *j, const char *c)
{
    bool had = j->need_comma[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (had)
        indent(j);
    vg_buf_puts(j->out, c);
}

void vg_json_obj_begin(struct vg_json *j) { open_(j, "{"); }
void vg_json_obj_end(struct vg_json *j) { close_(j, "}"); }
void vg_json_arr_begin(struct vg_json *j) { open_(j, "["); }
void vg_json_arr_end(struct vg_json *j) { close_(j, "]"); }

static void put_escaped(struct vg_buf *b, const char *s, size_t n);

void vg_json_key(struct vg_json *j, const char *key)
{
    pre_value(j);
    put_escaped(j->out, key, strlen(key));
    vg_buf_puts(j->out, j->pretty ? ": " : ":");
    j->after_key = true;
}

/* Length of a valid UTF-8 sequence at p (max n bytes), or 0 if invalid;
 * its code point in *out. */
static size_t utf8_len(const unsigned char *p, size_t n, uint32_t *out)
{
    unsigned char c = p[0];
    size_t len;
    uint32_t min;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0) { len = 2; min = 0x80; }
    else if ((c & 0xf0) == 0xe0) { len = 3; min = 0x800; }
    else if ((c & 0xf8) == 0xf0) { len = 4; min = 0x10000; }
    else return 0;
    if (len > n)
        return 0;
    uint32_t cp = c & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    *out = cp;
    return len;
}

static void put_escaped(struct vg_buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    vg_buf_puts(b, "\"");
    size_t i = 0;
    while (i < n) {
        /* Plain printable ASCII goes out in one piece. */
        size_t run = i;
        while (run < n && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' && p[run] != '\\')
            run++;
        if (run > i) {
            vg_buf_put(b, p + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            vg_buf_put(b, e, 2);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': vg_buf_puts(b, "\\n"); break;
            case '\t': vg_buf_puts(b, "\\t"); break;
            case '\r': vg_buf_puts(b, "\\r"); break;
            default: vg_buf_printf(b, "\\u%04x", c);
            }
            i++;
        } else {
            uint32_t cp = 0;
            size_t l = utf8_len(p + i, n - i, &cp);
            if (l == 0) {
                vg_buf_puts(b, "\\ufffd");
                i++;
            } else if (vg_esc_cp_unsafe(cp)) {
                /* the same string to a JSON reader, nothing to a terminal */
                vg_buf_printf(b, "\\u%04x", (unsigned)cp);
                i += l;
            } else {
                vg_buf_put(b, p + i, l);
                i += l;
            }
        }
    }
    vg_buf_puts(b, "\"");
}

void vg_json_strn(struct vg_json *j, const char *s, size_t n)
{
    pre_value(j);
    put_escaped(j->out, s, n);
}

void vg_json_str(struct vg_json *j, const char *s)
{
    if (!s) {
        vg_json_null(j);
        return;
    }
    pre_value(j);
    put_escaped(j->out, s, strlen(s));
}

/* Decimal digits without printf: numbers are most of a JSON Lines log. */
static void put_uint(struct vg_buf *b, uint64_t v, bool neg)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (neg)
        tmp[--i] = '-';
    vg_buf_put(b, tmp + i, sizeof tmp - i);
}

void vg_json_int(struct vg_json *j, int64_t v)
{
    pre_value(j);
    put_uint(j->out, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, v < 0);
}

void vg_json_uint(struct vg_json *j, uint64_t v)
{
    pre_value(j);
    put_uint(j->out, v, false);
}

void vg_json_number_text(struct vg_json *j, const char *text)
{
    pre_value(j);
    vg_buf_puts(j->out, text);
}

void vg_json_double(struct vg_json *j, double v)
{
    pre_value(j);
    if (!isfinite(v))
        vg_buf_puts(j->out, "null");
    else
        vg_buf_printf(j->out, "%.6f", v);
}

void vg_json_bool(struct vg_json *j, bool v)
{
    pre_value(j);
    vg_buf_puts(j->out, v ? "true" : "false");
}

void vg_json_null(struct vg_json *j)
{
    pre_value(j);
    vg_buf_puts(j->out, "null");
}
