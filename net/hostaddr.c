/* hostaddr.c: the prefixes the egress filter blocks (see net.h). */
#include <errno.h>
#include <ifaddrs.h>
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

static void add(struct vg_net_plan *n, const struct vg_ip *ip)
{
    for (unsigned i = 0; i < n->nblock; i++)
        if (n->block[i].v6 == ip->v6 && n->block[i].prefix == ip->prefix &&
            !memcmp(n->block[i].a, ip->a, sizeof ip->a))
            return;
    n->block = vg_xrealloc(n->block, (n->nblock + 1) * sizeof *n->block);
    n->block[n->nblock++] = *ip;
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

int vg_net_plan_build(struct vg_net_plan *n, const struct vg_policy *pol, struct vg_err *err)
{
    n->egress = pol && vg_policy_net_egress(pol);
    if (!n->egress)
        return 0;
    for (size_t i = 0; i < VG_ARRAY_LEN(fixed_blocks); i++)
        add(n, &fixed_blocks[i]);
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0) {
        vg_errf(err, "read the host's addresses for the egress filter: %s", strerror(errno));
        return -1;
    }
    for (struct ifaddrs *f = ifs; f; f = f->ifa_next) {
        struct vg_ip ip;
        if (f->ifa_addr && to_ip(f->ifa_addr, &ip) && !vg_policy_names_ip(pol, &ip))
            add(n, &ip);
    }
    freeifaddrs(ifs);
    return 0;
}

void vg_net_plan_free(struct vg_net_plan *n)
{
    free(n->block);
    n->block = NULL;
    n->nblock = 0;
}
