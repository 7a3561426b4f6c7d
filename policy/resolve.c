/* resolve.c: rules say what they mean.  The decider sees canonical paths
 * (/usr/bin/python3.11), while authors write the names they know
 * (/usr/bin/python3, a symlink).  So, once, when the policy is loaded, the
 * literal part of each path rule that lies in the read-only trees (all of
 * an exact path, the directory a glob's matches start in) is resolved on
 * the host (vg_trees_resolve), and what it resolves to is added to the
 * rule as another alternative: the rule's identity stays the rule as
 * written, and only the resolved form of the same object is added.  A
 * path anywhere else could change during the run, so it is never
 * resolved.  A literal path there that does not exist can never appear,
 * and is worth a warning. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/policy_int.h"

/* Where resolving may look: the trees, less what the policy's own binds
 * put in them (a bind's destination is not the host's object). */
struct scope {
    struct vg_trees t;
    char **hidden;
    unsigned nfixed;    /* hidden[nfixed..] are squashed copies of binds' */
};

static void scope_init(struct scope *s, const struct vg_policy *p)
{
    const struct vg_trees *ro = p->ro;
    s->hidden = vg_xcalloc(ro->nhidden + p->nbinds + 1, sizeof *s->hidden);
    unsigned n = 0;
    for (unsigned i = 0; i < ro->nhidden; i++)
        s->hidden[n++] = (char *)ro->hidden[i];
    s->nfixed = n;
    for (uint32_t i = 0; i < p->nbinds; i++) {
        const struct vg_pbind *b = &p->binds[i];
        enum vg_place pl = b->dst_rest ? b->dst_place : b->src_place;
        if (pl != VG_PLACE_NONE)
            continue;
        s->hidden[n] = vg_xstrdup(b->dst_rest ? b->dst_rest : b->src_rest);
        vg_path_squash(s->hidden[n++]);
    }
    s->t = (struct vg_trees){ro->dirs, ro->ndirs, (const char *const *)s->hidden, n,
                             ro->own, ro->nown, ro->root};
}

static void scope_free(struct scope *s)
{
    for (unsigned i = s->nfixed; i < s->t.nhidden; i++)
        free(s->hidden[i]);
    free(s->hidden);
}

/* How much of alt (squashed) every match starts with and resolving may
 * replace: all of an exact path, else the directory before the first
 * wildcard ("/lib" of "/lib/ **"); 0 when that is "/" alone. */
static size_t literal_dir(const char *alt, bool *exact)
{
    size_t len = strlen(alt), lit = vg_glob_literal_len(alt);
    *exact = lit == len;
    if (*exact)
        return len;
    while (lit > 0 && alt[lit - 1] != '/')
        lit--;
    return lit > 0 ? lit - 1 : 0;
}

static bool has_alt(const struct vg_ppat *pp, const char *s)
{
    for (uint32_t i = 0; i < pp->nalts; i++)
        if (!strcmp(pp->alts[i], s))
            return true;
    return false;
}

/* Add res (a canonical path) + tail (the rest of alternative i) as a
 * resolved form of alternative i. */
static void add_form(struct vg_ppat *pp, uint32_t i, const char *res, const char *tail)
{
    struct vg_buf b = {0};
    vg_glob_put_literal(&b, res);
    vg_buf_puts(&b, tail);
    if (has_alt(pp, b.data)) {
        vg_buf_free(&b);
        return;
    }
    uint32_t k = pp->nalts - pp->nwritten;
    pp->alts = vg_xrealloc(pp->alts, (pp->nalts + 1) * sizeof *pp->alts);
    pp->from = vg_xrealloc(pp->from, (k + 1) * sizeof *pp->from);
    pp->alts[pp->nalts++] = vg_xstrdup(b.data);
    pp->from[k] = i;
    vg_buf_free(&b);
}

/* The tree of t that holds path, for the warning. */
static const char *tree_of(const struct vg_trees *t, const char *path)
{
    for (unsigned i = 0; i < t->ndirs; i++)
        if (vg_path_under(path, t->dirs[i]))
            return t->dirs[i];
    return "";
}

/* A tree this host does not have at all (/libx32) is no mistake of the
 * rule's: policies name the trees of other hosts too. */
static bool tree_exists(const struct vg_trees *t, const char *path)
{
    struct stat st;
    return lstat(tree_of(t, path), &st) == 0;
}

/* Resolve one written alternative; true when it is an exact path in the
 * trees that does not exist (*missing_at: it, malloc'd). */
static bool resolve_alt(struct vg_ppat *pp, uint32_t i, const struct vg_trees *t,
                        char **missing_at)
{
    char *a = vg_xstrdup(pp->alts[i]);
    vg_path_squash(a);
    bool exact, missing = false;
    size_t dl = literal_dir(a, &exact);
    char *dir = vg_xstrndup(a, dl), *res = NULL;
    if (dl && a[0] == '/' && vg_trees_holds(t, dir)) {
        enum vg_walk w = vg_trees_resolve(t, dir, &res);
        if (w == VG_WALK_FOUND && strcmp(res, dir))
            add_form(pp, i, res, a + dl);
        missing = exact && w == VG_WALK_MISSING && tree_exists(t, dir);
    }
    if (missing && !*missing_at)
        *missing_at = vg_xstrdup(dir);
    free(res);
    free(dir);
    free(a);
    return missing;
}

static void resolve_rule(struct vg_policy *p, struct vg_prule *r, const struct vg_trees *t)
{
    struct vg_ppat *pp = &r->path;
    if (r->is_net || pp->place != VG_PLACE_NONE)
        return;
    char *missing_at = NULL;
    uint32_t missing = 0;
    for (uint32_t i = 0; i < pp->nwritten; i++)
        missing += resolve_alt(pp, i, t, &missing_at);
    if (pp->nwritten && missing == pp->nwritten)
        vg_pol_warnf(p, r->src.file, r->src.line, r->col,
                     "rule names no object: %s does not exist%s, and nothing can create it "
                     "(the sandbox shows %s read-only)",
                     missing_at, pp->nwritten > 1 ? ", nor do its other alternatives" : "",
                     tree_of(t, missing_at));
    free(missing_at);
}

void vg_pol_resolve_rules(struct vg_policy *p)
{
    struct scope s;
    if (!p->ro)
        return;
    scope_init(&s, p);
    for (uint32_t i = 0; i < p->nrules; i++)
        resolve_rule(p, &p->rules[i], &s.t);
    scope_free(&s);
}
