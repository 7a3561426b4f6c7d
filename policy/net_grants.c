/* net_grants.c: what the policy's network grants mean for the sandbox's own
 * network namespace (net/): does anything allowed lie outside it, and
 * which host addresses does a rule name one by one. */
#include <string.h>

#include "policy/policy_int.h"

/* The classes whose grants send packets somewhere: a bind stays inside. */
static const enum vg_class out_classes[] = {VG_CLASS_CONNECT, VG_CLASS_SEND};

/* 127.0.0.0/8, ::1 and the unspecified addresses (which reach loopback):
 * the sandbox's own loopback, whatever the netns. */
static bool loopback_only(const struct vg_ip *ip)
{
    static const uint8_t v6_lo[16] = {[15] = 1}, v6_any[16] = {0};
    if (!ip->v6)
        return (ip->prefix >= 8 && ip->a[0] == 127) ||
               (ip->prefix == 32 && !memcmp(ip->a, v6_any, 4));
    return ip->prefix == 128 && (!memcmp(ip->a, v6_lo, 16) || !memcmp(ip->a, v6_any, 16));
}

static bool reaches_out(const struct vg_prule *r)
{
    if (!r->is_net || r->act != VG_ACT_ALLOW || r->net.proto == VG_PROTO_UNIX)
        return false;
    return r->net.kind == VG_ADDR_ANY || r->net.kind == VG_ADDR_HOST || !loopback_only(&r->net.ip);
}

bool vg_policy_net_egress(const struct vg_policy *p)
{
    for (size_t k = 0; k < VG_ARRAY_LEN(out_classes); k++) {
        enum vg_class c = out_classes[k];
        if (p->def[c] == VG_ACT_ALLOW)
            return true;
        for (uint32_t i = 0; i < p->nlist[c]; i++)
            if (reaches_out(&p->rules[p->list[c][i]]))
                return true;
    }
    return false;
}

/* An allow rule of connect or send naming one address (not a network, a
 * name or any). */
static const struct vg_ip *exact_ip(const struct vg_prule *r)
{
    if (!r->is_net || r->act != VG_ACT_ALLOW || r->net.proto == VG_PROTO_UNIX ||
        r->net.kind == VG_ADDR_ANY || r->net.kind == VG_ADDR_HOST)
        return NULL;
    return r->net.ip.prefix == (r->net.ip.v6 ? 128 : 32) ? &r->net.ip : NULL;
}

bool vg_policy_names_ip(const struct vg_policy *p, const struct vg_ip *ip)
{
    unsigned full = ip->v6 ? 128 : 32;
    for (size_t k = 0; k < VG_ARRAY_LEN(out_classes); k++) {
        enum vg_class c = out_classes[k];
        for (uint32_t i = 0; i < p->nlist[c]; i++) {
            const struct vg_ip *e = exact_ip(&p->rules[p->list[c][i]]);
            if (e && e->v6 == ip->v6 && !memcmp(e->a, ip->a, full / 8))
                return true;
        }
    }
    return false;
}

void vg_policy_each_exact_ip(const struct vg_policy *p,
                             void (*fn)(const struct vg_ip *ip, void *arg), void *arg)
{
    for (size_t k = 0; k < VG_ARRAY_LEN(out_classes); k++) {
        enum vg_class c = out_classes[k];
        for (uint32_t i = 0; i < p->nlist[c]; i++) {
            const struct vg_ip *e = exact_ip(&p->rules[p->list[c][i]]);
            if (e)
                fn(e, arg);
        }
    }
}

bool vg_policy_decide_exact(const struct vg_policy *p, enum vg_class cls, const char *proto,
                            const struct sockaddr *sa, socklen_t len, struct vg_verdict *v)
{
    struct vg_sockaddr a;
    int pr = proto ? vg_proto_from_name(proto) : -1;
    if (cls >= VG_NPCLASS || !p->compiled || pr < 0 || !vg_sockaddr_reduce(sa, len, &a))
        return false;
    for (uint32_t i = 0; i < p->nlist[cls]; i++) {
        const struct vg_prule *r = &p->rules[p->list[cls][i]];
        bool exact = r->is_net && (int)r->net.proto == pr &&
                     (r->net.kind == VG_ADDR_V4 || r->net.kind == VG_ADDR_V6) &&
                     r->net.ip.prefix == (r->net.ip.v6 ? 128 : 32);
        if (exact && vg_netpat_match_inet(&r->net, &a)) {
            *v = (struct vg_verdict){r->act, &r->src};
            return true;
        }
    }
    return false;
}
