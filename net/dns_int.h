/* dns_int.h (internal to net/dns*.c): what the resolver's parts share. */
#ifndef VG_NET_DNS_INT_H
#define VG_NET_DNS_INT_H
#include "net/dns.h"
#include "net/dns_wire.h"

/* Per upstream server; below the 5 s a glibc client waits for us. */
#define VG_DNS_UPSTREAM_TIMEOUT_MS 1500

/* Ask the servers in order: true with a when one answered.  Gives up at
 * once when stop_fd becomes readable (the run is ending). */
bool vg_dns_ask_upstream(const struct vg_dns_upstream *u, const struct vg_dns_query *q,
                         struct vg_dns_answer *a, int stop_fd);
#endif
