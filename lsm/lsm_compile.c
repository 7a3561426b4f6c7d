/* lsm_compile.c: see lsm_compile.h.  The trie is a deterministic automaton
 * over path components, made by the subset construction: a node is the
 * set of places the policy's patterns can be at after the components that
 * lead to it, so one walk from the root, one child per component, finds
 * every rule that matches, and the verdicts each node keeps say which of
 * them comes first.  Nothing here asks the kernel: the loader puts what
 * this makes into the maps.
 *
 * This is the one file outside policy/ that reads policy_int.h: the trie
 * needs each rule's compiled globs, class lists and defaults, which the
 * public interface (policy.h) only ever consults for one path.  Until
 * policy/ offers a walk over its path rules, the reading stays here. */
#include "lsm/lsm_compile.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lsm/glob_step.h"
#include "policy/glob.h"
#include "policy/policy_int.h"

_Static_assert(VG_LSM_SET_BYTES == VG_GLOB_SET_BYTES, "a set is the same 256 bits in both");

enum comp_kind { LIT, STAR, DSTAR, GLOB };

struct pcomp {
    enum comp_kind kind;
    uint32_t len;       /* LIT: the component, unescaped */
    char *name;
    uint32_t glob;      /* GLOB: its id in the trie's glob map */
};

/* One pattern: an alternative of a file rule, as components. */
struct pat {
    uint32_t rule;      /* index in the policy's rules */
    uint32_t n;
    struct pcomp *c;
};

/* A place in a pattern: (pattern << 32) | position; a pattern used up
 * there is END (matches the node's path) or SUB (a final slash-star-star:
 * matches it and everything below). */
#define POS_END 0xfffffffeu
#define POS_SUB 0xfffffffdu
#define ITEM(pat, pos) (((uint64_t)(pat) << 32) | (pos))
#define ITEM_PAT(it) ((uint32_t)((it) >> 32))
#define ITEM_POS(it) ((uint32_t)(it))

struct iset {
    uint64_t *v;
    uint32_t n, cap;
};

struct state {
    uint64_t *items;    /* sorted, unique */
    uint32_t n;
    uint32_t next;      /* the hash chain */
};

/* How much of a rule's text and pattern an error shows. */
#define SHOWN 120

/* Power of two at least VG_LSM_MAX_NODES: chains stay short. */
#define NBUCKETS 65536u
#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME 1099511628211ull

struct builder {
    const struct vg_policy *p;
    struct pat *pats;
    uint32_t npats;
    uint32_t *prio[VG_LSM_NCLS];    /* [class][rule]: place in the class's list */
    struct state *st;
    uint32_t nst, capst;
    uint32_t *bucket;
    uint32_t capedges;
    struct vg_lsm_trie *t;
    struct vg_err *err;
};

static void iset_push(struct iset *s, uint64_t it)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = vg_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = it;
}

/* Put pattern pat at position pos into s, with what an inner `**` there
 * also allows (skipping it: zero components). */
static void add_at(const struct builder *b, struct iset *s, uint32_t pat, uint32_t pos)
{
    const struct pat *pt = &b->pats[pat];
    if (pos == pt->n) {
        iset_push(s, ITEM(pat, POS_END));
    } else if (pt->c[pos].kind == DSTAR && pos + 1 == pt->n) {
        iset_push(s, ITEM(pat, POS_SUB));
    } else {
        iset_push(s, ITEM(pat, pos));
        if (pt->c[pos].kind == DSTAR)
            add_at(b, s, pat, pos + 1); /* never two `**` in a row (pat_of) */
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void iset_sort(struct iset *s)
{
    if (!s->n)
        return;
    qsort(s->v, s->n, sizeof *s->v, cmp_u64);
    uint32_t k = 1;
    for (uint32_t i = 1; i < s->n; i++)
        if (s->v[i] != s->v[k - 1])
            s->v[k++] = s->v[i];
    s->n = k;
}

static uint32_t iset_hash(const struct iset *s)
{
    uint64_t h = FNV_OFFSET;
    for (uint32_t i = 0; i < s->n; i++)
        h = (h ^ s->v[i]) * FNV_PRIME;
    return (uint32_t)(h ^ (h >> 32)) & (NBUCKETS - 1);
}

static void keep_best(struct vg_lsm_verdict *v, uint32_t prio, uint32_t rule, enum vg_action act)
{
    if (prio < v->prio)
        *v = (struct vg_lsm_verdict){.prio = prio, .rule = rule, .action = (unsigned)act};
}

/* The node of a new state: each class's best rule among the patterns
 * used up here (end, sub), and among those that are not used up below
 * (tree: what vg_glob_tree_relation calls SOME, a pattern still going on
 * or ending exactly here). */
static void fill_node(const struct builder *b, const struct state *s, struct vg_lsm_node *node)
{
    static const struct vg_lsm_verdict none = {.prio = VG_LSM_NONE, .rule = VG_LSM_NONE};
    memset(node, 0, sizeof *node);
    node->star = VG_LSM_NONE;
    for (int c = 0; c < VG_LSM_NCLS; c++)
        node->end[c] = node->sub[c] = node->tree[c] = none;
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t pos = ITEM_POS(s->items[i]), rule = b->pats[ITEM_PAT(s->items[i])].rule;
        for (int c = 0; c < VG_LSM_NCLS; c++) {
            if (b->prio[c][rule] == VG_LSM_NONE)
                continue;
            enum vg_action act = b->p->rules[rule].act;
            if (pos == POS_SUB)
                keep_best(&node->sub[c], b->prio[c][rule], rule, act);
            else
                keep_best(&node->tree[c], b->prio[c][rule], rule, act);
            if (pos == POS_END)
                keep_best(&node->end[c], b->prio[c][rule], rule, act);
        }
    }
}

/* The node of the set s (sorted here), made if new; VG_LSM_NONE with
 * err when the trie would be too big. */
static uint32_t intern(struct builder *b, struct iset *s)
{
    iset_sort(s);
    uint32_t h = iset_hash(s);
    for (uint32_t i = b->bucket[h]; i != VG_LSM_NONE; i = b->st[i].next)
        if (b->st[i].n == s->n && (!s->n || !memcmp(b->st[i].items, s->v, s->n * sizeof *s->v)))
            return i;
    if (b->nst >= VG_LSM_MAX_NODES) {
        vg_errf(b->err, "%s: the kernel engine's trie would need more than %u nodes",
                b->p->path ? b->p->path : "policy", VG_LSM_MAX_NODES);
        return VG_LSM_NONE;
    }
    if (b->nst == b->capst) {
        b->capst = b->capst ? b->capst * 2 : 64;
        b->st = vg_xrealloc(b->st, b->capst * sizeof *b->st);
        b->t->nodes = vg_xrealloc(b->t->nodes, b->capst * sizeof *b->t->nodes);
    }
    uint32_t id = b->nst++;
    struct state *st = &b->st[id];
    st->n = s->n;
    st->items = vg_xmalloc((s->n ? s->n : 1) * sizeof *s->v);
    if (s->n) /* the root of a policy without file rules is empty (s->v NULL) */
        memcpy(st->items, s->v, s->n * sizeof *s->v);
    st->next = b->bucket[h];
    b->bucket[h] = id;
    fill_node(b, st, &b->t->nodes[id]);
    return id;
}

static const struct pcomp *live_comp(const struct builder *b, uint64_t it)
{
    uint32_t pos = ITEM_POS(it);
    if (pos == POS_END || pos == POS_SUB)
        return NULL;
    return &b->pats[ITEM_PAT(it)].c[pos];
}

/* The globs live in a state, each once, by id (bit k of a mask is the
 * k-th). */
struct globset {
    uint32_t n;
    uint32_t id[VG_LSM_NODE_GLOBS];
};

/* Where state from goes on a component: name (len bytes), each glob
 * matched against it; or, with name NULL, on a component no literal there
 * names, of which the globs of gs in mask match and no other. */
static void step(const struct builder *b, uint32_t from, const char *name, uint32_t len,
                 const struct globset *gs, uint32_t mask, struct iset *out)
{
    out->n = 0;
    for (uint32_t i = 0; i < b->st[from].n; i++) {
        uint64_t it = b->st[from].items[i];
        const struct pcomp *c = live_comp(b, it);
        if (!c)
            continue;
        bool match = c->kind == STAR;
        if (c->kind == LIT)
            match = name && c->len == len && !memcmp(c->name, name, len);
        if (c->kind == GLOB && name)
            match = vg_lsm_glob_run(&b->t->globs[c->glob], name, 0, len) == 1;
        for (uint32_t k = 0; c->kind == GLOB && !name && k < gs->n; k++)
            match |= gs->id[k] == c->glob && (mask >> k & 1);
        if (c->kind == DSTAR)
            add_at(b, out, ITEM_PAT(it), ITEM_POS(it));   /* one more component */
        else if (match)
            add_at(b, out, ITEM_PAT(it), ITEM_POS(it) + 1);
    }
}

/* The mask of the globs of gs that match a component. */
static uint32_t mask_of(const struct builder *b, const struct globset *gs, const char *name,
                        uint32_t len)
{
    uint32_t mask = 0;
    for (uint32_t k = 0; k < gs->n; k++)
        if (vg_lsm_glob_run(&b->t->globs[gs->id[k]], name, 0, len) == 1)
            mask |= 1u << k;
    return mask;
}

static int cmp_comp(const void *a, const void *b)
{
    const struct pcomp *x = *(const struct pcomp *const *)a, *y = *(const struct pcomp *const *)b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->name, y->name, x->len);
}

static int add_edge(struct builder *b, uint32_t parent, const struct pcomp *c, uint32_t child)
{
    struct vg_lsm_trie *t = b->t;
    if (t->nedges >= VG_LSM_MAX_EDGES) {
        vg_errf(b->err, "%s: the kernel engine's trie would need more than %u edges",
                b->p->path ? b->p->path : "policy", VG_LSM_MAX_EDGES);
        return -1;
    }
    if (t->nedges == b->capedges) {
        b->capedges = b->capedges ? b->capedges * 2 : 64;
        t->edges = vg_xrealloc(t->edges, b->capedges * sizeof *t->edges);
    }
    struct vg_lsm_edge *e = &t->edges[t->nedges++];
    memset(e, 0, sizeof *e);
    e->key.parent = parent;
    e->key.len = c->len;
    memcpy(e->key.name, c->name, c->len);
    e->child = child;
    return 0;
}

/* The globs live in state id, into its node; -1 with err when more
 * than a node tries. */
static int globs_of(struct builder *b, uint32_t id, struct globset *gs)
{
    gs->n = 0;
    for (uint32_t i = 0; i < b->st[id].n; i++) {
        const struct pcomp *c = live_comp(b, b->st[id].items[i]);
        if (!c || c->kind != GLOB)
            continue;
        bool seen = false;
        for (uint32_t k = 0; k < gs->n; k++)
            seen |= gs->id[k] == c->glob;
        if (seen)
            continue;
        if (gs->n == VG_LSM_NODE_GLOBS) {
            const struct vg_rule_src *r = &b->p->rules[b->pats[ITEM_PAT(b->st[id].items[i])].rule].src;
            vg_errf(b->err, "%s:%u: %.*s: more than %d different wildcard components at one "
                    "place of the path (the kernel engine tries %d at each)",
                    r->file ? r->file : "(built in)", r->line, SHOWN, r->text,
                    VG_LSM_NODE_GLOBS, VG_LSM_NODE_GLOBS);
            return -1;
        }
        gs->id[gs->n++] = c->glob;
    }
    struct vg_lsm_node *nd = &b->t->nodes[id];
    nd->nglob = gs->n;
    for (uint32_t k = 0; k < gs->n; k++)
        nd->glob[k] = gs->id[k];
    return 0;
}

/* The child of each mask of a node's globs but 0 (the star child), in
 * the kids map from the node's kids on. */
static int add_kids(struct builder *b, uint32_t id, const struct globset *gs, struct iset *tmp)
{
    struct vg_lsm_trie *t = b->t;
    uint32_t nmask = (1u << gs->n) - 1;
    if (t->nkids + nmask > VG_LSM_MAX_KIDS) {
        vg_errf(b->err, "%s: the kernel engine's trie would need more than %u glob children",
                b->p->path ? b->p->path : "policy", VG_LSM_MAX_KIDS);
        return -1;
    }
    uint32_t base = t->nkids;
    t->nkids += nmask;
    t->kids = vg_xrealloc(t->kids, (t->nkids ? t->nkids : 1) * sizeof *t->kids);
    t->nodes[id].kids = base;
    for (uint32_t m = 1; m <= nmask; m++) {
        step(b, id, NULL, 0, gs, m, tmp);
        uint32_t child = intern(b, tmp);    /* never empty: the globs' own patterns */
        if (child == VG_LSM_NONE)
            return -1;
        t->kids[base + m - 1] = child;
    }
    return 0;
}

/* The children of one state: its star child, its globs' children, then
 * an edge for each component a pattern there names that leads elsewhere
 * than the globs and the star would take it. */
static int expand(struct builder *b, uint32_t id, struct iset *tmp)
{
    struct globset gs;
    if (globs_of(b, id, &gs) || add_kids(b, id, &gs, tmp))
        return -1;
    step(b, id, NULL, 0, &gs, 0, tmp);
    uint32_t star = tmp->n ? intern(b, tmp) : VG_LSM_NONE;
    if (tmp->n && star == VG_LSM_NONE)
        return -1;
    b->t->nodes[id].star = star;
    uint32_t n = b->st[id].n, nl = 0;
    const struct pcomp **lits = vg_xcalloc(n ? n : 1, sizeof *lits);
    for (uint32_t i = 0; i < n; i++) {
        const struct pcomp *c = live_comp(b, b->st[id].items[i]);
        if (c && c->kind == LIT)
            lits[nl++] = c;
    }
    qsort(lits, nl, sizeof *lits, cmp_comp);
    int rc = 0;
    for (uint32_t i = 0; i < nl && !rc; i++) {
        if (i && !cmp_comp(&lits[i - 1], &lits[i]))
            continue;
        step(b, id, lits[i]->name, lits[i]->len, &gs, 0, tmp);
        uint32_t child = intern(b, tmp);     /* never empty: the name's own pattern */
        uint32_t mask = mask_of(b, &gs, lits[i]->name, lits[i]->len);
        uint32_t without = mask ? b->t->kids[b->t->nodes[id].kids + mask - 1] : star;
        if (child == VG_LSM_NONE)
            rc = -1;
        else if (child != without)
            rc = add_edge(b, id, lits[i], child);
    }
    free(lits);
    return rc;
}

static void set_add(struct vg_lsm_gop *op, unsigned lo, unsigned hi)
{
    for (unsigned c = lo; c <= hi; c++)
        op->set[c >> 3] |= (unsigned char)(1u << (c & 7));
}

/* A component with a wildcard inside as a glob: each element as
 * policy/glob.c's one_matches reads it.  NULL, or why it cannot be one. */
static const char *glob_of(const char *s, uint32_t len, struct vg_lsm_glob *g)
{
    memset(g, 0, sizeof *g);
    for (uint32_t i = 0, end; i < len;) {
        if (g->nops == VG_LSM_GLOB_OPS)
            return "a wildcard component of more than 64 elements (the kernel engine's "
                   "matcher holds 64)";
        struct vg_lsm_gop *op = &g->op[g->nops++];
        unsigned char c = (unsigned char)s[i];
        if (c == '*') {
            op->star = 1;
            i++;
        } else if (c == '?') {
            set_add(op, 0, UCHAR_MAX);
            i++;
        } else if (c == '[' && (end = (uint32_t)vg_glob_set_end(s, i, len))) {
            vg_glob_set_bytes(s, i, end, op->set);
            i = end;
        } else if (c == '\\' && i + 1 < len) {
            set_add(op, (unsigned char)s[i + 1], (unsigned char)s[i + 1]);
            i += 2;
        } else {
            set_add(op, c, c);      /* an unclosed '[' and a final lone \ are themselves */
            i++;
        }
    }
    return NULL;
}

/* The id of glob g in the trie's glob map, added if new. */
static int glob_id(struct builder *b, const struct vg_lsm_glob *g, uint32_t *id)
{
    struct vg_lsm_trie *t = b->t;
    for (uint32_t i = 0; i < t->nglobs; i++)
        if (!memcmp(&t->globs[i], g, sizeof *g)) {
            *id = i;
            return 0;
        }
    if (t->nglobs >= VG_LSM_MAX_GLOBS)
        return -1;
    t->globs = vg_xrealloc(t->globs, (t->nglobs + 1) * sizeof *t->globs);
    t->globs[t->nglobs] = *g;
    *id = t->nglobs++;
    return 0;
}

/* Why a component of a glob cannot be an edge, a star or a glob: NULL
 * when it can (then *out is it). */
static const char *comp_of(struct builder *b, const char *s, uint32_t len, struct pcomp *out)
{
    if (len == 1 && s[0] == '*') {
        *out = (struct pcomp){.kind = STAR};
        return NULL;
    }
    char *name = vg_xmalloc(len + 1);
    uint32_t n = 0;
    for (uint32_t i = 0; i < len; i++) {
        if (s[i] == '\\' && i + 1 < len) {
            name[n++] = s[++i];     /* \c is c; a final lone \ is itself (glob.c) */
        } else if (strchr("*?[", s[i])) {
            free(name);
            struct vg_lsm_glob g;
            const char *why = glob_of(s, len, &g);
            if (why)
                return why;
            *out = (struct pcomp){.kind = GLOB};
            return glob_id(b, &g, &out->glob) ? "more wildcard components than the kernel "
                   "engine's glob map holds" : NULL;
        } else {
            name[n++] = s[i];
        }
    }
    if (n > VG_LSM_NAME_MAX) {
        free(name);
        return "a component longer than NAME_MAX";
    }
    *out = (struct pcomp){.kind = LIT, .len = n, .name = name};
    return NULL;
}

static void pat_free(struct pat *pt)
{
    for (uint32_t i = 0; i < pt->n; i++)
        free(pt->c[i].name);
    free(pt->c);
}

/* One compiled glob as a pattern of components, `**` runs made one. */
static const char *pat_of(struct builder *b, const struct vg_glob *g, uint32_t rule,
                          struct pat *pt)
{
    *pt = (struct pat){.rule = rule, .c = vg_xcalloc(g->ncomps ? g->ncomps : 1, sizeof *pt->c)};
    for (uint32_t i = 0; i < g->ncomps; i++) {
        const struct vg_glob_comp *gc = &g->comps[i];
        if (gc->dstar) {
            if (!pt->n || pt->c[pt->n - 1].kind != DSTAR)
                pt->c[pt->n++] = (struct pcomp){.kind = DSTAR};
            continue;
        }
        const char *why = comp_of(b, g->text + gc->off, gc->len, &pt->c[pt->n]);
        if (why) {
            pat_free(pt);
            return why;
        }
        pt->n++;
    }
    return NULL;
}

static bool file_rule(const struct vg_prule *r)
{
    uint32_t mask = VG_CLS_BIT(VG_CLASS_READ) | VG_CLS_BIT(VG_CLASS_WRITE) |
                    VG_CLS_BIT(VG_CLASS_EXEC);
    return !r->is_net && (r->classes & mask) && r->path.globs;
}

/* Every alternative of every file rule as a pattern; -1 with err at the
 * first that cannot be one. */
static int collect(struct builder *b)
{
    const struct vg_policy *p = b->p;
    for (uint32_t i = 0; i < p->nrules; i++) {
        const struct vg_prule *r = &p->rules[i];
        if (!file_rule(r))
            continue;
        for (uint32_t a = 0; a < r->path.nalts; a++) {
            b->pats = vg_xrealloc(b->pats, (b->npats + 1) * sizeof *b->pats);
            const char *why = pat_of(b, &r->path.globs[a], i, &b->pats[b->npats]);
            if (why) {
                /* the rule and pattern cut, so that the reason always fits */
                vg_errf(b->err, "%s:%u: %.*s: pattern %.*s: %s",
                        r->src.file ? r->src.file : "(built in)", r->src.line, SHOWN,
                        r->src.text, SHOWN, r->path.globs[a].text, why);
                return -1;
            }
            b->npats++;
        }
    }
    return 0;
}

static void set_prio(struct builder *b)
{
    const struct vg_policy *p = b->p;
    for (int c = 0; c < VG_LSM_NCLS; c++) {
        b->prio[c] = vg_xmalloc((p->nrules ? p->nrules : 1) * sizeof **b->prio);
        for (uint32_t i = 0; i < p->nrules; i++)
            b->prio[c][i] = VG_LSM_NONE;
        for (uint32_t i = 0; i < p->nlist[c]; i++)
            b->prio[c][p->list[c][i]] = i;
        b->t->def.action[c] = (unsigned)p->def[c];
    }
}

static int build(struct builder *b)
{
    struct iset tmp = {0};
    int rc = 0;
    for (uint32_t i = 0; i < b->npats; i++)
        add_at(b, &tmp, i, 0);
    if (intern(b, &tmp) == VG_LSM_NONE)   /* the root, node 0, even with no rule */
        rc = -1;
    for (uint32_t id = 0; id < b->nst && !rc; id++)
        rc = expand(b, id, &tmp);
    free(tmp.v);
    return rc;
}

static void builder_free(struct builder *b)
{
    for (uint32_t i = 0; i < b->npats; i++)
        pat_free(&b->pats[i]);
    free(b->pats);
    for (int c = 0; c < VG_LSM_NCLS; c++)
        free(b->prio[c]);
    for (uint32_t i = 0; i < b->nst; i++)
        free(b->st[i].items);
    free(b->st);
    free(b->bucket);
}

int vg_lsm_key_cmp(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(struct vg_lsm_key));
}

int vg_lsm_compile(const struct vg_policy *p, struct vg_lsm_trie *t, struct vg_err *err)
{
    memset(t, 0, sizeof *t);
    if (!p->compiled) {
        vg_errf(err, "%s: not compiled", p->path ? p->path : "policy");
        return -1;
    }
    struct builder b = {.p = p, .t = t, .err = err};
    b.bucket = vg_xmalloc(NBUCKETS * sizeof *b.bucket);
    memset(b.bucket, 0xff, NBUCKETS * sizeof *b.bucket); /* every chain VG_LSM_NONE */
    set_prio(&b);
    int rc = collect(&b);
    if (!rc)
        rc = build(&b);
    t->nnodes = b.nst;
    builder_free(&b);
    if (rc) {
        vg_lsm_trie_free(t);
        return -1;
    }
    if (t->nedges)
        qsort(t->edges, t->nedges, sizeof *t->edges, vg_lsm_key_cmp);
    t->nrules = p->nrules;
    t->rules = vg_xcalloc(p->nrules ? p->nrules : 1, sizeof *t->rules);
    for (uint32_t i = 0; i < p->nrules; i++)
        t->rules[i] = &p->rules[i].src;
    return 0;
}

void vg_lsm_trie_free(struct vg_lsm_trie *t)
{
    free(t->nodes);
    free(t->edges);
    free(t->globs);
    free(t->kids);
    free(t->rules);
    memset(t, 0, sizeof *t);
}

/* The edge map's lookup: the child of node for this component, or
 * VG_LSM_NONE. */
static uint32_t child_of(const struct vg_lsm_trie *t, uint32_t node, const char *name, size_t len)
{
    if (len > VG_LSM_NAME_MAX)
        return VG_LSM_NONE;
    struct vg_lsm_edge want;
    memset(&want, 0, sizeof want);
    want.key.parent = node;
    want.key.len = (unsigned)len;
    memcpy(want.key.name, name, len);
    const struct vg_lsm_edge *e = t->nedges
        ? bsearch(&want, t->edges, t->nedges, sizeof *t->edges, vg_lsm_key_cmp) : NULL;
    return e ? e->child : VG_LSM_NONE;
}

bool vg_lsm_deleted(const char *path, size_t len)
{
    return len >= VG_LSM_DELETED_LEN &&
           !memcmp(path + len - VG_LSM_DELETED_LEN, VG_LSM_DELETED, VG_LSM_DELETED_LEN);
}

int vg_lsm_glob_run(const struct vg_lsm_glob *g, const char *path, uint32_t start, uint32_t len)
{
    struct vg_lsm_gm m;
    vg_lsm_gm_init(&m, start, len);
    uint64_t turns = VG_LSM_GM_TURNS((uint64_t)len, (uint64_t)g->nops);
    for (uint64_t i = 0; i < turns; i++)
        if (vg_lsm_gm_step(&m, g, path))
            return m.done == 1;
    return -1;
}

/* The child of node for the component path[start, start + len) when no
 * edge names it: the kid of the mask of its globs that match, or its star;
 * false when a match broke its bound (refuse). */
static bool glob_child(const struct vg_lsm_trie *t, uint32_t node, const char *path,
                       uint32_t start, uint32_t len, uint32_t *next)
{
    const struct vg_lsm_node *n = &t->nodes[node];
    uint32_t mask = 0;
    for (uint32_t k = 0; k < n->nglob && k < VG_LSM_NODE_GLOBS; k++) {
        int r = vg_lsm_glob_run(&t->globs[n->glob[k]], path, start, len);
        if (r < 0)
            return false;
        mask |= (uint32_t)r << k;
    }
    *next = mask ? t->kids[n->kids + mask - 1] : n->star;
    return true;
}

static void better(struct vg_lsm_verdict *best, const struct vg_lsm_verdict *v)
{
    if (v->prio < best->prio)
        *best = *v;
}

bool vg_lsm_trie_walk(const struct vg_lsm_trie *t, const char *path, struct vg_lsm_walk *w)
{
    static const struct vg_lsm_verdict none = {.prio = VG_LSM_NONE, .rule = VG_LSM_NONE};
    for (int c = 0; c < VG_LSM_NCLS; c++)
        w->sub[c] = w->end[c] = w->tree[c] = none;
    size_t len = path ? strlen(path) : 0;
    if (!t->nnodes || !len || path[0] != '/' || len > VG_LSM_PATH_MAX || vg_lsm_deleted(path, len))
        return false;
    uint32_t node = 0;
    bool whole = true;      /* the walk used up the path */
    for (int c = 0; c < VG_LSM_NCLS; c++)
        better(&w->sub[c], &t->nodes[node].sub[c]);
    for (size_t i = 0; i < len;) {
        while (i < len && path[i] == '/')
            i++;
        size_t start = i;
        while (i < len && path[i] != '/')
            i++;
        if (i == start)
            break;          /* only slashes were left */
        uint32_t next = child_of(t, node, path + start, i - start);
        if (next == VG_LSM_NONE &&
            !glob_child(t, node, path, (uint32_t)start, (uint32_t)(i - start), &next))
            return false;
        if (next == VG_LSM_NONE) {
            whole = false;  /* no pattern goes on: only the subs seen count */
            break;
        }
        node = next;
        for (int c = 0; c < VG_LSM_NCLS; c++)
            better(&w->sub[c], &t->nodes[node].sub[c]);
    }
    for (int c = 0; c < VG_LSM_NCLS && whole; c++) {
        w->end[c] = t->nodes[node].end[c];
        w->tree[c] = t->nodes[node].tree[c];
    }
    return true;
}

/* A verdict of the maps as the deciders give it: the class's default
 * when no rule. */
static struct vg_verdict verdict_of(const struct vg_lsm_trie *t, enum vg_class cls,
                                    const struct vg_lsm_verdict *v)
{
    if (v->prio == VG_LSM_NONE)
        return (struct vg_verdict){(enum vg_action)t->def.action[cls], NULL};
    return (struct vg_verdict){(enum vg_action)v->action, t->rules[v->rule]};
}

struct vg_verdict vg_lsm_walk_path(const struct vg_lsm_trie *t, const struct vg_lsm_walk *w,
                                   enum vg_class cls)
{
    struct vg_lsm_verdict best = w->sub[cls];
    better(&best, &w->end[cls]);
    return verdict_of(t, cls, &best);
}

struct vg_verdict vg_lsm_walk_tree(const struct vg_lsm_trie *t, const struct vg_lsm_walk *w,
                                   enum vg_class cls, bool *uniform)
{
    struct vg_lsm_verdict best = w->sub[cls];
    *uniform = best.prio <= w->tree[cls].prio;  /* the first rule matches all of it */
    better(&best, &w->tree[cls]);
    return verdict_of(t, cls, &best);
}

struct vg_verdict vg_lsm_trie_decide(const struct vg_lsm_trie *t, enum vg_class cls,
                                     const char *path)
{
    static const struct vg_verdict refuse = {VG_ACT_DENY, NULL};
    struct vg_lsm_walk w;
    if ((unsigned)cls >= VG_LSM_NCLS || !vg_lsm_trie_walk(t, path, &w))
        return refuse;
    return vg_lsm_walk_path(t, &w, cls);
}

static int strictness(enum vg_action a)
{
    return a == VG_ACT_KILL ? 2 : a == VG_ACT_DENY ? 1 : 0;
}

struct vg_verdict vg_lsm_move_decide(const struct vg_lsm_trie *t, const struct vg_lsm_walk *src,
                                     const struct vg_lsm_walk *dst, bool tree)
{
    for (int c = 0; c < VG_LSM_NCLS; c++) {
        bool su = true, du = true;
        struct vg_verdict from = tree ? vg_lsm_walk_tree(t, src, (enum vg_class)c, &su)
                                      : vg_lsm_walk_path(t, src, (enum vg_class)c);
        struct vg_verdict to = tree ? vg_lsm_walk_tree(t, dst, (enum vg_class)c, &du)
                                    : vg_lsm_walk_path(t, dst, (enum vg_class)c);
        if (!su)
            return (struct vg_verdict){VG_ACT_DENY, from.rule};
        if (!du)
            return (struct vg_verdict){VG_ACT_DENY, to.rule};
        if (strictness(to.action) < strictness(from.action))
            return (struct vg_verdict){VG_ACT_DENY, to.rule ? to.rule : from.rule};
    }
    return (struct vg_verdict){VG_ACT_ALLOW, NULL};
}

/* The more severe of two verdicts, the first when they are alike
 * (core/decide.c's ask_policy over check_path and check_path2). */
static struct vg_verdict worse(struct vg_verdict a, struct vg_verdict b)
{
    return strictness(b.action) > strictness(a.action) ? b : a;
}

struct vg_verdict vg_lsm_two_decide(const struct vg_lsm_trie *t, const struct vg_lsm_walk *src,
                                    const struct vg_lsm_walk *dst, const struct vg_lsm_two *how,
                                    bool *moved)
{
    struct vg_verdict v = worse(vg_lsm_walk_path(t, src, VG_CLASS_WRITE),
                                vg_lsm_walk_path(t, dst, VG_CLASS_WRITE));
    *moved = false;
    if (v.action != VG_ACT_ALLOW)
        return v;
    v = vg_lsm_move_decide(t, src, dst, !how->link && how->src_dir);
    if (v.action == VG_ACT_ALLOW && !how->link && how->exchange)
        v = vg_lsm_move_decide(t, dst, src, how->dst_dir);
    *moved = v.action != VG_ACT_ALLOW;
    return v;
}
