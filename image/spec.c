/* spec.c: a build spec's text -> struct vg_spec.  One statement a line,
 * words split by blanks, '#' at the start of a word begins a comment (as
 * in a policy).  Parsing stops at the first error, "FILE:LINE: problem".
 * Every word that reaches mmdebstrap's command line is checked here
 * against what Debian allows, so none can read as an option of its. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/spec.h"
#include "util/path.h"

#define MAX_WORDS 256    /* on one line: a long packages line, split it */
#define NAME_MAX_LEN 128 /* a suite, a variant, a package name or version */
#define URL_MAX_LEN 1024
#define PATH_MAX_LEN 4096

struct parser {
    const char *file;
    unsigned line;
    char *w[MAX_WORDS];
    size_t nw;
    unsigned seen_suite, seen_mirror, seen_variant; /* the line that set it */
    struct vg_spec *s;
    struct vg_err *err;
};

static int perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(struct parser *p, const char *fmt, ...)
{
    char m[sizeof p->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    vg_errf(p->err, "%s:%u: %s", p->file, p->line, m);
    return -1;
}

/* Split line (modified in place) into p->w. */
static int split(struct parser *p, char *line)
{
    p->nw = 0;
    for (char *c = line; *c;) {
        c += strspn(c, " \t\r");
        if (!*c || *c == '#')
            break;
        if (p->nw == MAX_WORDS)
            return perr(p, "more than %d words on one line (split it)", MAX_WORDS);
        p->w[p->nw++] = c;
        c += strcspn(c, " \t\r");
        if (*c)
            *c++ = '\0';
    }
    return 0;
}

static bool all_of(const char *s, const char *set)
{
    return strspn(s, set) == strlen(s);
}

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define UPPER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define DIGIT "0123456789"

/* A suite or codename: bookworm, stable, bookworm-backports. */
static bool suite_ok(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= NAME_MAX_LEN && strchr(LOWER DIGIT, s[0]) && all_of(s, LOWER DIGIT ".-");
}

/* NAME, NAME:ARCH or NAME=VERSION (Debian policy 5.6.1, 5.6.12). */
static bool package_ok(const char *w)
{
    size_t n = strcspn(w, ":=");
    if (n < 2 || n > NAME_MAX_LEN || !strchr(LOWER DIGIT, w[0]))
        return false;
    char *name = vg_xstrndup(w, n);
    bool ok = all_of(name, LOWER DIGIT "+.-");
    free(name);
    const char *rest = w + n;
    if (ok && *rest == ':') {
        size_t a = strcspn(rest + 1, "=");
        char *arch = vg_xstrndup(rest + 1, a);
        ok = a > 0 && all_of(arch, LOWER DIGIT "-");
        free(arch);
        rest += 1 + a;
    }
    if (ok && *rest == '=')
        ok = rest[1] && strchr(DIGIT, rest[1]) && strlen(rest + 1) <= NAME_MAX_LEN &&
             all_of(rest + 1, LOWER UPPER DIGIT ".+~:-");
    return ok;
}

/* http://, https:// or file://, and nothing apt or mmdebstrap would read
 * as more than a URL (a space, a bracket of options, a comma). */
static bool url_ok(const char *u)
{
    static const char *const schemes[] = {"http://", "https://", "file:///"};
    bool scheme = false;
    for (size_t i = 0; i < VG_ARRAY_LEN(schemes); i++)
        scheme |= !strncmp(u, schemes[i], strlen(schemes[i]));
    if (!scheme || strlen(u) > URL_MAX_LEN)
        return false;
    for (const unsigned char *c = (const unsigned char *)u; *c; c++)
        if (*c <= ' ' || *c >= 0x7f || strchr("[],\"'\\", *c))
            return false;
    return true;
}

static bool variant_ok(const char *v)
{
    /* mmdebstrap's variants that give a tree of installed packages, and
     * extract (unpacked only); custom needs dpkg named among the packages */
    static const char *const variants[] = {"essential", "apt", "required", "minbase",
                                           "buildd", "important", "standard", "extract"};
    for (size_t i = 0; i < VG_ARRAY_LEN(variants); i++)
        if (!strcmp(v, variants[i]))
            return true;
    return false;
}

/* A relative path without "." or "..": DST canonical into out (NULL:
 * only checked).  Returns NULL, or what is wrong with it. */
static const char *rel_path(const char *path, bool absolute, char **out)
{
    if (strlen(path) > PATH_MAX_LEN)
        return "longer than 4096 bytes";
    if (absolute != (path[0] == '/'))
        return absolute ? "must be an absolute path in the image" :
                          "must be relative to the spec's directory";
    struct vg_buf b = {0};
    size_t n;
    for (const char *c = vg_path_comp(path, &n); c; c = vg_path_comp(c + n, &n)) {
        if (vg_path_kind(c, n) != VG_PATH_NAME) {
            vg_buf_free(&b);
            return "must not hold a \".\" or \"..\" component";
        }
        if (b.len)
            vg_buf_puts(&b, "/");
        vg_buf_put(&b, c, n);
    }
    if (!b.len) {
        vg_buf_free(&b);
        return absolute ? "names the root, not a file" : "names the spec's directory";
    }
    if (out)
        *out = b.data;
    else
        vg_buf_free(&b);
    return NULL;
}

/* suite, mirror and variant: once each, one word (mirror: then trusted). */
static int once(struct parser *p, unsigned *seen, const char *what, size_t max_words)
{
    if (*seen)
        return perr(p, "a second '%s' line (line %u set it)", what, *seen);
    if (p->nw < 2 || p->nw > max_words + 1)
        return perr(p, max_words > 1 ? "'%s' takes a URL, and 'trusted' for an unsigned one"
                                     : "'%s' takes one name", what);
    *seen = p->line;
    return 0;
}

/* suite and variant: once, one name that ok accepts, else the message. */
static int one_name(struct parser *p, unsigned *seen, bool (*ok)(const char *),
                    const char *wrong, char **field)
{
    if (once(p, seen, p->w[0], 1) < 0)
        return -1;
    if (!ok(p->w[1]))
        return perr(p, "%s '%.*s': %s", p->w[0], NAME_MAX_LEN, p->w[1], wrong);
    *field = vg_xstrdup(p->w[1]);
    return 0;
}

static int kw_suite(struct parser *p)
{
    return one_name(p, &p->seen_suite, suite_ok, "not a Debian suite name (bookworm, stable, ...)",
                    &p->s->suite);
}

static int kw_mirror(struct parser *p)
{
    if (once(p, &p->seen_mirror, "mirror", 2) < 0)
        return -1;
    if (!url_ok(p->w[1]))
        return perr(p, "mirror '%.*s': not an http://, https:// or file:/// URL",
                    NAME_MAX_LEN, p->w[1]);
    if (p->nw == 3 && strcmp(p->w[2], "trusted"))
        return perr(p, "after the mirror's URL only 'trusted' (apt checks no signature)");
    p->s->mirror = vg_xstrdup(p->w[1]);
    p->s->trusted = p->nw == 3;
    return 0;
}

static int kw_variant(struct parser *p)
{
    return one_name(p, &p->seen_variant, variant_ok,
                    "not one of essential, apt, required, minbase, buildd, important, "
                    "standard, extract", &p->s->variant);
}

static int kw_packages(struct parser *p)
{
    if (p->nw < 2)
        return perr(p, "'packages' takes one or more package names");
    for (size_t i = 1; i < p->nw; i++) {
        if (!package_ok(p->w[i]))
            return perr(p, "'%.*s': not a Debian package name (lowercase letters, digits, "
                           "+ - .; NAME=VERSION pins a version)", NAME_MAX_LEN, p->w[i]);
        for (size_t k = 0; k < p->s->npackages; k++)
            if (!strcmp(p->s->packages[k], p->w[i]))
                return perr(p, "package %s is listed twice", p->w[i]);
        if (p->s->npackages == VG_SPEC_MAX_PACKAGES)
            return perr(p, "more than %u packages", VG_SPEC_MAX_PACKAGES);
        p->s->packages = vg_xrealloc(p->s->packages,
                                     (p->s->npackages + 1) * sizeof *p->s->packages);
        p->s->packages[p->s->npackages++] = vg_xstrdup(p->w[i]);
    }
    return 0;
}

static int kw_add(struct parser *p)
{
    if (p->nw != 3)
        return perr(p, "'add' takes SRC (beside the spec) and DST (an absolute path in the image)");
    const char *why = rel_path(p->w[1], false, NULL);
    if (why)
        return perr(p, "add: source %.*s %s", NAME_MAX_LEN, p->w[1], why);
    char *dst = NULL;
    if ((why = rel_path(p->w[2], true, &dst)))
        return perr(p, "add: destination %.*s %s", NAME_MAX_LEN, p->w[2], why);
    for (size_t k = 0; k < p->s->nadds; k++)
        if (!strcmp(p->s->adds[k].dst, dst)) {
            free(dst);
            return perr(p, "add: /%.*s is added twice (line %u)", NAME_MAX_LEN, p->s->adds[k].dst,
                        p->s->adds[k].line);
        }
    if (p->s->nadds == VG_SPEC_MAX_ADDS) {
        free(dst);
        return perr(p, "more than %u add lines", VG_SPEC_MAX_ADDS);
    }
    p->s->adds = vg_xrealloc(p->s->adds, (p->s->nadds + 1) * sizeof *p->s->adds);
    p->s->adds[p->s->nadds++] = (struct vg_spec_add){vg_xstrdup(p->w[1]), dst, p->line};
    return 0;
}

static const struct {
    const char *word;
    int (*fn)(struct parser *);
} keywords[] = {
    {"suite", kw_suite}, {"mirror", kw_mirror}, {"variant", kw_variant},
    {"packages", kw_packages}, {"add", kw_add},
};

static int statement(struct parser *p)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(keywords); i++)
        if (!strcmp(p->w[0], keywords[i].word))
            return keywords[i].fn(p);
    return perr(p, "unknown keyword '%.*s' (suite, mirror, variant, packages, add)",
                NAME_MAX_LEN, p->w[0]);
}

static int parse_lines(struct parser *p, const char *text, size_t len)
{
    if (len > VG_SPEC_MAX_BYTES) {
        p->line = 1;
        return perr(p, "larger than %u bytes: not a spec", VG_SPEC_MAX_BYTES);
    }
    for (const char *l = text, *end = text + len; l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
        p->line++;
        if (memchr(l, '\0', n))
            return perr(p, "NUL byte in the spec");
        char *line = vg_xstrndup(l, n);
        int rc = split(p, line);
        if (rc == 0 && p->nw)
            rc = statement(p);
        free(line);
        if (rc < 0)
            return -1;
        l += n + 1;
    }
    if (!p->s->suite) {
        p->line = 1;
        return perr(p, "no 'suite' line (e.g. suite bookworm)");
    }
    return 0;
}

int vg_spec_parse(const char *file, const char *text, size_t len, struct vg_spec *s,
                  struct vg_err *err)
{
    *s = (struct vg_spec){0};
    struct parser p = {.file = file, .s = s, .err = err};
    if (parse_lines(&p, text, len) < 0) {
        vg_spec_free(s);
        return -1;
    }
    if (!s->mirror)
        s->mirror = vg_xstrdup(VG_SPEC_DEFAULT_MIRROR);
    if (!s->variant)
        s->variant = vg_xstrdup(VG_SPEC_DEFAULT_VARIANT);
    return 0;
}

void vg_spec_free(struct vg_spec *s)
{
    free(s->suite);
    free(s->mirror);
    free(s->variant);
    for (size_t i = 0; i < s->npackages; i++)
        free(s->packages[i]);
    free(s->packages);
    for (size_t i = 0; i < s->nadds; i++) {
        free(s->adds[i].src);
        free(s->adds[i].dst);
    }
    free(s->adds);
    *s = (struct vg_spec){0};
}
