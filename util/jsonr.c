/* jsonr.c: see jsonr.h.  A recursive-descent parser over a bounded input;
 * recursion depth is capped, so hostile input cannot exhaust the stack. */
#include "util/jsonr.h"
#include "util/utf8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* U+FFFD, what VG_JV_NUL_AS_FFFD makes of an escaped NUL */
#define REPLACEMENT_CHAR 0xfffd

struct parser {
    const char *p, *start, *end;
    struct vg_err *err;
    bool failed;
    unsigned flags;          /* VG_JV_* */
};

static void fail(struct parser *ps, const char *what)
{
    if (!ps->failed)
        vg_errf(ps->err, "byte %zu: %s", (size_t)(ps->p - ps->start) + 1, what); /* 1-based */
    ps->failed = true;
}

static void skip_ws(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static bool literal(struct parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n)) {
        fail(ps, "not a JSON value");
        return false;
    }
    ps->p += n;
    return true;
}

static long hex4(struct parser *ps)
{
    if (ps->end - ps->p < 4) {
        fail(ps, "short \\u escape");
        return -1;
    }
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = vg_hex_digit(ps->p[i]);
        if (h < 0) {
            fail(ps, "bad \\u escape");
            return -1;
        }
        v = v * 16 + h;
    }
    ps->p += 4;
    return v;
}

static void put_utf8(struct vg_buf *b, unsigned long cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    vg_buf_put(b, u, n);
}

/* After a backslash. */
static bool escape(struct parser *ps, struct vg_buf *b)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (ps->p >= ps->end) {
        fail(ps, "unterminated string");
        return false;
    }
    const char *k = strchr(from, *ps->p);
    if (k && *ps->p) {
        vg_buf_put(b, &to[k - from], 1);
        ps->p++;
        return true;
    }
    if (*ps->p != 'u') {
        fail(ps, "bad escape in string");
        return false;
    }
    ps->p++;
    long cp = hex4(ps);
    if (cp < 0)
        return false;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
            fail(ps, "unpaired surrogate in string");
            return false;
        }
        ps->p += 2;
        long lo = hex4(ps);
        if (lo < 0xdc00 || lo > 0xdfff) {
            fail(ps, "unpaired surrogate in string");
            return false;
        }
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    } else if (cp == 0 && (ps->flags & VG_JV_NUL_AS_FFFD)) {
        cp = REPLACEMENT_CHAR;
    } else if ((cp >= 0xdc00 && cp <= 0xdfff) || cp == 0) {
        fail(ps, cp ? "unpaired surrogate in string" : "NUL in string");
        return false;
    }
    put_utf8(b, (unsigned long)cp);
    return true;
}

static char *string(struct parser *ps)
{
    ps->p++; /* the opening quote */
    struct vg_buf b = {0};
    vg_buf_put(&b, "", 0);
    while (ps->p < ps->end && *ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20 || c == 0) {
            fail(ps, "control character in string");
            break;
        }
        if (c == '\\') {
            ps->p++;
            if (!escape(ps, &b))
                break;
            continue;
        }
        vg_buf_put(&b, ps->p++, 1);
    }
    if (!ps->failed && ps->p >= ps->end)
        fail(ps, "unterminated string");
    if (ps->failed) {
        vg_buf_free(&b);
        return NULL;
    }
    ps->p++; /* the closing quote */
    return b.data;
}

static char *number(struct parser *ps)
{
    const char *s = ps->p;
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    const char *digits = ps->p;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
        ps->p++;
    if (ps->p == digits || (*digits == '0' && ps->p - digits > 1)) {
        fail(ps, "bad number");
        return NULL;
    }
    if (ps->p < ps->end && *ps->p == '.') {
        const char *f = ++ps->p;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
        if (ps->p == f) {
            fail(ps, "bad number");
            return NULL;
        }
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        const char *e = ps->p;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
        if (ps->p == e) {
            fail(ps, "bad number");
            return NULL;
        }
    }
    return vg_xstrndup(s, (size_t)(ps->p - s));
}

static bool value(struct parser *ps, struct vg_jv *v, int depth);

static void push(struct vg_jv *v, size_t *cap)
{
    if (v->n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        v->items = vg_xrealloc(v->items, *cap * sizeof *v->items);
        if (v->type == VG_JOBJ)
            v->keys = vg_xrealloc(v->keys, *cap * sizeof *v->keys);
    }
    memset(&v->items[v->n], 0, sizeof v->items[v->n]);
}

/* Arrays and objects: items until the closing bracket. */
static bool container(struct parser *ps, struct vg_jv *v, int depth)
{
    char close = v->type == VG_JARR ? ']' : '}';
    size_t cap = 0;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return true;
    }
    for (;;) {
        skip_ws(ps);
        push(v, &cap);
        if (v->type == VG_JOBJ) {
            if (ps->p >= ps->end || *ps->p != '"') {
                fail(ps, "expected a string key");
                return false;
            }
            char *key = string(ps);
            if (!key)
                return false;
            v->keys[v->n] = key;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                v->n++; /* so that the key is freed */
                fail(ps, "expected ':'");
                return false;
            }
            ps->p++;
        }
        bool ok = value(ps, &v->items[v->n], depth + 1);
        v->n++;
        if (!ok)
            return false;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return true;
        }
        fail(ps, v->type == VG_JARR ? "expected ',' or ']'" : "expected ',' or '}'");
        return false;
    }
}

static bool value(struct parser *ps, struct vg_jv *v, int depth)
{
    memset(v, 0, sizeof *v);
    if (depth > VG_JSON_MAX_DEPTH) {
        fail(ps, "nested too deeply");
        return false;
    }
    skip_ws(ps);
    if (ps->p >= ps->end) {
        fail(ps, "expected a value");
        return false;
    }
    switch (*ps->p) {
    case '{':
        v->type = VG_JOBJ;
        return container(ps, v, depth);
    case '[':
        v->type = VG_JARR;
        return container(ps, v, depth);
    case '"':
        v->type = VG_JSTR;
        return (v->s = string(ps)) != NULL;
    case 't':
        v->type = VG_JBOOL;
        v->b = true;
        return literal(ps, "true");
    case 'f':
        v->type = VG_JBOOL;
        return literal(ps, "false");
    case 'n':
        v->type = VG_JNULL;
        return literal(ps, "null");
    default:
        v->type = VG_JNUM;
        return (v->s = number(ps)) != NULL;
    }
}

static void free_inside(struct vg_jv *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free_inside(&v->items[i]);
        if (v->type == VG_JOBJ)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->s);
}

void vg_jv_free(struct vg_jv *v)
{
    if (!v)
        return;
    free_inside(v);
    free(v);
}

struct vg_jv *vg_jv_parse(const char *text, size_t len, struct vg_err *err)
{
    return vg_jv_parse_flags(text, len, 0, err);
}

struct vg_jv *vg_jv_parse_flags(const char *text, size_t len, unsigned flags, struct vg_err *err)
{
    struct parser ps = {text, text, text + len, err, false, flags};
    struct vg_jv *v = vg_xcalloc(1, sizeof *v);
    /* JSON text is UTF-8 (RFC 8259); bytes that are not would reach argv
     * and paths as something no editor shows. */
    size_t good = vg_utf8_prefix(text, len);
    if (good < len) {
        ps.p = text + good;
        fail(&ps, "invalid UTF-8");
    } else if (value(&ps, v, 0)) {
        skip_ws(&ps);
        if (ps.p != ps.end)
            fail(&ps, "text after the value");
    }
    if (ps.failed) {
        vg_jv_free(v);
        return NULL;
    }
    return v;
}

const struct vg_jv *vg_jv_get(const struct vg_jv *v, const char *key)
{
    if (!v || v->type != VG_JOBJ)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key))
            return &v->items[i];
    return NULL;
}

const char *vg_jv_str(const struct vg_jv *v, const char *key)
{
    const struct vg_jv *m = vg_jv_get(v, key);
    return m && m->type == VG_JSTR ? m->s : NULL;
}

void vg_jv_write(const struct vg_jv *v, struct vg_json *j)
{
    switch (v->type) {
    case VG_JNULL:
        vg_json_null(j);
        break;
    case VG_JBOOL:
        vg_json_bool(j, v->b);
        break;
    case VG_JNUM:
        vg_json_number_text(j, v->s);
        break;
    case VG_JSTR:
        vg_json_str(j, v->s);
        break;
    case VG_JARR:
        vg_json_arr_begin(j);
        for (size_t i = 0; i < v->n; i++)
            vg_jv_write(&v->items[i], j);
        vg_json_arr_end(j);
        break;
    case VG_JOBJ:
        vg_json_obj_begin(j);
        for (size_t i = 0; i < v->n; i++) {
            vg_json_key(j, v->keys[i]);
            vg_jv_write(&v->items[i], j);
        }
        vg_json_obj_end(j);
        break;
    }
}
