/* move.c: may a rename or a hard link give files new names?
 *
 * A rename takes the object at src, and everything below it when it is a
 * directory, out of the rules that decided it there and puts it under the
 * rules of dst; a link gives one file a second name.  The candidate gains
 * nothing if, for every file class and every name the object gets, the new
 * name is decided at least as strictly as the old one.  For a directory
 * that is checked without listing it (it can change under us): for each
 * class, the first rule that can match anything in the tree must match all
 * of it (vg_glob_tree_relation), on both sides, and the destination's
 * verdict must be at least as strict as the source's.  A rule that matches
 * only part of a tree (deny read $WORK/data/private/ ** while renaming
 * $WORK/data) makes the rename refused. */
#include "policy/policy_int.h"

/* The file classes a name decides (connect/bind/send to unix sockets by
 * path are not covered here; see docs/POLICY.md). */
static const enum vg_class file_classes[] = {VG_CLASS_READ, VG_CLASS_WRITE, VG_CLASS_EXEC};

struct tree_verdict {
    bool uniform;              /* one verdict for the whole tree */
    struct vg_verdict v;       /* it, or the rule that splits the tree */
};

static enum vg_glob_rel ppat_relation(const struct vg_ppat *pp, const struct vg_spath *d,
                                      bool tree)
{
    enum vg_glob_rel rel = VG_GLOB_NONE;
    for (uint32_t i = 0; i < pp->nalts; i++) {
        enum vg_glob_rel r = tree ? vg_glob_tree_relation(&pp->globs[i], d)
                                  : vg_glob_match(&pp->globs[i], d) ? VG_GLOB_ALL : VG_GLOB_NONE;
        if (r > rel)
            rel = r;
    }
    return rel;
}

static struct tree_verdict decide_tree(const struct vg_policy *p, enum vg_class cls,
                                       const struct vg_spath *d, bool tree)
{
    for (uint32_t i = 0; i < p->nlist[cls]; i++) {
        const struct vg_prule *r = &p->rules[p->list[cls][i]];
        if (r->is_net)
            continue;
        enum vg_glob_rel rel = ppat_relation(&r->path, d, tree);
        if (rel != VG_GLOB_NONE)
            return (struct tree_verdict){rel == VG_GLOB_ALL, {r->act, &r->src}};
    }
    return (struct tree_verdict){true, {p->def[cls], NULL}};
}

static int strictness(enum vg_action a)
{
    return a == VG_ACT_KILL ? 2 : a == VG_ACT_DENY ? 1 : 0;
}

struct vg_verdict vg_policy_decide_move(const struct vg_policy *p, const char *src,
                                        const char *dst, bool tree)
{
    struct vg_verdict ok = {VG_ACT_ALLOW, NULL}, refused = {VG_ACT_DENY, NULL};
    struct vg_spath s, d;
    char sbuf[VG_SPATH_MAX + 1], dbuf[VG_SPATH_MAX + 1];
    if (!p->compiled || !src || !dst || !vg_spath_split(&s, sbuf, src) ||
        !vg_spath_split(&d, dbuf, dst))
        return refused;
    for (unsigned i = 0; i < VG_ARRAY_LEN(file_classes); i++) {
        enum vg_class cls = file_classes[i];
        struct tree_verdict from = decide_tree(p, cls, &s, tree);
        struct tree_verdict to = decide_tree(p, cls, &d, tree);
        if (!from.uniform)
            return (struct vg_verdict){VG_ACT_DENY, from.v.rule};
        if (!to.uniform)
            return (struct vg_verdict){VG_ACT_DENY, to.v.rule};
        if (strictness(to.v.action) < strictness(from.v.action))
            return (struct vg_verdict){VG_ACT_DENY, to.v.rule ? to.v.rule : from.v.rule};
    }
    return ok;
}
