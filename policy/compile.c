/* compile.c: turn a parsed policy into something fast to consult (places
 * expanded, globs compiled; host names stay names), and the decisions.
 * Deciding allocates nothing: the path is normalized and split once into a
 * stack buffer, then each rule of the class is tried in order, with the
 * literal prefix compared before any wildcard work. */
#include <netdb.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "policy/policy_int.h"

static const size_t place_field[] = {
    [VG_PLACE_HOME] = offsetof(struct vg_places, home),
    [VG_PLACE_WORK] = offsetof(struct vg_places, work),
    [VG_PLACE_TMP] = offsetof(struct vg_places, tmp),
};
static const char *const place_var[] = {
    [VG_PLACE_HOME] = "~", [VG_PLACE_WORK] = "$WORK", [VG_PLACE_TMP] = "$TMP",
};

const char *vg_place_var(enum vg_place pl)
{
    return pl == VG_PLACE_NONE ? "" : place_var[pl];
}

const char *vg_place_path(enum vg_place pl, const struct vg_places *places)
{
    if (pl == VG_PLACE_NONE)
        return "";
    return *(const char *const *)((const char *)places + place_field[pl]);
}

char *vg_pol_expand_literal(enum vg_place pl, const char *rest,
                            const struct vg_places *places)
{
    char *s = vg_xasprintf("%s%s", vg_place_path(pl, places), rest);
    vg_path_squash(s);
    return s;
}

/* as_written: the resolved forms are compiled as the alternative they
 * came from (so they add nothing), keeping one glob per alternative. */
static void compile_ppat(struct vg_ppat *pp, const struct vg_places *places, bool as_written)
{
    pp->globs = vg_xcalloc(pp->nalts, sizeof *pp->globs);
    for (uint32_t i = 0; i < pp->nalts; i++) {
        struct vg_buf b = {0};
        uint32_t src = as_written && i >= pp->nwritten ? pp->from[i - pp->nwritten] : i;
        vg_glob_put_literal(&b, vg_place_path(pp->place, places));
        vg_buf_puts(&b, pp->alts[src]);
        vg_glob_compile(b.data, &pp->globs[i]);
        vg_buf_free(&b);
    }
}

static bool ppat_match(const struct vg_ppat *pp, const struct vg_spath *sp)
{
    for (uint32_t i = 0; i < pp->nalts; i++)
        if (vg_glob_match(&pp->globs[i], sp))
            return true;
    return false;
}

static int check_places(const struct vg_places *places, struct vg_err *err)
{
    for (int pl = VG_PLACE_HOME; pl <= VG_PLACE_TMP; pl++) {
        const char *s = vg_place_path((enum vg_place)pl, places);
        if (!s || s[0] != '/') {
            vg_errf(err, "policy: %s must be an absolute path (got '%s')", place_var[pl], s ? s : "(none)");
            return -1;
        }
    }
    return 0;
}

static bool overlaps(const char *a, const char *b)
{
    return vg_path_under(a, b) || vg_path_under(b, a);
}

/* Is a read-only tree the rules were resolved in not the host's in this
 * run: the workdir, the home or a bind of the run's own in it (or it in
 * them)?  Then what was resolved there could change: rules are matched
 * as written only. */
static bool trees_unsure(const struct vg_policy *p, const struct vg_places *places,
                         const struct vg_bind *binds, unsigned nbinds)
{
    if (!p->ro)
        return false;
    for (unsigned i = 0; i < p->ro->ndirs; i++) {
        const char *d = p->ro->dirs[i];
        /* an image's trees show none of the host's home (binds aside) */
        if (overlaps(places->work, d) || (!p->ro->root && overlaps(places->home, d)))
            return true;
        for (unsigned j = 0; j < nbinds; j++) {
            const struct vg_bind *b = &binds[j];
            if (overlaps(b->dst ? b->dst : b->src, d))
                return true;
        }
    }
    return false;
}

int vg_pol_compile(struct vg_policy *p, const struct vg_places *places, struct vg_err *err)
{
    return vg_policy_compile_run(p, places, NULL, 0, err);
}

int vg_policy_compile_run(struct vg_policy *p, const struct vg_places *places,
                          const struct vg_bind *binds, unsigned nbinds, struct vg_err *err)
{
    if (check_places(places, err))
        return -1;
    vg_pol_uncompile(p);
    bool as_written = trees_unsure(p, places, binds, nbinds);
    for (uint32_t i = 0; i < p->nrules; i++) {
        struct vg_prule *r = &p->rules[i];
        if (r->path.nalts)
            compile_ppat(&r->path, places, as_written);
    }
    for (uint32_t i = 0; i < p->nbinds; i++) {
        struct vg_pbind *b = &p->binds[i];
        b->src_exp = vg_pol_expand_literal(b->src_place, b->src_rest, places);
        b->dst_exp = b->dst_rest ? vg_pol_expand_literal(b->dst_place, b->dst_rest, places)
                                 : vg_xstrdup(b->src_exp);
        b->out.src = b->src_exp;
        b->out.dst = b->dst_exp;
    }
    p->compiled = true;
    return 0;
}

void vg_pol_uncompile(struct vg_policy *p)
{
    for (uint32_t i = 0; i < p->nrules; i++) {
        struct vg_ppat *pp = &p->rules[i].path;
        if (pp->globs)
            for (uint32_t j = 0; j < pp->nalts; j++)
                vg_glob_free(&pp->globs[j]);
        free(pp->globs);
        pp->globs = NULL;
    }
    for (uint32_t i = 0; i < p->nbinds; i++) {
        struct vg_pbind *b = &p->binds[i];
        free(b->src_exp);
        free(b->dst_exp);
        b->src_exp = b->dst_exp = NULL;
        b->out.src = b->out.dst = b->src_text;
    }
    p->compiled = false;
}

int vg_policy_compile(struct vg_policy *p, const struct vg_places *places,
                      struct vg_err *err)
{
    return vg_pol_compile(p, places, err);
}

static struct vg_verdict by_default(const struct vg_policy *p, enum vg_class cls)
{
    struct vg_verdict v = {VG_ACT_DENY, NULL};
    if (cls < VG_NPCLASS && p->compiled)
        v.action = p->def[cls];
    return v;
}

struct vg_verdict vg_policy_decide_path(const struct vg_policy *p,
                                        enum vg_class cls, const char *path)
{
    struct vg_verdict v = by_default(p, cls);
    struct vg_spath sp;
    char buf[VG_SPATH_MAX + 1];
    if (cls >= VG_NPCLASS || !p->compiled)
        return v;
    if (!path || !vg_spath_split(&sp, buf, path)) {
        v.action = VG_ACT_DENY;     /* too long to judge: refuse */
        return v;
    }
    for (uint32_t i = 0; i < p->nlist[cls]; i++) {
        const struct vg_prule *r = &p->rules[p->list[cls][i]];
        if (!r->is_net && ppat_match(&r->path, &sp))
            return (struct vg_verdict){r->act, &r->src};
    }
    return v;
}

static bool net_rule_matches(const struct vg_prule *r, int proto, const struct vg_sockaddr *a,
                             const struct vg_spath *sp, struct vg_dns_table *names)
{
    if (!r->is_net || (int)r->net.proto != proto)
        return false;
    if (proto == VG_PROTO_UNIX)
        return a->family == AF_UNIX && ppat_match(&r->path, sp);
    return vg_netpat_match_inet_names(&r->net, a, names);
}

struct vg_verdict vg_policy_decide_net(const struct vg_policy *p,
                                       enum vg_class cls, const char *proto,
                                       const struct sockaddr *sa, socklen_t len)
{
    return vg_policy_decide_net_names(p, cls, proto, sa, len, NULL);
}

/* The classes whose host-name rules let the resolver answer a name. */
static const enum vg_class name_classes[] = {VG_CLASS_CONNECT, VG_CLASS_SEND};

struct vg_verdict vg_policy_decide_name(const struct vg_policy *p, const char *name)
{
    if (!p->compiled || !name || !name[0])
        return (struct vg_verdict){VG_ACT_DENY, NULL};
    for (size_t c = 0; c < VG_ARRAY_LEN(name_classes); c++)
        for (uint32_t i = 0; i < p->nlist[name_classes[c]]; i++) {
            const struct vg_prule *r = &p->rules[p->list[name_classes[c]][i]];
            if (r->is_net && r->act == VG_ACT_ALLOW && r->net.kind == VG_ADDR_HOST &&
                vg_host_match(r->net.host, name))
                return (struct vg_verdict){VG_ACT_ALLOW, &r->src};
        }
    return (struct vg_verdict){VG_ACT_DENY, NULL};
}

struct vg_verdict vg_policy_decide_net_names(const struct vg_policy *p, enum vg_class cls,
                                             const char *proto, const struct sockaddr *sa,
                                             socklen_t len, struct vg_dns_table *names)
{
    struct vg_verdict v = by_default(p, cls);
    struct vg_sockaddr a;
    struct vg_spath sp;
    char buf[VG_SPATH_MAX + 1];
    int pr = proto ? vg_proto_from_name(proto) : -1;
    if (cls >= VG_NPCLASS || !(VG_CLS_BIT(cls) & VG_CLS_NET_MASK) || !p->compiled || pr < 0 ||
        !vg_sockaddr_reduce(sa, len, &a))
        return v;
    if (!vg_spath_split(&sp, buf, a.path))
        return v;
    for (uint32_t i = 0; i < p->nlist[cls]; i++) {
        const struct vg_prule *r = &p->rules[p->list[cls][i]];
        if (net_rule_matches(r, pr, &a, &sp, names))
            return (struct vg_verdict){r->act, &r->src};
    }
    return v;
}
