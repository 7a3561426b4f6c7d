/* hostaddr.c: the prefixes the egress filter blocks (see net.h). */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

/* Ranges that never name anything outside the sandbox but the host (or
 * nothing): when a packet for one of them leaves the namespace, pasta
 * would open the connection from the host, to the host. */
static const struct vg_ip fixed_blocks[] = {
    {.v6 = false, .a = {127}, .prefix = 8},                       /* loopback */
    {.v6 = false, .a = {0}, .prefix = 8},                         /* "this host" */
    {.v6 = true, .a = {[15] = 1}, .prefix = 128},                 /* ::1 */
    {.v6 = true, .a = {0}, .prefix = 128},                        /* :: */
    {.v6 = true, .a = {[10] = 0xff, [11] = 0xff}, .prefix = 96},  /* ::ffff:0:0/96 */
};

/* Destinations that are not one host: multicast (a group the host's own
 * stack belongs to, 224.0.0.1 and ff02::1 among them: pasta sends from
 * the host with multicast loopback on) and the limited broadcast.  With
 * the host's directed broadcasts and subnet-router anycast addresses
 * (below) they reach the host's wildcard-bound services. */
static const struct vg_ip fixed_special[] = {
    {.v6 = false, .a = {224}, .prefix = 4},                       /* multicast */
    {.v6 = false, .a = {255, 255, 255, 255}, .prefix = 32},       /* limited broadcast */
    {.v6 = true, .a = {0xff}, .prefix = 8},                       /* multicast */
};

#define V4_BITS 32u
#define V6_BITS 128u
/* RFC 3021 and RFC 6164 point-to-point prefixes have no broadcast or
 * subnet-router anycast address. */
#define V4_NO_BROADCAST 31u
#define V6_NO_ANYCAST 127u

static void add_to(struct vg_ip **list, unsigned *n, const struct vg_ip *ip)
{
    for (unsigned i = 0; i < *n; i++)
        if ((*list)[i].v6 == ip->v6 && (*list)[i].prefix == ip->prefix &&
            !memcmp((*list)[i].a, ip->a, sizeof ip->a))
            return;
    *list = vg_xrealloc(*list, (*n + 1) * sizeof **list);
    (*list)[(*n)++] = *ip;
}

static void add(struct vg_net_plan *n, const struct vg_ip *ip)
{
    add_to(&n->block, &n->nblock, ip);
}

static bool to_ip(const struct sockaddr *sa, struct vg_ip *ip)
{
    memset(ip, 0, sizeof *ip);
    if (sa->sa_family == AF_INET) {
        memcpy(ip->a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        ip->prefix = 32;
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        memcpy(ip->a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        ip->v6 = true;
        ip->prefix = 128;
        return true;
    }
    return false;
}

/* The prefix length of a netmask (its leading one bits). */
static unsigned mask_bits(const struct vg_ip *mask, unsigned full)
{
    unsigned bits = 0;
    while (bits < full && (mask->a[bits / 8] & (0x80u >> (bits % 8))))
        bits++;
    return bits;
}

/* The address with its host bits (past prefix) all set or all clear. */
static struct vg_ip host_bits(const struct vg_ip *ip, unsigned prefix, bool set)
{
    struct vg_ip r = *ip;
    unsigned full = ip->v6 ? V6_BITS : V4_BITS;
    for (unsigned b = prefix; b < full; b++) {
        uint8_t bit = (uint8_t)(0x80u >> (b % 8));
        r.a[b / 8] = set ? (uint8_t)(r.a[b / 8] | bit) : (uint8_t)(r.a[b / 8] & ~bit);
    }
    r.prefix = (uint8_t)full;
    return r;
}

/* One host address's special neighbours: the directed broadcast of its
 * IPv4 subnet, the subnet-router anycast address of its IPv6 prefix
 * (RFC 4291 2.6.1: the host answers it when it forwards; getifaddrs does
 * not list it). */
static void add_host_special(struct vg_net_plan *n, const struct ifaddrs *f, const struct vg_ip *ip)
{
    struct vg_ip mask;
    if (!f->ifa_netmask || !to_ip(f->ifa_netmask, &mask) || mask.v6 != ip->v6)
        return;
    unsigned bits = mask_bits(&mask, ip->v6 ? V6_BITS : V4_BITS);
    if (!ip->v6 && bits < V4_NO_BROADCAST) {
        struct vg_ip b = host_bits(ip, bits, true);
        add_to(&n->special, &n->nspecial, &b);
    } else if (ip->v6 && bits < V6_NO_ANYCAST) {
        struct vg_ip a = host_bits(ip, bits, false);
        add_to(&n->special, &n->nspecial, &a);
    }
}

bool vg_net_special(const struct vg_net_plan *n, const struct vg_ip *ip)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(fixed_special); i++)
        if (vg_ip_contains(&fixed_special[i], ip))
            return true;
    for (unsigned i = 0; n && i < n->nspecial; i++)
        if (vg_ip_contains(&n->special[i], ip))
            return true;
    return false;
}

/* An address a rule names exactly that is special: the filter lets it
 * through (nft.c), before it drops the rest. */
static void add_opened(const struct vg_ip *ip, void *arg)
{
    struct vg_net_plan *n = arg;
    if (vg_net_special(n, ip))
        add_to(&n->open, &n->nopen, ip);
}

static int read_host(struct vg_net_plan *n, const struct vg_policy *pol, struct vg_err *err)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0) {
        vg_errf(err, "read the host's addresses for the egress filter: %s", strerror(errno));
        return -1;
    }
    for (struct ifaddrs *f = ifs; f; f = f->ifa_next) {
        struct vg_ip ip;
        if (!f->ifa_addr || !to_ip(f->ifa_addr, &ip))
            continue;
        if (!vg_policy_names_ip(pol, &ip))
            add(n, &ip);
        add_host_special(n, f, &ip);
        struct vg_ip brd;
        /* A broadcast set by hand ("brd"); glibc fills the field with
         * the address itself when there is none. */
        if (!ip.v6 && (f->ifa_flags & IFF_BROADCAST) && f->ifa_broadaddr &&
            to_ip(f->ifa_broadaddr, &brd) && !brd.v6 && memcmp(brd.a, ip.a, 4))
            add_to(&n->special, &n->nspecial, &brd);
    }
    freeifaddrs(ifs);
    return 0;
}

int vg_net_plan_build(struct vg_net_plan *n, const struct vg_policy *pol, struct vg_err *err)
{
    n->egress = pol && vg_policy_net_egress(pol);
    if (!n->egress)
        return 0;
    for (size_t i = 0; i < VG_ARRAY_LEN(fixed_blocks); i++)
        add(n, &fixed_blocks[i]);
    for (size_t i = 0; i < VG_ARRAY_LEN(fixed_special); i++)
        add_to(&n->special, &n->nspecial, &fixed_special[i]);
    if (read_host(n, pol, err) < 0)
        return -1;
    vg_policy_each_exact_ip(pol, add_opened, n);
    return 0;
}

void vg_net_plan_free(struct vg_net_plan *n)
{
    free(n->block);
    free(n->special);
    free(n->open);
    n->block = n->special = n->open = NULL;
    n->nblock = n->nspecial = n->nopen = 0;
}
