/* dns_wire.h: the DNS messages vigil's resolver reads and writes (RFC 1035,
 * UDP, no EDNS).  The candidate writes the queries and the upstream the
 * answers: every read is bounded by the message, names are walked label
 * by label with a fixed budget, and compression pointers are never
 * followed (a question must not have any; an answer's names are only
 * skipped, and a pointer ends a name). */
#ifndef VG_NET_DNS_WIRE_H
#define VG_NET_DNS_WIRE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/dns_table.h"
#include "policy/netpat.h"

#define VG_DNS_UDP_MAX 512        /* what a client without EDNS takes */
#define VG_DNS_QNAME_WIRE_MAX 255 /* a name on the wire, labels and lengths */
#define VG_DNS_MAX_ANSWERS 16     /* addresses handed out per query */

enum { VG_DNS_T_A = 1, VG_DNS_T_AAAA = 28, VG_DNS_C_IN = 1 };
enum {
    VG_DNS_NOERROR = 0, VG_DNS_FORMERR = 1, VG_DNS_SERVFAIL = 2, VG_DNS_NXDOMAIN = 3,
    VG_DNS_NOTIMP = 4, VG_DNS_REFUSED = 5,
};

struct vg_dns_query {
    uint16_t id;
    bool rd;                                  /* recursion desired, echoed */
    uint8_t qwire[VG_DNS_QNAME_WIRE_MAX + 4]; /* the question as sent: name, type, class */
    size_t qlen;
    char name[VG_DNS_NAME_MAX + 1];           /* dotted, lower case, no final dot */
    uint16_t qtype, qclass;
};

enum vg_dns_parsed {
    VG_DNSQ_OK,      /* a query with one question, q filled */
    VG_DNSQ_FORMERR, /* a query we answer FORMERR (q->id set, name may be partial) */
    VG_DNSQ_DROP,    /* not even a query header: no answer */
};
enum vg_dns_parsed vg_dns_parse_query(const uint8_t *msg, size_t len, struct vg_dns_query *q);

/* The reply to q: rcode, and one answer record per address (of q's type),
 * as many as fit in cap.  Returns its length (0 if cap is too small for
 * the header and question). */
size_t vg_dns_build_reply(uint8_t *out, size_t cap, const struct vg_dns_query *q, int rcode,
                          const struct vg_ip *ans, unsigned nans, uint32_t ttl);
/* The query vigil sends upstream for q, with its own id. */
size_t vg_dns_build_query(uint8_t *out, size_t cap, const struct vg_dns_query *q, uint16_t id);

struct vg_dns_answer {
    int rcode;
    struct vg_ip ip[VG_DNS_MAX_ANSWERS];
    unsigned n;
    uint32_t ttl;                   /* the smallest of the kept records */
};
/* Read an upstream reply to the query (id, q's question): false when it is
 * not that reply (wrong id, not a response, another question, malformed),
 * which the caller ignores.  Keeps the records of q's type and class IN,
 * from any owner (a CNAME chain's end). */
bool vg_dns_parse_reply(const uint8_t *msg, size_t len, uint16_t id, const struct vg_dns_query *q,
                        struct vg_dns_answer *a);
/* "A", "AAAA", "MX", ... or "TYPE<n>". */
const char *vg_dns_type_name(uint16_t t, char *buf, size_t cap);
/* "NOERROR", "REFUSED", ... */
const char *vg_dns_rcode_name(int rcode);
#endif
