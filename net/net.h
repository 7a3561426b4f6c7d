/* net.h: the sandbox's own network namespace.
 *
 * Every run gets a network namespace of its own: its loopback, up, and
 * nothing of the host's.  When the policy allows something beyond that
 * loopback (policy/net_grants.c), the namespace is connected to the outside
 * by pasta (egress.c), and a packet filter vigil installs in the
 * namespace before the candidate runs (nft.c) rejects every packet that
 * would leave it for an address of the host's own (hostaddr.c), unless a
 * rule names that address.  The supervisor still decides every connect
 * and send; the namespace and the filter hold if it does not. */
#ifndef VG_NET_H
#define VG_NET_H
#include <stdbool.h>

#include "policy/netpat.h"
#include "policy/policy.h"
#include "util/util.h"

/* The resolver the sandbox is given is VG_DNS_ADDR (net/dns.h): an
 * address of its own loopback, so it is there with or without egress, and
 * nothing of it goes through pasta (which forwards no DNS). */

/* What the plan says about the network (launcher/plan.c fills it). */
struct vg_net_plan {
    bool egress;            /* start pasta: the policy allows outside addresses */
    struct vg_ip *block;    /* prefixes no packet may leave the netns for */
    unsigned nblock;
    /* Destinations that are not one host (multicast, broadcast, the
     * host's subnet-router anycast): dropped unless in open, the ones a
     * rule names exactly. */
    struct vg_ip *special;
    unsigned nspecial;
    struct vg_ip *open;
    unsigned nopen;
};

/* hostaddr.c: the egress filter's list, for this host and policy: every
 * address of the host's interfaces (exact) that no rule names, and the
 * loopback, unspecified and IPv4-mapped ranges, which only ever mean the
 * host when they leave the namespace; the special destinations (multicast,
 * the limited broadcast, each host subnet's directed broadcast and each
 * host prefix's subnet-router anycast address) and those of them a rule
 * names exactly.  -1 with err when the host's addresses cannot be read
 * (then nothing is known to be safe). */
int vg_net_plan_build(struct vg_net_plan *n, const struct vg_policy *pol, struct vg_err *err);
void vg_net_plan_free(struct vg_net_plan *n);
/* Is ip multicast, the limited broadcast, or (n not NULL, with egress)
 * one of the host's directed broadcasts or subnet-router anycast
 * addresses?  The supervisor refuses a connect or send to one unless a
 * rule names it exactly (core/decide.c); the filter drops it. */
bool vg_net_special(const struct vg_net_plan *n, const struct vg_ip *ip);

/* nft.c: in the sandbox's netns, with CAP_NET_ADMIN there (its pid 1):
 * an nftables output hook that rejects (ICMP administratively
 * prohibited, so a connect fails at once) every packet for a blocked
 * prefix that does not go out on loopback.  -1 with err. */
int vg_nft_block(const struct vg_net_plan *n, struct vg_err *err);
/* loopback.c: bring up `lo` in the caller's network namespace (-1 with errno). */
int vg_loopback_up(void);
#endif
