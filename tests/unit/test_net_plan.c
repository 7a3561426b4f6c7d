/* test_net_plan.c: when a run gets egress (policy/net_grants.c) and what the
 * egress filter blocks (net/hostaddr.c): the loopback ranges always, each
 * host address unless a rule names that one address exactly. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include "net/net.h"
#include "tests/unit/check.h"
#include "tests/unit/policy_text.h"

static bool egress(const char *rules)
{
    char *text = vg_xasprintf("version 1\n%sdefault deny\n", rules);
    struct vg_policy *p = pol(text);
    bool e = vg_policy_net_egress(p);
    vg_policy_free(p);
    free(text);
    return e;
}

static void test_egress(void)
{
    CHECK(!egress(""));
    CHECK(!egress("allow connect tcp 127.0.0.1:8000-8063 [::1]:8000\n"));
    CHECK(!egress("allow connect tcp 127.0.0.0/8:*\nallow send udp 0.0.0.0:53\n"));
    CHECK(!egress("allow bind tcp *:*\n"));                 /* a bind stays inside */
    CHECK(!egress("allow connect unix /run/x.sock\n"));
    CHECK(!egress("deny connect tcp *:*\n"));
    CHECK(egress("allow connect tcp 10.1.2.3:443\n"));
    CHECK(egress("allow connect tcp 127.0.0.0/7:*\n"));     /* wider than loopback */
    CHECK(egress("allow send udp *:53\n"));
    CHECK(egress("allow connect tcp [fe80::/10]:443\n"));
    CHECK(egress("allow connect tcp localhost:80\n"));      /* a name: whatever it resolves to */
    CHECK(egress("default allow connect\n"));
}

static bool blocked(const struct vg_net_plan *n, const char *text)
{
    struct vg_ip ip = {0};
    ip.v6 = strchr(text, ':') != NULL;
    ip.prefix = ip.v6 ? 128 : 32;
    if (inet_pton(ip.v6 ? AF_INET6 : AF_INET, text, ip.a) != 1)
        return false;
    for (unsigned i = 0; i < n->nblock; i++)
        if (vg_ip_contains(&n->block[i], &ip))
            return true;
    return false;
}

/* The host's first non-loopback IPv4 address, or false. */
static bool host_v4(char *buf, size_t cap)
{
    struct ifaddrs *ifs, *f;
    bool found = false;
    if (getifaddrs(&ifs) < 0)
        return false;
    for (f = ifs; f && !found; f = f->ifa_next)
        if (f->ifa_addr && f->ifa_addr->sa_family == AF_INET) {
            const struct in_addr *a = &((struct sockaddr_in *)f->ifa_addr)->sin_addr;
            found = (ntohl(a->s_addr) >> 24) != 127 && inet_ntop(AF_INET, a, buf, (socklen_t)cap);
        }
    freeifaddrs(ifs);
    return found;
}

static void test_block_list(void)
{
    struct vg_err err = {{0}};
    struct vg_net_plan n = {0};
    struct vg_policy *p = pol("version 1\nallow read /x\n");
    CHECK(vg_net_plan_build(&n, p, &err) == 0 && !n.egress && n.nblock == 0);
    vg_policy_free(p);

    char host[INET_ADDRSTRLEN] = "";
    bool have = host_v4(host, sizeof host);
    p = pol("version 1\nallow connect tcp *:*\n");
    CHECK(vg_net_plan_build(&n, p, &err) == 0 && n.egress);
    CHECK(blocked(&n, "127.0.0.1") && blocked(&n, "127.255.0.9") && blocked(&n, "0.0.0.0"));
    CHECK(blocked(&n, "::1") && blocked(&n, "::") && blocked(&n, "::ffff:10.0.0.1"));
    CHECK(!blocked(&n, "10.99.0.1") && !blocked(&n, "2001:db8::1"));
    CHECK(!have || blocked(&n, host));
    vg_net_plan_free(&n);
    vg_policy_free(p);

    if (!have)
        return;
    /* a rule naming the host's address exactly opens it; a network does not */
    char *text = vg_xasprintf("version 1\nallow connect tcp %s:5432\n", host);
    p = pol(text);
    CHECK(vg_net_plan_build(&n, p, &err) == 0 && n.egress && !blocked(&n, host));
    CHECK(blocked(&n, "127.0.0.1"));
    vg_net_plan_free(&n);
    vg_policy_free(p);
    free(text);
    text = vg_xasprintf("version 1\nallow connect tcp %s/8:*\n", host);
    p = pol(text);
    CHECK(vg_net_plan_build(&n, p, &err) == 0 && blocked(&n, host));
    vg_net_plan_free(&n);
    vg_policy_free(p);
    free(text);
}

static struct vg_ip ip_of(const char *text)
{
    struct vg_ip ip = {0};
    ip.v6 = strchr(text, ':') != NULL;
    ip.prefix = ip.v6 ? 128 : 32;
    CHECK(inet_pton(ip.v6 ? AF_INET6 : AF_INET, text, ip.a) == 1);
    return ip;
}

static bool special(const struct vg_net_plan *n, const char *text)
{
    struct vg_ip ip = ip_of(text);
    return vg_net_special(n, &ip);
}

static bool opened(const struct vg_net_plan *n, const char *text)
{
    struct vg_ip ip = ip_of(text);
    for (unsigned i = 0; i < n->nopen; i++)
        if (vg_ip_contains(&n->open[i], &ip))
            return true;
    return false;
}

/* Multicast and the limited broadcast always; the host's directed
 * broadcasts and subnet-router anycast addresses from its interfaces;
 * never a host's own address; only an exact rule opens one. */
static void test_special(void)
{
    CHECK(special(NULL, "224.0.0.1") && special(NULL, "239.255.255.250"));
    CHECK(special(NULL, "255.255.255.255") && special(NULL, "ff02::1") &&
          special(NULL, "ff05::1:3"));
    CHECK(!special(NULL, "223.255.255.255") && !special(NULL, "240.0.0.1"));
    CHECK(!special(NULL, "10.0.0.255") && !special(NULL, "fe80::1"));

    struct vg_err err = {{0}};
    struct vg_net_plan n = {0};
    struct vg_policy *p = pol("version 1\nallow send udp *:*\nallow send udp 224.0.0.251:5353\n");
    CHECK(vg_net_plan_build(&n, p, &err) == 0 && n.egress);
    CHECK(opened(&n, "224.0.0.251") && !opened(&n, "224.0.0.1") && !opened(&n, "10.1.2.3"));
    struct ifaddrs *ifs;
    CHECK(getifaddrs(&ifs) == 0);
    for (struct ifaddrs *f = ifs; f; f = f->ifa_next) {
        if (!f->ifa_addr || !f->ifa_netmask || f->ifa_addr->sa_family != AF_INET)
            continue;
        uint32_t a = ntohl(((struct sockaddr_in *)f->ifa_addr)->sin_addr.s_addr);
        uint32_t m = ntohl(((struct sockaddr_in *)f->ifa_netmask)->sin_addr.s_addr);
        char own[INET_ADDRSTRLEN], brd[INET_ADDRSTRLEN];
        struct in_addr x = {htonl(a)}, y = {htonl(a | ~m)};
        inet_ntop(AF_INET, &x, own, sizeof own);
        inet_ntop(AF_INET, &y, brd, sizeof brd);
        CHECK(!special(&n, own));
        if ((a >> 24) != 127 && m != 0xffffffffu && m != 0xfffffffeu)
            CHECK(special(&n, brd));
    }
    freeifaddrs(ifs);
    vg_net_plan_free(&n);
    vg_policy_free(p);
}

int main(void)
{
    test_egress();
    test_block_list();
    test_special();
    return check_done();
}
