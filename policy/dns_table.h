/* dns_table.h: the addresses vigil's resolver handed out in this run, and
 * for which name.  A host-name rule (`allow connect tcp pypi.org:443`)
 * matches an address only if the resolver gave it out for a name the rule
 * names; the log names the host behind each connect and send from it.
 *
 * Shared by the resolver's thread (adds) and the engine (looks up): every
 * call takes the lock.  Bounded: when full, nothing more is added, and the
 * resolver refuses to hand out an address it could not note (it answers
 * SERVFAIL), so a rule never sees an address it cannot account for. */
#ifndef VG_POLICY_DNS_TABLE_H
#define VG_POLICY_DNS_TABLE_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/netpat.h"

#define VG_DNS_NAME_MAX 253       /* dotted text, without the final dot */
#define VG_DNS_TABLE_MAX 4096     /* (name, address) pairs in one run */

struct vg_dns_entry {
    char name[VG_DNS_NAME_MAX + 1]; /* lower case */
    struct vg_ip ip;
};

struct vg_dns_table {
    pthread_mutex_t lock;
    struct vg_dns_entry *e;
    uint32_t n, cap;
};

void vg_dns_table_init(struct vg_dns_table *t);
void vg_dns_table_free(struct vg_dns_table *t);
/* Note that name is answered with these n addresses: all of them, or (the
 * table would overflow) none, false. */
bool vg_dns_table_add(struct vg_dns_table *t, const char *name, const struct vg_ip *ip,
                      unsigned n);
/* The name ip was last handed out for, copied into buf; false if none. */
bool vg_dns_table_name(struct vg_dns_table *t, const struct vg_ip *ip, char *buf, size_t cap);
/* Was ip handed out for a name the host pattern matches (vg_host_match)? */
bool vg_dns_table_match(struct vg_dns_table *t, const char *pattern, const struct vg_ip *ip);
#endif
