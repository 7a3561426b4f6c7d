/* test_dns.c: vigil's resolver's parts that need no sandbox: the DNS
 * parser against hostile messages (net/dns_wire.c), the table of
 * handed-out addresses (policy/dns_table.c), and what host-name rules allow
 * and match with it (policy/: vg_policy_decide_name, _decide_net_names). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "check.h"
#include "policy/dns_table.h"
#include "net/dns_wire.h"
#include "policy/policy.h"

static size_t query(uint8_t *m, const char *name, uint16_t type)
{
    uint8_t hdr[12] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
    size_t n = sizeof hdr;
    memcpy(m, hdr, n);
    for (const char *p = name; *p;) {
        size_t l = strcspn(p, ".");
        m[n++] = (uint8_t)l;
        memcpy(m + n, p, l);
        n += l;
        p += l + (p[l] == '.');
    }
    m[n++] = 0;
    m[n++] = (uint8_t)(type >> 8);
    m[n++] = (uint8_t)type;
    m[n++] = 0;
    m[n++] = 1;
    return n;
}

static void test_queries(void)
{
    uint8_t m[600];
    struct vg_dns_query q;
    size_t n = query(m, "PyPI.org", VG_DNS_T_A);
    CHECK(vg_dns_parse_query(m, n, &q) == VG_DNSQ_OK && streq(q.name, "pypi.org") &&
          q.qtype == VG_DNS_T_A && q.id == 0x1234 && q.rd);
    CHECK(vg_dns_parse_query(m, 11, &q) == VG_DNSQ_DROP);          /* no header */
    m[2] |= 0x80;
    CHECK(vg_dns_parse_query(m, n, &q) == VG_DNSQ_DROP);           /* a response */
    m[2] &= 0x7f;
    CHECK(vg_dns_parse_query(m, n - 1, &q) == VG_DNSQ_FORMERR);    /* class cut off */
    m[12] = 0xc0, m[13] = 12;                                       /* a pointer to itself */
    CHECK(vg_dns_parse_query(m, n, &q) == VG_DNSQ_FORMERR);
    n = query(m, "a b.org", VG_DNS_T_A);                            /* a space in a label */
    CHECK(vg_dns_parse_query(m, n, &q) == VG_DNSQ_FORMERR);
    n = query(m, "evil\x01.org", VG_DNS_T_A);
    CHECK(vg_dns_parse_query(m, n, &q) == VG_DNSQ_FORMERR);
    m[12] = 63;                                                     /* label past the end */
    CHECK(vg_dns_parse_query(m, 20, &q) == VG_DNSQ_FORMERR);
    char longname[300];
    memset(longname, 'a', sizeof longname);
    for (int i = 60; i < 299; i += 61)
        longname[i] = '.';
    longname[299] = 0;                                              /* 300 > 253 */
    n = query(m, longname, VG_DNS_T_A);
    CHECK(vg_dns_parse_query(m, n, &q) == VG_DNSQ_FORMERR);
    n = query(m, "x.org", VG_DNS_T_A);
    m[5] = 2;                                                       /* two questions */
    CHECK(vg_dns_parse_query(m, n, &q) == VG_DNSQ_FORMERR);
}

static void test_replies(void)
{
    uint8_t m[600], r[VG_DNS_UDP_MAX];
    struct vg_dns_query q;
    struct vg_dns_answer a;
    size_t n = query(m, "svc.test", VG_DNS_T_A);
    CHECK(vg_dns_parse_query(m, n, &q) == VG_DNSQ_OK);
    struct vg_ip ip[2] = {{.a = {10, 0, 0, 1}, .prefix = 32}, {.v6 = true, .a = {0xfd}, .prefix = 128}};
    size_t rn = vg_dns_build_reply(r, sizeof r, &q, VG_DNS_NOERROR, ip, 2, 30);
    CHECK(rn && vg_dns_parse_reply(r, rn, 0x1234, &q, &a) && a.n == 1 && a.ttl == 30 &&
          !memcmp(a.ip[0].a, ip[0].a, 4));                          /* the AAAA is not an A */
    CHECK(!vg_dns_parse_reply(r, rn, 0x1235, &q, &a));              /* another id */
    struct vg_dns_query other;
    size_t on = query(m, "svc.tesu", VG_DNS_T_A);
    CHECK(vg_dns_parse_query(m, on, &other) == VG_DNSQ_OK);
    CHECK(!vg_dns_parse_reply(r, rn, 0x1234, &other, &a));          /* another question */
    r[rn - 16] = 0xc0, r[rn - 15] = (uint8_t)(rn - 16);             /* the answer's name points at itself */
    CHECK(vg_dns_parse_reply(r, rn, 0x1234, &q, &a) && a.n == 1);   /* skipped, never followed */
    r[rn - 16] = 0x3f;                                              /* a label running past the end */
    CHECK(!vg_dns_parse_reply(r, rn, 0x1234, &q, &a));
    CHECK(!vg_dns_parse_reply(r, rn - 3, 0x1234, &q, &a) || a.n == 0);
    CHECK(vg_dns_build_reply(r, 20, &q, 0, ip, 1, 1) == 0);         /* no room: nothing */
}

static struct vg_ip v4(const char *s)
{
    struct vg_ip ip = {.prefix = 32};
    inet_pton(AF_INET, s, ip.a);
    return ip;
}

static enum vg_action conn(const struct vg_policy *p, struct vg_dns_table *t, const char *addr,
                           uint16_t port)
{
    struct sockaddr_in s = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, addr, &s.sin_addr);
    return vg_policy_decide_net_names(p, VG_CLASS_CONNECT, "tcp", (struct sockaddr *)&s,
                                      sizeof s, t).action;
}

static void test_names(void)
{
    struct vg_err err = {{0}};
    struct vg_places places = {"/h", "/w", "/tmp"};
    struct vg_policy *p = vg_policy_parse("t.policy",
        "version 1\nallow connect tcp *.example.org:443\nallow send udp svc.test:*\n"
        "allow connect tcp 10.0.0.0/8:*\n", &err);
    CHECK(p && vg_policy_compile(p, &places, &err) == 0);
    struct vg_verdict v = vg_policy_decide_name(p, "a.example.org");
    CHECK(v.action == VG_ACT_ALLOW && v.rule && v.rule->line == 2);
    CHECK(vg_policy_decide_name(p, "b.a.EXAMPLE.org").action == VG_ACT_ALLOW);
    CHECK(vg_policy_decide_name(p, "example.org").action == VG_ACT_DENY);
    CHECK(vg_policy_decide_name(p, "aexample.org").action == VG_ACT_DENY);
    CHECK(vg_policy_decide_name(p, "a.example.org.evil").action == VG_ACT_DENY);
    CHECK(vg_policy_decide_name(p, "svc.test").action == VG_ACT_ALLOW);   /* send rules too */
    CHECK(vg_policy_decide_name(p, "10.1.2.3").action == VG_ACT_DENY);    /* addresses name no host */
    CHECK(vg_policy_decide_name(p, "").action == VG_ACT_DENY);

    struct vg_dns_table t;
    vg_dns_table_init(&t);
    CHECK(conn(p, &t, "192.0.2.1", 443) == VG_ACT_DENY);       /* nothing handed out yet */
    struct vg_ip ip[2] = {v4("192.0.2.1"), v4("192.0.2.2")};
    CHECK(vg_dns_table_add(&t, "a.example.org", ip, 1));
    CHECK(vg_dns_table_add(&t, "svc.test", ip + 1, 1));
    CHECK(conn(p, &t, "192.0.2.1", 443) == VG_ACT_ALLOW);
    CHECK(conn(p, &t, "192.0.2.1", 80) == VG_ACT_DENY);        /* the rule's port still counts */
    CHECK(conn(p, &t, "192.0.2.2", 443) == VG_ACT_DENY);       /* svc.test's is not *.example.org's */
    CHECK(conn(p, NULL, "192.0.2.1", 443) == VG_ACT_DENY);     /* no resolver: no name */
    char name[VG_DNS_NAME_MAX + 1];
    CHECK(vg_dns_table_name(&t, &ip[1], name, sizeof name) && streq(name, "svc.test"));
    CHECK(vg_dns_table_add(&t, "svc.test", ip, 1));            /* the latest name of 192.0.2.1 */
    CHECK(vg_dns_table_name(&t, &ip[0], name, sizeof name) && streq(name, "svc.test"));
    /* full: all of an answer or none of it */
    for (uint32_t i = t.n; i < VG_DNS_TABLE_MAX - 1; i++) {
        struct vg_ip x = {.prefix = 32, .a = {198, 51, (uint8_t)(i >> 8), (uint8_t)i}};
        vg_dns_table_add(&t, "fill.example.org", &x, 1);
    }
    struct vg_ip two[2] = {v4("203.0.113.1"), v4("203.0.113.2")};
    CHECK(!vg_dns_table_add(&t, "b.example.org", two, 2));
    CHECK(conn(p, &t, "203.0.113.1", 443) == VG_ACT_DENY);
    CHECK(vg_dns_table_add(&t, "b.example.org", two, 1));
    vg_dns_table_free(&t);
    vg_policy_free(p);
}

int main(void)
{
    test_queries();
    test_replies();
    test_names();
    return check_done();
}
