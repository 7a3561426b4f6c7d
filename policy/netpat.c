/* netpat.c: see netpat.h. */
#include "policy/netpat.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "policy/dns_table.h"
#include "util/util.h"

static const char *const proto_names[VG_PROTO_N] = {"tcp", "udp", "unix"};

int vg_proto_from_name(const char *s)
{
    for (int i = 0; i < VG_PROTO_N; i++)
        if (!strcmp(s, proto_names[i]))
            return i;
    return -1;
}

const char *vg_proto_name(enum vg_proto p)
{
    return p < VG_PROTO_N ? proto_names[p] : "?";
}

static bool perr(size_t *bad, size_t at, char *buf, size_t cap, const char *fmt,
                 const char *arg)
{
    *bad = at;
    snprintf(buf, cap, fmt, arg);
    return false;
}

/* ::ffff:a.b.c.d is the IPv4 address a.b.c.d: store it that way so that one
 * comparison serves both socket families. */
static void unmap_v4(struct vg_ip *ip, bool has_prefix)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!ip->v6 || memcmp(ip->a, mapped, 12) || (has_prefix && ip->prefix < 96))
        return;
    memmove(ip->a, ip->a + 12, 4);
    memset(ip->a + 4, 0, 12);
    ip->v6 = false;
    ip->prefix = has_prefix ? (uint8_t)(ip->prefix - 96) : 32;
}

static void mask_host_bits(struct vg_ip *ip)
{
    for (unsigned bit = ip->prefix; bit < (ip->v6 ? 128u : 32u); bit++)
        ip->a[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
}

/* "ADDR" or "ADDR/LEN" of the given family, text [s, s+n). */
static bool parse_ip(const char *s, size_t n, bool v6, struct vg_ip *ip,
                     size_t base, size_t *bad, char *mb, size_t cap)
{
    char addr[64];
    const char *slash = memchr(s, '/', n);
    size_t alen = slash ? (size_t)(slash - s) : n;
    unsigned max = v6 ? 128 : 32;
    if (alen >= sizeof addr)
        return perr(bad, base, mb, cap, "bad IP address '%s'", "(too long)");
    memcpy(addr, s, alen);
    addr[alen] = 0;
    memset(ip, 0, sizeof *ip);
    ip->v6 = v6;
    ip->prefix = (uint8_t)max;
    if (inet_pton(v6 ? AF_INET6 : AF_INET, addr, ip->a) != 1)
        return perr(bad, base, mb, cap, v6 ? "bad IPv6 address '%s'" : "bad IPv4 address '%s'", addr);
    if (slash) {
        char len[8] = "";
        uint64_t v;
        size_t ln = n - alen - 1;
        if (ln < sizeof len)
            memcpy(len, slash + 1, ln), len[ln] = 0;
        if (ln >= sizeof len || !vg_parse_u64(len, &v) || v > max)
            return perr(bad, base + alen, mb, cap,
                        v6 ? "bad CIDR prefix '/%s' (IPv6 allows 0-128)"
                           : "bad CIDR prefix '/%s' (IPv4 allows 0-32)", len);
        ip->prefix = (uint8_t)v;
        mask_host_bits(ip);
    }
    unmap_v4(ip, slash != NULL);
    return true;
}

static bool parse_port(const char *s, size_t n, uint16_t *out)
{
    char tmp[8];
    uint64_t v;
    if (!n || n >= sizeof tmp)
        return false;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    if (!vg_parse_u64(tmp, &v) || v > 65535)
        return false;
    *out = (uint16_t)v;
    return true;
}

static bool parse_ports(struct vg_netpat *np, const char *s, size_t base,
                        size_t *bad, char *mb, size_t cap)
{
    if (!*s)
        return perr(bad, base, mb, cap, "%s", "missing port (write ADDR:PORT, ADDR:LO-HI or ADDR:*)");
    if (!strcmp(s, "*")) {
        np->any_port = true;
        return true;
    }
    for (const char *p = s;;) {
        size_t n = strcspn(p, ","), at = base + (size_t)(p - s);
        const char *dash = memchr(p, '-', n);
        char item[32];
        snprintf(item, sizeof item, "%.*s", (int)n, p);
        if (np->nranges == VG_NET_MAX_PORT_RANGES)
            return perr(bad, at, mb, cap, "%s", "too many port ranges (at most 16)");
        uint16_t *lo = &np->lo[np->nranges], *hi = &np->hi[np->nranges];
        bool ok = dash ? parse_port(p, (size_t)(dash - p), lo) &&
                             parse_port(dash + 1, n - (size_t)(dash - p) - 1, hi)
                       : parse_port(p, n, lo);
        if (!dash)
            *hi = *lo;
        if (!ok)
            return perr(bad, at, mb, cap, "bad port '%s' (0-65535, LO-HI or *)", item);
        if (*lo > *hi)
            return perr(bad, at, mb, cap, "bad port range '%s' (LO must not exceed HI)", item);
        np->nranges++;
        if (!p[n])
            return true;
        p += n + 1;
    }
}

/* A host name, or "*.NAME": any name below NAME (the only wildcard a
 * host takes; DNS names have no other structure to match on). */
static bool host_ok(const char *s, size_t n)
{
    if (n > 2 && s[0] == '*' && s[1] == '.')
        s += 2, n -= 2;
    if (!n || s[0] == '-' || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_", s[i]))
            return false;
    return true;
}

static bool parse_host(struct vg_netpat *np, const char *s, size_t n,
                       size_t *bad, char *mb, size_t cap)
{
    char h[256];
    snprintf(h, sizeof h, "%.*s", (int)(n < 255 ? n : 255), s);
    if (n == 1 && s[0] == '*') {
        np->kind = VG_ADDR_ANY;
        return true;
    }
    if (memchr(s, ':', n))
        return perr(bad, 0, mb, cap, "%s", "IPv6 addresses go in brackets, as in [::1]:80");
    if (strspn(h, "0123456789./") == n) {
        np->kind = VG_ADDR_V4;
        return parse_ip(s, n, false, &np->ip, 0, bad, mb, cap);
    }
    if (!host_ok(s, n) || n > 253)
        return perr(bad, 0, mb, cap, "bad host name '%s'", h);
    np->kind = VG_ADDR_HOST;
    np->host = vg_xstrdup(h);
    return true;
}

bool vg_netpat_parse_inet(struct vg_netpat *np, const char *s, size_t *bad,
                          char *mb, size_t cap)
{
    size_t ports_at;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close)
            return perr(bad, 0, mb, cap, "%s", "unclosed '['");
        /* the prefix may be written inside or after the brackets */
        size_t in = (size_t)(close - s) - 1, after = strcspn(close + 1, ":");
        char tmp[80];
        if (in + after >= sizeof tmp)
            return perr(bad, 1, mb, cap, "bad IPv6 address '%s'", "(too long)");
        snprintf(tmp, sizeof tmp, "%.*s%.*s", (int)in, s + 1, (int)after, close + 1);
        np->kind = VG_ADDR_V6;
        if (!parse_ip(tmp, in + after, true, &np->ip, 1, bad, mb, cap))
            return false;
        if (np->ip.v6 == false)
            np->kind = VG_ADDR_V4;
        ports_at = (size_t)(close - s) + 1 + after;
        if (s[ports_at] != ':')
            return perr(bad, ports_at, mb, cap, "%s", "missing port (write ADDR:PORT, ADDR:LO-HI or ADDR:*)");
    } else {
        const char *colon = strrchr(s, ':');
        size_t hn = colon ? (size_t)(colon - s) : strlen(s);
        if (!parse_host(np, s, hn, bad, mb, cap))
            return false;
        if (!colon)
            return perr(bad, hn, mb, cap, "%s", "missing port (write ADDR:PORT, ADDR:LO-HI or ADDR:*)");
        ports_at = hn;
    }
    return parse_ports(np, s + ports_at + 1, ports_at + 1, bad, mb, cap);
}

uint32_t vg_netpat_nports(const struct vg_netpat *np)
{
    uint32_t n = 0;
    if (np->any_port)
        return 65536;
    for (uint32_t i = 0; i < np->nranges; i++)
        n += (uint32_t)np->hi[i] - np->lo[i] + 1;
    return n;
}

void vg_netpat_free(struct vg_netpat *np)
{
    free(np->host);
    np->host = NULL;
}

static void reduce_unix(const struct sockaddr_un *un, socklen_t len,
                        struct vg_sockaddr *out)
{
    size_t n = len > offsetof(struct sockaddr_un, sun_path)
                   ? len - offsetof(struct sockaddr_un, sun_path) : 0;
    if (n > sizeof un->sun_path)
        n = sizeof un->sun_path;
    if (n && un->sun_path[0] == 0) {    /* abstract: shown as @name */
        size_t k = strnlen(un->sun_path + 1, n - 1);
        out->path[0] = '@';
        memcpy(out->path + 1, un->sun_path + 1, k);
        out->path[k + 1] = 0;
    } else {
        size_t k = strnlen(un->sun_path, n);
        memcpy(out->path, un->sun_path, k);
        out->path[k] = 0;
    }
}

bool vg_sockaddr_reduce(const struct sockaddr *sa, socklen_t len,
                        struct vg_sockaddr *out)
{
    memset(out, 0, sizeof *out);
    if (!sa || len < sizeof sa->sa_family)
        return false;
    out->family = sa->sa_family;
    if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const void *)sa;
        memcpy(out->ip.a, &in->sin_addr, 4);
        out->ip.prefix = 32;
        out->port = ntohs(in->sin_port);
        return true;
    }
    if (sa->sa_family == AF_INET6 && len >= 24) {
        const struct sockaddr_in6 *in6 = (const void *)sa;
        out->ip.v6 = true;
        memcpy(out->ip.a, &in6->sin6_addr, 16);
        out->ip.prefix = 128;
        out->port = ntohs(in6->sin6_port);
        unmap_v4(&out->ip, false);
        if (!out->ip.v6)
            out->family = AF_INET;
        return true;
    }
    if (sa->sa_family == AF_UNIX) {
        reduce_unix((const void *)sa, len, out);
        return true;
    }
    return false;
}

bool vg_ip_contains(const struct vg_ip *net, const struct vg_ip *ip)
{
    if (net->v6 != ip->v6)
        return false;
    unsigned full = net->prefix / 8, rest = net->prefix % 8;
    if (memcmp(net->a, ip->a, full))
        return false;
    if (!rest)
        return true;
    uint8_t mask = (uint8_t)(0xff00u >> rest);
    return (net->a[full] & mask) == (ip->a[full] & mask);
}

static bool port_in(const struct vg_netpat *np, uint16_t port)
{
    if (np->any_port)
        return true;
    for (uint32_t i = 0; i < np->nranges; i++)
        if (port >= np->lo[i] && port <= np->hi[i])
            return true;
    return false;
}

bool vg_host_match(const char *pattern, const char *name)
{
    if (pattern[0] == '*' && pattern[1] == '.') {
        size_t pn = strlen(pattern + 1), nn = strlen(name);
        return nn > pn && !strcasecmp(name + nn - pn, pattern + 1);
    }
    return !strcasecmp(pattern, name);
}

bool vg_netpat_match_inet(const struct vg_netpat *np, const struct vg_sockaddr *a)
{
    return vg_netpat_match_inet_names(np, a, NULL);
}

bool vg_netpat_match_inet_names(const struct vg_netpat *np, const struct vg_sockaddr *a,
                                struct vg_dns_table *names)
{
    if (a->family != AF_INET && a->family != AF_INET6)
        return false;
    if (!port_in(np, a->port))
        return false;
    switch (np->kind) {
    case VG_ADDR_ANY:
        return true;
    case VG_ADDR_V4:
    case VG_ADDR_V6:
        return vg_ip_contains(&np->ip, &a->ip);
    case VG_ADDR_HOST:
        return names && vg_dns_table_match(names, np->host, &a->ip);
    }
    return false;
}
