/* nft.c: the egress filter (net.h), as one nftables transaction sent over
 * netlink: a table "vigil" of the inet family with an output chain, one
 * rule per blocked prefix:
 *     meta oiftype != loopback  meta nfproto ipvX  ip[6] daddr PREFIX
 *     reject with icmpx admin-prohibited
 * then, for a destination that is not one host (multicast, broadcast,
 * the host's anycast: hostaddr.c), an accept when a rule names it
 * exactly and a drop otherwise; and first of all a drop of every packet
 * carrying an IPv6 routing header or IPv4 options (source routes).
 * The output hook sees every packet the namespace sends, whatever route
 * or device a socket chose (SO_BINDTODEVICE, IP_PKTINFO), and only a
 * process with CAP_NET_ADMIN in the namespace's user namespace can change
 * it: the candidate has none and can make no namespace of its own. */
#include <endian.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <net/if_arp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net.h"

#define NFT_TABLE "vigil"
#define NFT_CHAIN "egress"
#define NFT_BUF 65536
#define NFT_MAX_NEST 8
/* where the destination address lies in each header */
#define IPV4_DADDR_OFF 16
#define IPV6_DADDR_OFF 24
/* the IPv4 header's length (in words) is the low nibble of its first
 * byte: 5 is a header without options */
#define IPV4_IHL_OFF 0
#define IPV4_IHL_MASK 0x0f
#define IPV4_IHL_PLAIN 5
#define IPV6_NEXTHDR_OFF 6
/* ICMPv6 router solicitation .. redirect (RFC 4861) */
#define ICMPV6_NDP_FIRST 133
#define ICMPV6_NDP_LAST 137

struct nlb {
    uint8_t buf[NFT_BUF];
    size_t len;
    size_t msg;                 /* offset of the open message */
    size_t nest[NFT_MAX_NEST];  /* offsets of the open nested attributes */
    unsigned depth;
    uint32_t seq;
    bool overflow;
};

static void *put(struct nlb *b, size_t n)
{
    size_t al = NLMSG_ALIGN(n);
    if (b->len + al > sizeof b->buf) {
        b->overflow = true;
        return NULL;
    }
    void *p = b->buf + b->len;
    memset(p, 0, al);
    b->len += al;
    return p;
}

static void msg_begin(struct nlb *b, uint16_t type, uint16_t flags, uint8_t family, uint16_t res)
{
    b->msg = b->len;
    struct nlmsghdr *h = put(b, sizeof *h);
    struct nfgenmsg *g = put(b, sizeof *g);
    if (!h || !g)
        return;
    h->nlmsg_type = type;
    h->nlmsg_flags = NLM_F_REQUEST | flags;
    h->nlmsg_seq = ++b->seq;
    g->nfgen_family = family;
    g->version = NFNETLINK_V0;
    g->res_id = htobe16(res);
}

static void msg_end(struct nlb *b)
{
    if (!b->overflow)
        ((struct nlmsghdr *)(b->buf + b->msg))->nlmsg_len = (uint32_t)(b->len - b->msg);
}

static void attr(struct nlb *b, uint16_t type, const void *data, size_t n)
{
    struct nlattr *a = put(b, NLA_HDRLEN + n);
    if (!a)
        return;
    a->nla_type = type;
    a->nla_len = (uint16_t)(NLA_HDRLEN + n);
    memcpy((uint8_t *)a + NLA_HDRLEN, data, n);
}

static void attr_str(struct nlb *b, uint16_t type, const char *s)
{
    attr(b, type, s, strlen(s) + 1);
}

static void attr_be32(struct nlb *b, uint16_t type, uint32_t v)
{
    uint32_t be = htobe32(v);
    attr(b, type, &be, sizeof be);
}

static void nest_begin(struct nlb *b, uint16_t type)
{
    size_t at = b->len;
    struct nlattr *a = put(b, NLA_HDRLEN);
    if (!a || b->depth == NFT_MAX_NEST) {
        b->overflow = true;
        return;
    }
    a->nla_type = type | NLA_F_NESTED;
    b->nest[b->depth++] = at;
}

static void nest_end(struct nlb *b)
{
    if (b->overflow)
        return;
    size_t at = b->nest[--b->depth];
    ((struct nlattr *)(b->buf + at))->nla_len = (uint16_t)(b->len - at);
}

/* One expression of a rule: its name, then its attributes (the caller
 * puts them and calls expr_end). */
static void expr_begin(struct nlb *b, const char *name)
{
    nest_begin(b, NFTA_LIST_ELEM);
    attr_str(b, NFTA_EXPR_NAME, name);
    nest_begin(b, NFTA_EXPR_DATA);
}

static void expr_end(struct nlb *b)
{
    nest_end(b);
    nest_end(b);
}

static void expr_meta(struct nlb *b, uint32_t key)
{
    expr_begin(b, "meta");
    attr_be32(b, NFTA_META_KEY, key);
    attr_be32(b, NFTA_META_DREG, NFT_REG_1);
    expr_end(b);
}

static void expr_payload_at(struct nlb *b, uint32_t base, uint32_t offset, uint32_t len)
{
    expr_begin(b, "payload");
    attr_be32(b, NFTA_PAYLOAD_DREG, NFT_REG_1);
    attr_be32(b, NFTA_PAYLOAD_BASE, base);
    attr_be32(b, NFTA_PAYLOAD_OFFSET, offset);
    attr_be32(b, NFTA_PAYLOAD_LEN, len);
    expr_end(b);
}

static void expr_payload(struct nlb *b, uint32_t offset, uint32_t len)
{
    expr_payload_at(b, NFT_PAYLOAD_NETWORK_HEADER, offset, len);
}

static void expr_cmp(struct nlb *b, uint32_t op, const void *data, size_t n)
{
    expr_begin(b, "cmp");
    attr_be32(b, NFTA_CMP_SREG, NFT_REG_1);
    attr_be32(b, NFTA_CMP_OP, op);
    nest_begin(b, NFTA_CMP_DATA);
    attr(b, NFTA_DATA_VALUE, data, n);
    nest_end(b);
    expr_end(b);
}

/* reg1 = (reg1 & mask) ^ 0, over n bytes. */
static void expr_bitwise(struct nlb *b, const void *mask, size_t n)
{
    static const uint8_t zero[16];
    expr_begin(b, "bitwise");
    attr_be32(b, NFTA_BITWISE_SREG, NFT_REG_1);
    attr_be32(b, NFTA_BITWISE_DREG, NFT_REG_1);
    attr_be32(b, NFTA_BITWISE_LEN, (uint32_t)n);
    nest_begin(b, NFTA_BITWISE_MASK);
    attr(b, NFTA_DATA_VALUE, mask, n);
    nest_end(b);
    nest_begin(b, NFTA_BITWISE_XOR);
    attr(b, NFTA_DATA_VALUE, zero, n);
    nest_end(b);
    expr_end(b);
}

/* reg1 = 1 when the IPv6 packet has an extension header of this type
 * (nft's "exthdr TYPE exists"). */
static void expr_exthdr_present(struct nlb *b, uint8_t type)
{
    expr_begin(b, "exthdr");
    attr_be32(b, NFTA_EXTHDR_DREG, NFT_REG_1);
    attr(b, NFTA_EXTHDR_TYPE, &type, sizeof type);
    attr_be32(b, NFTA_EXTHDR_OFFSET, 0);
    attr_be32(b, NFTA_EXTHDR_LEN, 1);
    attr_be32(b, NFTA_EXTHDR_FLAGS, NFT_EXTHDR_F_PRESENT);
    attr_be32(b, NFTA_EXTHDR_OP, NFT_EXTHDR_OP_IPV6);
    expr_end(b);
}

/* The rule's verdict: accept or drop (a dropped send fails EPERM). */
static void expr_verdict(struct nlb *b, uint32_t code)
{
    expr_begin(b, "immediate");
    attr_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
    nest_begin(b, NFTA_IMMEDIATE_DATA);
    nest_begin(b, NFTA_DATA_VERDICT);
    attr_be32(b, NFTA_VERDICT_CODE, code);
    nest_end(b);
    nest_end(b);
    expr_end(b);
}

static void expr_reject(struct nlb *b)
{
    uint8_t code = NFT_REJECT_ICMPX_ADMIN_PROHIBITED;
    expr_begin(b, "reject");
    attr_be32(b, NFTA_REJECT_TYPE, NFT_REJECT_ICMPX_UNREACH);
    attr(b, NFTA_REJECT_ICMP_CODE, &code, sizeof code);
    expr_end(b);
}

#define NFT_MSG(t) ((NFNL_SUBSYS_NFTABLES << 8) | (t))

static void add_table_chain(struct nlb *b)
{
    msg_begin(b, NFT_MSG(NFT_MSG_NEWTABLE), NLM_F_CREATE | NLM_F_ACK, NFPROTO_INET, 0);
    attr_str(b, NFTA_TABLE_NAME, NFT_TABLE);
    msg_end(b);
    msg_begin(b, NFT_MSG(NFT_MSG_NEWCHAIN), NLM_F_CREATE | NLM_F_ACK, NFPROTO_INET, 0);
    attr_str(b, NFTA_CHAIN_TABLE, NFT_TABLE);
    attr_str(b, NFTA_CHAIN_NAME, NFT_CHAIN);
    nest_begin(b, NFTA_CHAIN_HOOK);
    attr_be32(b, NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_OUT);
    attr_be32(b, NFTA_HOOK_PRIORITY, 0);
    nest_end(b);
    attr_be32(b, NFTA_CHAIN_POLICY, NF_ACCEPT);
    attr_str(b, NFTA_CHAIN_TYPE, "filter");
    msg_end(b);
}

static void rule_begin(struct nlb *b)
{
    msg_begin(b, NFT_MSG(NFT_MSG_NEWRULE), NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK,
              NFPROTO_INET, 0);
    attr_str(b, NFTA_RULE_TABLE, NFT_TABLE);
    attr_str(b, NFTA_RULE_CHAIN, NFT_CHAIN);
    nest_begin(b, NFTA_RULE_EXPRESSIONS);
}

static void rule_end(struct nlb *b)
{
    nest_end(b);
    msg_end(b);
}

static void match_proto(struct nlb *b, bool v6)
{
    uint8_t proto = v6 ? NFPROTO_IPV6 : NFPROTO_IPV4;
    expr_meta(b, NFT_META_NFPROTO);
    expr_cmp(b, NFT_CMP_EQ, &proto, sizeof proto);
}

/* The packet leaves the namespace (not on lo) for an address in ip. */
static void match_leaving_for(struct nlb *b, const struct vg_ip *ip)
{
    uint16_t loopback = ARPHRD_LOOPBACK;
    /* A packet for the sandbox itself (its own copy of the host's
     * address, its loopback) goes out on lo and stays inside. */
    expr_meta(b, NFT_META_OIFTYPE);
    expr_cmp(b, NFT_CMP_NEQ, &loopback, sizeof loopback);
    match_proto(b, ip->v6);
    uint32_t n = (ip->prefix + 7u) / 8u;
    expr_payload(b, ip->v6 ? IPV6_DADDR_OFF : IPV4_DADDR_OFF, n);
    if (ip->prefix % 8u) { /* 224.0.0.0/4: the last byte masked */
        uint8_t mask[16] = {0}, want[16] = {0};
        memset(mask, 0xff, n - 1);
        mask[n - 1] = (uint8_t)(0xff00u >> (ip->prefix % 8u));
        for (uint32_t i = 0; i < n; i++)
            want[i] = ip->a[i] & mask[i];
        expr_bitwise(b, mask, n);
        expr_cmp(b, NFT_CMP_EQ, want, n);
    } else {
        expr_cmp(b, NFT_CMP_EQ, ip->a, n);
    }
}

/* A host address: rejected, so that a connect fails at once. */
static void add_rule(struct nlb *b, const struct vg_ip *ip)
{
    rule_begin(b);
    match_leaving_for(b, ip);
    expr_reject(b);
    rule_end(b);
}

/* A special destination (hostaddr.c): accepted when a rule names it
 * exactly, else dropped (no ICMP error answers a multicast). */
static void add_special(struct nlb *b, const struct vg_ip *ip, uint32_t verdict)
{
    rule_begin(b);
    match_leaving_for(b, ip);
    expr_verdict(b, verdict);
    rule_end(b);
}

/* Neighbour discovery (router and neighbour solicitations and adverts,
 * to ff02::1:ffXX:XXXX and the like): answered by pasta itself, never
 * sent on; without it no IPv6 packet leaves at all.  Accepted before the
 * multicast drop. */
static void add_ndp_rule(struct nlb *b)
{
    static const struct vg_ip mcast6 = {.v6 = true, .a = {0xff}, .prefix = 8};
    uint8_t icmp6 = IPPROTO_ICMPV6, first = ICMPV6_NDP_FIRST, last = ICMPV6_NDP_LAST;
    rule_begin(b);
    match_leaving_for(b, &mcast6);
    expr_payload(b, IPV6_NEXTHDR_OFF, sizeof icmp6);
    expr_cmp(b, NFT_CMP_EQ, &icmp6, sizeof icmp6);
    expr_payload_at(b, NFT_PAYLOAD_TRANSPORT_HEADER, 0, sizeof first);
    expr_cmp(b, NFT_CMP_GTE, &first, sizeof first);
    expr_cmp(b, NFT_CMP_LTE, &last, sizeof last);
    expr_verdict(b, NF_ACCEPT);
    rule_end(b);
}

/* Packets whose destination field is not where they end: an IPv6 routing
 * header (its first hop is the destination, the decided address a later
 * segment) and IPv4 options (a source route, the same), in whatever way
 * the candidate put them there (setsockopt, a control message, a race
 * with the supervisor).  Dropped on every device. */
static void add_route_rules(struct nlb *b)
{
    uint8_t present = 1, hdr_mask = IPV4_IHL_MASK, plain = IPV4_IHL_PLAIN;
    rule_begin(b);
    match_proto(b, true);
    expr_exthdr_present(b, IPPROTO_ROUTING);
    expr_cmp(b, NFT_CMP_EQ, &present, sizeof present);
    expr_verdict(b, NF_DROP);
    rule_end(b);
    rule_begin(b);
    match_proto(b, false);
    expr_payload(b, IPV4_IHL_OFF, sizeof hdr_mask);
    expr_bitwise(b, &hdr_mask, sizeof hdr_mask);
    expr_cmp(b, NFT_CMP_NEQ, &plain, sizeof plain);
    expr_verdict(b, NF_DROP);
    rule_end(b);
}

/* Every message asked for an ack: read them all, the first error wins. */
static int read_acks(int fd, uint32_t first, uint32_t last, struct vg_err *err)
{
    static uint8_t buf[NFT_BUF];
    uint32_t acked = 0, want = last - first + 1;
    while (acked < want) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            vg_errf(err, "egress filter: netlink: %s", n < 0 ? strerror(errno) : "no answer");
            return -1;
        }
        size_t len = (size_t)n;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
            if (h->nlmsg_type != NLMSG_ERROR)
                continue;
            int e = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
            if (e) {
                vg_errf(err, "egress filter: nftables refused message %u: %s",
                        h->nlmsg_seq - first, strerror(-e));
                return -1;
            }
            acked++;
        }
    }
    return 0;
}

int vg_nft_block(const struct vg_net_plan *n, struct vg_err *err)
{
    static struct nlb b; /* 64k: not on init's stack */
    memset(&b, 0, sizeof b);
    msg_begin(&b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
    msg_end(&b);
    uint32_t first = b.seq + 1;
    add_table_chain(&b);
    add_route_rules(&b);
    for (unsigned i = 0; i < n->nblock; i++)
        add_rule(&b, &n->block[i]);
    for (unsigned i = 0; i < n->nopen; i++)
        add_special(&b, &n->open[i], NF_ACCEPT);
    add_ndp_rule(&b);
    for (unsigned i = 0; i < n->nspecial; i++)
        add_special(&b, &n->special[i], NF_DROP);
    uint32_t last = b.seq;
    msg_begin(&b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
    msg_end(&b);
    if (b.overflow) {
        vg_errf(err, "egress filter: %u addresses are too many for one transaction", n->nblock);
        return -1;
    }
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (fd < 0) {
        vg_errf(err, "egress filter: netlink socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_nl to = {.nl_family = AF_NETLINK};
    int rc = -1;
    if (sendto(fd, b.buf, b.len, 0, (struct sockaddr *)&to, sizeof to) != (ssize_t)b.len)
        vg_errf(err, "egress filter: netlink send: %s", strerror(errno));
    else
        rc = read_acks(fd, first, last, err);
    close(fd);
    return rc;
}
