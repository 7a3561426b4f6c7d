/* dns.h: vigil's resolver for the sandbox, the part other layers see.
 *
 * Every run with a private network namespace gets a UDP socket bound
 * INSIDE that namespace at VG_DNS_ADDR:VG_DNS_PORT (net/dns_sock.c), and
 * its /etc/resolv.conf names it (launcher/plan.c).  A supervisor thread
 * (net/dns_server.c) answers it: each query is recorded (a "dns" record,
 * docs/FORMAT.md), names the policy allows are resolved upstream
 * (net/dns_upstream.c) from the host's network namespace, others are
 * refused; the addresses handed out go into the run's table
 * (policy/dns_table.h), which is what a host-name rule matches.
 *
 * The address is THE one constant other helpers (docs, the netns setup)
 * rely on: an address of the sandbox's own loopback, so it needs no route
 * and no device beyond `lo`. */
#ifndef VG_NET_DNS_H
#define VG_NET_DNS_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "policy/dns_table.h"
#include "util/util.h"

#define VG_DNS_ADDR "127.0.0.53"
#define VG_DNS_PORT 53

/* The sandbox's /etc/resolv.conf. */
#define VG_DNS_RESOLV_CONF "nameserver " VG_DNS_ADDR "\n"

/* At most this many upstream servers are asked, in order. */
#define VG_DNS_MAX_UPSTREAM 3

/* Where allowed names are resolved: addresses in the host's network
 * namespace (vigil's own). */
struct vg_dns_upstream {
    struct sockaddr_storage addr[VG_DNS_MAX_UPSTREAM];
    socklen_t len[VG_DNS_MAX_UPSTREAM];
    unsigned n;
};
/* "IP" or "IP:PORT" ("[V6]:PORT"), as --dns-upstream takes it. */
int vg_dns_upstream_parse(struct vg_dns_upstream *u, const char *text, struct vg_err *err);
/* The nameservers of a resolv.conf file (the host's /etc/resolv.conf). */
int vg_dns_upstream_from_file(struct vg_dns_upstream *u, const char *path, struct vg_err *err);

/* The resolver's socket (net/dns_sock.c): a UDP socket bound to
 * VG_DNS_ADDR:VG_DNS_PORT in the calling process's network namespace,
 * whose loopback is up (the sandbox's pid 1).  Non-blocking,
 * close-on-exec.  The fd, or -errno. */
int vg_dns_bind(void);
/* pid 1: sends vg_dns_bind's answer (the fd, closed here, or -errno) to
 * the supervisor over the unix socket chan.  0, or -1. */
int vg_dns_socket_send(int chan, int fd);
/* The supervisor: the socket pid 1 sent, or -1 with err (its errno, or
 * EPROTO if pid 1 sent nothing). */
int vg_dns_socket_recv(int chan, struct vg_err *err);

struct vg_policy;
struct vg_log;
struct vg_dns_server;

struct vg_dns_config {
    int fd;                         /* from vg_dns_socket_recv; the server owns it */
    const struct vg_policy *pol;
    struct vg_log *log;             /* shared with the engine (the writer locks) */
    struct vg_dns_table *table;
    const struct vg_dns_upstream *upstream;
    bool dry_run;                   /* refusals become would-deny, and are answered */
    uint64_t start_mono_ns;         /* record timestamps are relative to it */
    /* moves the calling thread into the group that pays for the run (the
     * launcher's vg_cgroup_bill_self, handed down); NULL: none */
    int (*bill_self)(void);
};
/* Start the thread; NULL with err. */
struct vg_dns_server *vg_dns_start(const struct vg_dns_config *cfg, struct vg_err *err);
/* Stop and join; closes the socket.  Returns the number of queries seen. */
uint64_t vg_dns_stop(struct vg_dns_server *s);
#endif
