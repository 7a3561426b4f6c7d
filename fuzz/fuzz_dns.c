/* fuzz_dns.c: libFuzzer target for vigil's resolver's DNS parsing
 * (net/dns_wire.c): any bytes, read as the candidate's query or as an
 * upstream's reply, give a result or a refusal, never a crash, a read
 * out of bounds or a hang; a query that parses gets a reply that parses
 * back as the reply to it, with the addresses it was given. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/dns_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void as_reply(const uint8_t *data, size_t size)
{
    /* the question vigil would have asked: "a.b" A, id from the input */
    static const uint8_t qmsg[] = {0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0,
                                   1, 'a', 1, 'b', 0, 0, 1, 0, 1};
    struct vg_dns_query q;
    struct vg_dns_answer a;
    if (vg_dns_parse_query(qmsg, sizeof qmsg, &q) != VG_DNSQ_OK)
        abort();
    uint16_t id = size >= 2 ? (uint16_t)(data[0] << 8 | data[1]) : 0;
    if (vg_dns_parse_reply(data, size, id, &q, &a) && a.n > VG_DNS_MAX_ANSWERS)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vg_dns_query q;
    as_reply(data, size);
    if (vg_dns_parse_query(data, size, &q) != VG_DNSQ_OK)
        return 0;
    if (strlen(q.name) > VG_DNS_NAME_MAX || q.qlen > sizeof q.qwire)
        abort();
    struct vg_ip ips[2] = {{.v6 = false, .a = {10, 0, 0, 1}, .prefix = 32},
                           {.v6 = true, .a = {0xfd, 0, [15] = 1}, .prefix = 128}};
    uint8_t out[VG_DNS_UDP_MAX];
    size_t n = vg_dns_build_reply(out, sizeof out, &q, VG_DNS_NOERROR, ips, 2, 60);
    struct vg_dns_answer a;
    if (!n || !vg_dns_parse_reply(out, n, q.id, &q, &a) || a.rcode != VG_DNS_NOERROR)
        abort(); /* what we answer must read back as the answer to it */
    bool addr = q.qtype == VG_DNS_T_A || q.qtype == VG_DNS_T_AAAA;
    if (addr && (a.n != 1 || memcmp(a.ip[0].a, ips[q.qtype == VG_DNS_T_AAAA].a, 16)))
        abort();
    uint8_t up[VG_DNS_UDP_MAX];
    if (!vg_dns_build_query(up, sizeof up, &q, 7))
        abort();
    return 0;
}
