/* dns_wire.c: see dns_wire.h. */
#include "net/dns_wire.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define HDR 12
#define F_QR 0x8000u
#define F_OPCODE 0x7800u
#define F_TC 0x0200u
#define F_RD 0x0100u
#define F_RA 0x0080u
#define F_RCODE 0x000fu
#define LABEL_PTR 0xc0u
#define MAX_LABELS 128            /* a 255-byte name has at most 127 labels */

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint8_t *wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return p + 2;
}
static uint8_t *wr32(uint8_t *p, uint32_t v)
{
    return wr16(wr16(p, (uint16_t)(v >> 16)), (uint16_t)v);
}

static bool label_char(uint8_t c)
{
    return isalnum(c) || c == '-' || c == '_';
}

/* The question's name at msg+pos: labels only (a pointer is malformed in
 * a question), each of plain host-name characters, into q->name.  Returns
 * the offset after the name, 0 when malformed. */
static size_t read_qname(const uint8_t *msg, size_t len, size_t pos, struct vg_dns_query *q)
{
    size_t out = 0, start = pos;
    for (;;) {
        if (pos >= len)
            return 0;
        uint8_t l = msg[pos];
        if (l == 0)
            break;
        if ((l & LABEL_PTR) || pos + 1 + l > len || pos + 1 + l - start >= VG_DNS_QNAME_WIRE_MAX ||
            out + (out ? 1u : 0u) + l > VG_DNS_NAME_MAX)
            return 0;
        if (out)
            q->name[out++] = '.';
        for (size_t i = 0; i < l; i++) {
            uint8_t c = msg[pos + 1 + i];
            if (!label_char(c))
                return 0;
            q->name[out++] = (char)tolower(c);
        }
        q->name[out] = 0;
        pos += 1 + (size_t)l;
    }
    return pos + 1;
}

enum vg_dns_parsed vg_dns_parse_query(const uint8_t *msg, size_t len, struct vg_dns_query *q)
{
    memset(q, 0, sizeof *q);
    if (len < HDR)
        return VG_DNSQ_DROP;
    uint16_t flags = rd16(msg + 2);
    if (flags & F_QR)
        return VG_DNSQ_DROP; /* a response: never answered (no loops) */
    q->id = rd16(msg);
    q->rd = (flags & F_RD) != 0;
    if ((flags & F_OPCODE) || rd16(msg + 4) != 1)
        return VG_DNSQ_FORMERR;
    size_t end = read_qname(msg, len, HDR, q);
    if (!end || end + 4 > len)
        return VG_DNSQ_FORMERR;
    q->qtype = rd16(msg + end);
    q->qclass = rd16(msg + end + 2);
    q->qlen = end + 4 - HDR;
    memcpy(q->qwire, msg + HDR, q->qlen);
    return VG_DNSQ_OK;
}

static uint8_t *header(uint8_t *p, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an)
{
    p = wr16(p, id);
    p = wr16(p, flags);
    p = wr16(p, qd);
    p = wr16(p, an);
    p = wr16(p, 0);
    return wr16(p, 0);
}

size_t vg_dns_build_reply(uint8_t *out, size_t cap, const struct vg_dns_query *q, int rcode,
                          const struct vg_ip *ans, unsigned nans, uint32_t ttl)
{
    if (cap < HDR + q->qlen)
        return 0;
    size_t rdlen = q->qtype == VG_DNS_T_AAAA ? 16 : 4, rr = 2 + 10 + rdlen;
    unsigned fit = 0;
    for (unsigned i = 0; i < nans; i++)
        if (ans[i].v6 == (rdlen == 16) && HDR + q->qlen + (fit + 1) * rr <= cap)
            fit++;
    uint16_t flags = (uint16_t)(F_QR | F_RA | (q->rd ? F_RD : 0) | ((unsigned)rcode & F_RCODE));
    uint8_t *p = header(out, q->id, flags, q->qlen ? 1 : 0, (uint16_t)fit);
    memcpy(p, q->qwire, q->qlen);
    p += q->qlen;
    for (unsigned i = 0, put = 0; i < nans && put < fit; i++) {
        if (ans[i].v6 != (rdlen == 16))
            continue;
        p = wr16(p, 0xc000u | HDR); /* the question's name */
        p = wr16(p, q->qtype);
        p = wr16(p, VG_DNS_C_IN);
        p = wr32(p, ttl);
        p = wr16(p, (uint16_t)rdlen);
        memcpy(p, ans[i].a, rdlen);
        p += rdlen;
        put++;
    }
    return (size_t)(p - out);
}

size_t vg_dns_build_query(uint8_t *out, size_t cap, const struct vg_dns_query *q, uint16_t id)
{
    if (cap < HDR + q->qlen)
        return 0;
    uint8_t *p = header(out, id, F_RD, 1, 0);
    memcpy(p, q->qwire, q->qlen);
    return HDR + q->qlen;
}

/* Skip a name in an answer: labels up to a zero byte or a pointer (which
 * ends it; it is never followed).  0 when malformed. */
static size_t skip_name(const uint8_t *msg, size_t len, size_t pos)
{
    for (int labels = 0; labels < MAX_LABELS; labels++) {
        if (pos >= len)
            return 0;
        uint8_t l = msg[pos];
        if (l == 0)
            return pos + 1;
        if ((l & LABEL_PTR) == LABEL_PTR)
            return pos + 2 <= len ? pos + 2 : 0;
        if (l & LABEL_PTR)
            return 0;
        pos += 1 + (size_t)l;
    }
    return 0;
}

/* The reply's question is ours: the name in any case (a server may change
 * it), the type and class exactly. */
static bool same_question(const uint8_t *msg, size_t len, const struct vg_dns_query *q)
{
    size_t name = q->qlen - 4;
    if (len < HDR + q->qlen || memcmp(msg + HDR + name, q->qwire + name, 4))
        return false;
    for (size_t i = 0; i < name; i++)
        if (tolower(msg[HDR + i]) != tolower(q->qwire[i]))
            return false;
    return true;
}

/* One answer record at *pos: kept if it is an address of q's type. */
static bool read_rr(const uint8_t *msg, size_t len, size_t *pos, const struct vg_dns_query *q,
                    struct vg_dns_answer *a)
{
    size_t p = skip_name(msg, len, *pos);
    if (!p || p + 10 > len)
        return false;
    uint16_t type = rd16(msg + p), cls = rd16(msg + p + 2), rdlen = rd16(msg + p + 8);
    uint32_t ttl = rd32(msg + p + 4);
    if (p + 10 + rdlen > len)
        return false;
    size_t want = q->qtype == VG_DNS_T_AAAA ? 16 : 4;
    bool addr = (q->qtype == VG_DNS_T_A || q->qtype == VG_DNS_T_AAAA) && type == q->qtype;
    if (addr && cls == VG_DNS_C_IN && rdlen == want && a->n < VG_DNS_MAX_ANSWERS) {
        struct vg_ip *ip = &a->ip[a->n++];
        memset(ip, 0, sizeof *ip);
        ip->v6 = want == 16;
        ip->prefix = (uint8_t)(want * 8);
        memcpy(ip->a, msg + p + 10, want);
        if (a->n == 1 || ttl < a->ttl)
            a->ttl = ttl;
    }
    *pos = p + 10 + rdlen;
    return true;
}

bool vg_dns_parse_reply(const uint8_t *msg, size_t len, uint16_t id, const struct vg_dns_query *q,
                        struct vg_dns_answer *a)
{
    memset(a, 0, sizeof *a);
    if (len < HDR || rd16(msg) != id || !q->qlen)
        return false;
    uint16_t flags = rd16(msg + 2);
    if (!(flags & F_QR) || rd16(msg + 4) != 1 || !same_question(msg, len, q))
        return false;
    a->rcode = flags & F_RCODE;
    size_t pos = HDR + q->qlen;
    for (uint16_t i = 0, an = rd16(msg + 6); i < an; i++)
        if (!read_rr(msg, len, &pos, q, a))
            return (flags & F_TC) != 0; /* cut short: what came whole is kept */
    return true;
}

const char *vg_dns_type_name(uint16_t t, char *buf, size_t cap)
{
    static const struct { uint16_t t; const char *name; } names[] = {
        {1, "A"}, {2, "NS"}, {5, "CNAME"}, {6, "SOA"}, {12, "PTR"}, {15, "MX"}, {16, "TXT"},
        {28, "AAAA"}, {33, "SRV"}, {64, "SVCB"}, {65, "HTTPS"}, {255, "ANY"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].t == t)
            return names[i].name;
    snprintf(buf, cap, "TYPE%u", t);
    return buf;
}

const char *vg_dns_rcode_name(int rcode)
{
    static const char *const names[] = {
        [VG_DNS_NOERROR] = "NOERROR", [VG_DNS_FORMERR] = "FORMERR", [VG_DNS_SERVFAIL] = "SERVFAIL",
        [VG_DNS_NXDOMAIN] = "NXDOMAIN", [VG_DNS_NOTIMP] = "NOTIMP", [VG_DNS_REFUSED] = "REFUSED",
    };
    return rcode >= 0 && (size_t)rcode < sizeof names / sizeof names[0] && names[rcode]
               ? names[rcode] : "RCODE?";
}
