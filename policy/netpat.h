/* netpat.h: network patterns, "PROTO ADDRESS":
 *   tcp 127.0.0.1:8000   tcp 10.0.0.0/8:*   tcp [::1]:80-90   udp *:53
 *   tcp pypi.org:443,8443   tcp *.example.org:443   unix /run/x.sock   unix @abstract*
 * A host name matches the addresses vigil's resolver handed out for it in
 * the run (policy/dns_table.h), and nothing else (none is resolved ahead).
 * Ports: '*', or a comma list of N and LO-HI. */
#ifndef VG_POLICY_NETPAT_H
#define VG_POLICY_NETPAT_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "policy/glob.h"

enum vg_proto { VG_PROTO_TCP, VG_PROTO_UDP, VG_PROTO_UNIX, VG_PROTO_N };
enum vg_addr_kind { VG_ADDR_ANY, VG_ADDR_V4, VG_ADDR_V6, VG_ADDR_HOST };

#define VG_NET_MAX_PORT_RANGES 16

struct vg_ip {          /* an address or a network: v4 uses 4 bytes */
    bool v6;
    uint8_t a[16];
    uint8_t prefix;     /* bits */
};

struct vg_netpat {
    enum vg_proto proto;
    enum vg_addr_kind kind;
    struct vg_ip ip;            /* V4, V6 */
    char *host;                 /* HOST */
    bool any_port;
    uint16_t lo[VG_NET_MAX_PORT_RANGES], hi[VG_NET_MAX_PORT_RANGES];
    uint32_t nranges;
    /* unix: the path pattern lives in the rule (a glob like any path) */
};

int vg_proto_from_name(const char *s);     /* -1 when unknown */
const char *vg_proto_name(enum vg_proto p);

/* Parse an inet address token ("ADDR:PORTS").  On error: false, *bad the
 * offset in s of the problem, *msg static or written into msgbuf. */
bool vg_netpat_parse_inet(struct vg_netpat *np, const char *s, size_t *bad,
                          char *msgbuf, size_t msgcap);
/* Number of ports the pattern names (65536 for any). */
uint32_t vg_netpat_nports(const struct vg_netpat *np);
void vg_netpat_free(struct vg_netpat *np);

/* A socket address reduced to what patterns look at.  Unix addresses are
 * the path, or "@name" for abstract sockets, "" when unnamed. */
struct vg_sockaddr {
    int family;                 /* AF_INET (mapped v6 too), AF_INET6, AF_UNIX */
    struct vg_ip ip;
    uint16_t port;
    char path[110];
};
bool vg_sockaddr_reduce(const struct sockaddr *sa, socklen_t len,
                        struct vg_sockaddr *out);
bool vg_netpat_match_inet(const struct vg_netpat *np, const struct vg_sockaddr *a);
struct vg_dns_table;
/* The same, a host-name pattern also matching what names handed out
 * (NULL: no resolver in this run). */
bool vg_netpat_match_inet_names(const struct vg_netpat *np, const struct vg_sockaddr *a,
                                struct vg_dns_table *names);
/* Does a host pattern ("pypi.org", "*.example.org") name this host name?
 * Case-insensitive; "*.example.org" is any name below example.org, not
 * example.org itself. */
bool vg_host_match(const char *pattern, const char *name);
bool vg_ip_contains(const struct vg_ip *net, const struct vg_ip *ip);
#endif
