/* learn_check.c: the learned policy's text, made to pass `vigil check`.
 * The text is parsed as the checker parses it; a line of ours that draws a
 * warning (a grant that defeats the sandbox, such as running programs
 * from $WORK) becomes a comment that says
 * why (a rule an earlier one covers is left out), and the text is parsed
 * again, until nothing of ours is warned about.  So what is written is what the parser accepts, not what this
 * file guesses it would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insight/learn_int.h"
#include "util/escape.h"

#define DEFAULT_NAME "learned.policy"
#define WARNING_MARK "warning: "
#define SHADOWED_MARK "rule can never match" /* policy/warn.c's shadowed rule */

struct text {
    struct vg_learn_lines lines;  /* the whole policy, one line each (owned) */
    size_t first_rule;            /* where the learned rules start */
};

static void push(struct vg_learn_lines *l, char *line)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        l->v = vg_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = line;
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Rules sorted (by class, then pattern: the order does not matter, all
 * are allow rules before the include), then what was left out. */
static void build(struct vg_learn *L, struct text *t)
{
    if (L->rules.n)   /* a run that did nothing learns no rule: v is NULL */
        qsort(L->rules.v, L->rules.n, sizeof *L->rules.v, cmp_line);
    /* Names from outside (the log's name, the header's policy path) are
     * escaped: one with a newline in it must not start a line of its own. */
    char *log = vg_esc_dup(L->o->log), *pol = vg_esc_dup(L->run_policy);
    push(&t->lines, vg_xasprintf("# vigil learn: a policy that allows what the run of %s did", log));
    push(&t->lines, vg_xasprintf("# (its policy: %s).  Read it before you use it.", pol));
    free(log);
    free(pol);
    push(&t->lines, vg_xstrdup("version 1"));
    if (L->image && vg_learn_writable(L->image)) {
        /* the rules name the image's files: by digest, what the run had */
        if (!L->trees)
            push(&t->lines, vg_xstrdup("# (that image is not in this store: the rules were "
                                       "checked on the host's trees)"));
        push(&t->lines, vg_xasprintf("image %s", L->image));
    }
    t->first_rule = t->lines.n;
    for (size_t i = 0; i < L->rules.n; i++)
        push(&t->lines, vg_xstrdup(L->rules.v[i]));
    for (size_t i = 0; i < L->skipped.n; i++)
        push(&t->lines, vg_xstrdup(L->skipped.v[i]));
    if (L->include && vg_learn_writable(L->include)) {
        push(&t->lines, vg_xasprintf("include %s", L->include));
        return;
    }
    if (L->include) { /* standalone, then: what is not learned stays denied */
        char *inc = vg_esc_dup(L->include);
        push(&t->lines, vg_xasprintf("# not included (a name the policy language cannot write): %s",
                                     inc));
        free(inc);
    }
    push(&t->lines, vg_xstrdup("default deny"));
}

static void join(const struct text *t, struct vg_buf *b)
{
    for (size_t i = 0; i < t->lines.n; i++) {
        vg_buf_puts(b, t->lines.v[i]);
        vg_buf_puts(b, "\n");
    }
    vg_buf_put(b, "", 1);
    b->len--;
}

/* A warning of ours: "NAME:LINE:COL: warning: MSG"; its line (1-based) or 0. */
static unsigned our_line(const char *w, const char *name, const char **msg)
{
    size_t n = strlen(name);
    unsigned line = 0;
    if (strncmp(w, name, n) || w[n] != ':' || sscanf(w + n + 1, "%u", &line) != 1)
        return 0;
    const char *m = strstr(w, WARNING_MARK);
    *msg = m ? m + strlen(WARNING_MARK) : w;
    return line;
}

/* Comment out the first line of ours a warning names; false when none. */
static bool drop_one(struct text *t, const struct vg_policy *p, const char *name)
{
    for (uint32_t i = 0; i < vg_policy_nwarnings(p); i++) {
        const char *msg;
        unsigned line = our_line(vg_policy_warning(p, i), name, &msg);
        if (line == 0 || line > t->lines.n || t->lines.v[line - 1][0] == '#')
            continue;
        char *old = t->lines.v[line - 1];
        if (!strncmp(msg, SHADOWED_MARK, strlen(SHADOWED_MARK))) {
            /* covered by an earlier rule: redundant, left out */
            memmove(&t->lines.v[line - 1], &t->lines.v[line],
                    (t->lines.n - line) * sizeof *t->lines.v);
            t->lines.n--;
        } else {
            struct vg_buf why = {0};
            vg_esc_puts(&why, msg, VG_ESC_TEXT); /* one line, whatever it quotes */
            t->lines.v[line - 1] = vg_xasprintf("# not learned (vigil check: %s): %s",
                                                why.data ? why.data : "", old);
            vg_buf_free(&why);
        }
        free(old);
        return true;
    }
    return false;
}

/* Parse until no line of ours draws a warning.  -1 with err when the
 * parser refuses the text (a bug here: say so rather than write it). */
static int settle(struct text *t, const char *name, const struct vg_trees *trees,
                  struct vg_err *err)
{
    for (size_t round = 0; round <= t->lines.n; round++) {
        struct vg_buf b = {0};
        join(t, &b);
        struct vg_policy *p = vg_policy_parse_in(name, b.data, trees, err);
        vg_buf_free(&b);
        if (!p)
            return -1;
        bool dropped = drop_one(t, p, name);
        vg_policy_free(p);
        if (!dropped)
            return 0;
    }
    return 0;
}

int vg_learn_write(struct vg_learn *L, struct vg_buf *out, struct vg_err *err)
{
    struct text t = {0};
    build(L, &t);
    const char *name = L->o->name ? L->o->name : DEFAULT_NAME;
    int rc = settle(&t, name, vg_learn_trees(L), err);
    if (rc == 0 && L->o->diff) {
        /* the rules to add, and what was left out */
        for (size_t i = t.first_rule; i + 1 < t.lines.n; i++) {
            vg_buf_puts(out, t.lines.v[i]);
            vg_buf_puts(out, "\n");
        }
    } else if (rc == 0) {
        join(&t, out);
    }
    for (size_t i = 0; i < t.lines.n; i++)
        free(t.lines.v[i]);
    free(t.lines.v);
    return rc;
}
