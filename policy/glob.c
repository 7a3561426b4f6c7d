/* glob.c: see glob.h.  Matching works on components: a '**' component is to
 * path components what '*' is to characters, so both levels use the same
 * greedy match with one backtrack point, which is linear-ish and cannot blow
 * up on hostile patterns the way naive recursion does. */
#include "policy/glob.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

size_t vg_glob_set_end(const char *p, size_t i, size_t len)
{
    size_t j = i + 1;
    if (j < len && (p[j] == '!' || p[j] == '^'))
        j++;
    if (j < len && p[j] == ']')
        j++;
    for (; j < len && p[j] != '/'; j++)
        if (p[j] == ']')
            return j + 1;
    return 0;
}

static bool fail(size_t *bad, const char **msg, size_t at, const char *m)
{
    *bad = at;
    *msg = m;
    return false;
}

/* '*' runs: one star is a component wildcard, two must be a whole
 * component, three or more mean nothing. */
static bool check_stars(const char *p, size_t i, size_t *run, size_t *bad,
                        const char **msg)
{
    size_t n = 0;
    while (p[i + n] == '*')
        n++;
    *run = n;
    if (n >= 3)
        return fail(bad, msg, i, "'***' is not a pattern (use * or **)");
    if (n == 2 && (i == 0 || p[i - 1] != '/' || (p[i + 2] && p[i + 2] != '/')))
        return fail(bad, msg, i, "'**' must be a whole path component (as in /a/**/b)");
    return true;
}

bool vg_glob_check(const char *p, size_t *bad, const char **msg)
{
    size_t len = strlen(p), brace = (size_t)-1;
    for (size_t i = 0; i < len;) {
        size_t run, e;
        switch (p[i]) {
        case '\\':
            if (i + 1 >= len)
                return fail(bad, msg, i, "trailing '\\' escapes nothing");
            if (p[i + 1] == '/')
                return fail(bad, msg, i, "'/' cannot be escaped");
            i += 2;
            break;
        case '[':
            if (!(e = vg_glob_set_end(p, i, len)))
                return fail(bad, msg, i, "unclosed '[' (or a '/' inside [...])");
            i = e;
            break;
        case '{':
            if (brace != (size_t)-1)
                return fail(bad, msg, i, "nested braces are not supported");
            brace = i++;
            break;
        case '}':
            if (brace == (size_t)-1)
                return fail(bad, msg, i, "unmatched '}'");
            brace = (size_t)-1;
            i++;
            break;
        case '*':
            if (!check_stars(p, i, &run, bad, msg))
                return false;
            i += run;
            break;
        default:
            i++;
        }
    }
    if (brace != (size_t)-1)
        return fail(bad, msg, brace, "unclosed '{'");
    return true;
}

/* Skip an escape or a [...] set at i; returns the next index to look at. */
static size_t skip_special(const char *p, size_t i, size_t len)
{
    if (p[i] == '\\' && i + 1 < len)
        return i + 2;
    if (p[i] == '[') {
        size_t e = vg_glob_set_end(p, i, len);
        return e ? e : i + 1;
    }
    return i + 1;
}

static bool expand_into(const char *p, char ***out, uint32_t *n)
{
    size_t len = strlen(p), open = len, close = len;
    for (size_t i = 0; i < len; i = skip_special(p, i, len))
        if (p[i] == '{') {
            open = i;
            break;
        }
    if (open == len) {
        if (*n >= VG_GLOB_MAX_ALTS)
            return false;
        *out = vg_xrealloc(*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = vg_xstrdup(p);
        return true;
    }
    for (size_t i = open + 1; i < len; i = skip_special(p, i, len))
        if (p[i] == '}') {
            close = i;
            break;
        }
    size_t start = open + 1;
    for (size_t i = start; i <= close; i = (i < close) ? skip_special(p, i, len) : i + 1) {
        if (i < close && p[i] != ',')
            continue;
        char *alt = vg_xasprintf("%.*s%.*s%s", (int)open, p, (int)(i - start),
                                 p + start, p + close + (close < len));
        bool ok = expand_into(alt, out, n);
        free(alt);
        if (!ok)
            return false;
        start = i + 1;
    }
    return true;
}

bool vg_glob_expand(const char *pat, char ***out, uint32_t *n)
{
    *out = NULL;
    *n = 0;
    if (expand_into(pat, out, n))
        return true;
    for (uint32_t i = 0; i < *n; i++)
        free((*out)[i]);
    free(*out);
    *out = NULL;
    *n = 0;
    return false;
}

size_t vg_glob_literal_len(const char *p)
{
    return strcspn(p, "*?[\\");
}

void vg_glob_put_literal(struct vg_buf *b, const char *s)
{
    for (; *s; s++) {
        if (strchr("*?[]{}\\", *s))
            vg_buf_put(b, "\\", 1);
        vg_buf_put(b, s, 1);
    }
}

void vg_glob_compile(const char *text, struct vg_glob *g)
{
    memset(g, 0, sizeof *g);
    g->text = vg_xstrdup(text);
    vg_path_squash(g->text);
    const char *t = g->text;
    size_t len = strlen(t), lit = vg_glob_literal_len(t);
    g->exact = lit == len;
    g->prefix_len = lit;
    /* a trailing slash-star-star also matches the directory itself, so the
     * slash before the stars is not part of the required prefix */
    if (!g->exact && t[lit] == '*' && t[lit + 1] == '*' && lit > 0)
        g->prefix_len = lit - 1;
    g->comps = vg_xcalloc(len / 2 + 1, sizeof *g->comps);
    size_t n;
    for (const char *p = vg_path_comp(t, &n); p; p = vg_path_comp(p + n, &n)) {
        struct vg_glob_comp *c = &g->comps[g->ncomps++];
        c->dstar = (n == 2 && p[0] == '*' && p[1] == '*');
        c->off = (uint32_t)(p - t);
        c->len = c->dstar ? 0 : (uint32_t)n;
    }
}

void vg_glob_free(struct vg_glob *g)
{
    free(g->text);
    free(g->comps);
    memset(g, 0, sizeof *g);
}

bool vg_spath_split(struct vg_spath *sp, char *buf, const char *path)
{
    size_t len = strlen(path);
    if (len > VG_SPATH_MAX)
        return false;
    memcpy(buf, path, len + 1);
    vg_path_squash(buf);
    sp->s = buf;
    sp->len = strlen(buf);
    sp->n = 0;
    size_t n;
    for (const char *c = vg_path_comp(buf, &n); c; c = vg_path_comp(c + n, &n)) {
        sp->off[sp->n] = (uint16_t)(c - buf);
        sp->clen[sp->n++] = (uint16_t)n;
    }
    return true;
}

/* The next range [*lo, *hi] of the body of the set ending at end, from
 * p[*j] (advanced past it): `]` first is itself, `a-z` a range, a `-`
 * first or last itself.  false once the body is done. */
static bool set_range(const char *p, size_t *j, size_t end, bool first, unsigned char *lo,
                      unsigned char *hi)
{
    if (*j >= end - 1 || (p[*j] == ']' && !first))
        return false;
    *lo = *hi = (unsigned char)p[*j];
    if (*j + 2 < end - 1 && p[*j + 1] == '-') {
        *hi = (unsigned char)p[*j + 2];
        *j += 3;
    } else {
        (*j)++;
    }
    return true;
}

static bool set_negated(const char *p, size_t *j)
{
    bool neg = p[*j] == '!' || p[*j] == '^';
    *j += neg;
    return neg;
}

void vg_glob_set_bytes(const char *p, size_t i, size_t end, unsigned char set[VG_GLOB_SET_BYTES])
{
    size_t j = i + 1;
    bool neg = set_negated(p, &j);
    unsigned char lo, hi;
    memset(set, 0, VG_GLOB_SET_BYTES);
    for (bool first = true; set_range(p, &j, end, first, &lo, &hi); first = false)
        for (unsigned c = lo; c <= hi; c++)
            set[c >> 3] |= (unsigned char)(1u << (c & 7));
    for (unsigned k = 0; neg && k < VG_GLOB_SET_BYTES; k++)
        set[k] = (unsigned char)~set[k];
}

/* Does the set at p[*i] (a '[') contain c?  Advances *i past the set. */
static bool set_has(const char *p, size_t plen, size_t *i, char c)
{
    size_t j = *i + 1, end = vg_glob_set_end(p, *i, plen);
    if (!end) {             /* unchecked input: '[' is itself */
        (*i)++;
        return c == '[';
    }
    bool neg = set_negated(p, &j), in = false;
    unsigned char lo, hi;
    for (bool first = true; !in && set_range(p, &j, end, first, &lo, &hi); first = false)
        in = (unsigned char)c >= lo && (unsigned char)c <= hi;
    *i = end;
    return in != neg;
}

/* Does the single pattern element at p[*i] match c?  Advances *i. */
static bool one_matches(const char *p, size_t plen, size_t *i, char c)
{
    switch (p[*i]) {
    case '?':
        (*i)++;
        return true;
    case '[':
        return set_has(p, plen, i, c);
    case '\\':
        if (*i + 1 < plen) {
            *i += 2;
            return p[*i - 1] == c;
        }
        /* fall through */
    default:
        return p[(*i)++] == c;
    }
}

/* One component against one path component: '*' with one backtrack point. */
static bool comp_matches(const char *p, size_t plen, const char *s, size_t slen)
{
    size_t pi = 0, si = 0, star = (size_t)-1, star_si = 0;
    while (si < slen) {
        size_t next = pi;
        if (pi < plen && p[pi] == '*') {
            star = ++pi;
            star_si = si;
            continue;
        }
        if (pi < plen && one_matches(p, plen, &next, s[si])) {
            pi = next;
            si++;
            continue;
        }
        if (star == (size_t)-1)
            return false;
        pi = star;
        si = ++star_si;
    }
    while (pi < plen && p[pi] == '*')
        pi++;
    return pi == plen;
}

bool vg_glob_match(const struct vg_glob *g, const struct vg_spath *sp)
{
    if (sp->len < g->prefix_len || memcmp(sp->s, g->text, g->prefix_len))
        return false;
    if (g->exact)
        return sp->len == g->prefix_len;
    uint32_t pi = 0, si = 0, star = UINT32_MAX, star_si = 0;
    while (si < sp->n) {
        const struct vg_glob_comp *c = &g->comps[pi < g->ncomps ? pi : 0];
        if (pi < g->ncomps && c->dstar) {
            star = ++pi;
            star_si = si;
            continue;
        }
        if (pi < g->ncomps && comp_matches(g->text + c->off, c->len,
                                           sp->s + sp->off[si], sp->clen[si])) {
            pi++;
            si++;
            continue;
        }
        if (star == UINT32_MAX)
            return false;
        pi = star;
        si = ++star_si;
    }
    while (pi < g->ncomps && g->comps[pi].dstar)
        pi++;
    return pi == g->ncomps;
}

/* Can some path that is d or below d (d's components from si on, then
 * anything) match the pattern from component pi on? */
static bool may_match_below(const struct vg_glob *g, uint32_t pi, const struct vg_spath *d,
                            uint32_t si)
{
    while (si < d->n) {
        if (pi == g->ncomps)
            return false;            /* the pattern ends above d */
        const struct vg_glob_comp *c = &g->comps[pi];
        if (c->dstar)
            return may_match_below(g, pi + 1, d, si) || may_match_below(g, pi, d, si + 1);
        if (!comp_matches(g->text + c->off, c->len, d->s + d->off[si], d->clen[si]))
            return false;
        pi++;
        si++;
    }
    /* d is used up: what is left of the pattern can name something below
     * it (every component pattern matches some name). */
    return true;
}

enum vg_glob_rel vg_glob_tree_relation(const struct vg_glob *g, const struct vg_spath *d)
{
    /* P/ ** matches x when some leading part of x matches P; if d matches,
     * a leading part of d does, and so of every path below d. */
    if (g->ncomps > 0 && g->comps[g->ncomps - 1].dstar && vg_glob_match(g, d))
        return VG_GLOB_ALL;
    return may_match_below(g, 0, d, 0) ? VG_GLOB_SOME : VG_GLOB_NONE;
}
