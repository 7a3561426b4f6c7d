/* dns_table.c: see dns_table.h. */
#include "policy/dns_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

void vg_dns_table_init(struct vg_dns_table *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
}

void vg_dns_table_free(struct vg_dns_table *t)
{
    free(t->e);
    pthread_mutex_destroy(&t->lock);
    memset(t, 0, sizeof *t);
}

static bool same_ip(const struct vg_ip *a, const struct vg_ip *b)
{
    return a->v6 == b->v6 && !memcmp(a->a, b->a, a->v6 ? 16 : 4);
}

/* The index of the pair, or -1. */
static long find(const struct vg_dns_table *t, const char *name, const struct vg_ip *ip)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (same_ip(&t->e[i].ip, ip) && !strcmp(t->e[i].name, name))
            return i;
    return -1;
}

/* One pair, room checked: a pair seen again becomes the latest name of
 * its address. */
static void put(struct vg_dns_table *t, const char *name, const struct vg_ip *ip)
{
    long at = find(t, name, ip);
    if (at >= 0) {
        struct vg_dns_entry keep = t->e[at];
        memmove(&t->e[at], &t->e[at + 1], (t->n - (uint32_t)at - 1) * sizeof *t->e);
        t->e[t->n - 1] = keep;
        return;
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->e = vg_xrealloc(t->e, t->cap * sizeof *t->e);
    }
    snprintf(t->e[t->n].name, sizeof t->e[t->n].name, "%s", name);
    t->e[t->n].ip = *ip;
    t->e[t->n].ip.prefix = ip->v6 ? 128 : 32;
    t->n++;
}

bool vg_dns_table_add(struct vg_dns_table *t, const char *name, const struct vg_ip *ip,
                      unsigned n)
{
    if (strlen(name) > VG_DNS_NAME_MAX)
        return false;
    pthread_mutex_lock(&t->lock);
    uint32_t fresh = 0;
    for (unsigned i = 0; i < n; i++)
        fresh += find(t, name, &ip[i]) < 0;
    bool ok = t->n + fresh <= VG_DNS_TABLE_MAX; /* all or nothing: none is half-noted */
    for (unsigned i = 0; ok && i < n; i++)
        put(t, name, &ip[i]);
    pthread_mutex_unlock(&t->lock);
    return ok;
}

bool vg_dns_table_name(struct vg_dns_table *t, const struct vg_ip *ip, char *buf, size_t cap)
{
    bool found = false;
    pthread_mutex_lock(&t->lock);
    for (uint32_t i = t->n; i-- > 0;)
        if (same_ip(&t->e[i].ip, ip)) {
            snprintf(buf, cap, "%s", t->e[i].name);
            found = true;
            break;
        }
    pthread_mutex_unlock(&t->lock);
    return found;
}

bool vg_dns_table_match(struct vg_dns_table *t, const char *pattern, const struct vg_ip *ip)
{
    bool found = false;
    pthread_mutex_lock(&t->lock);
    for (uint32_t i = 0; i < t->n && !found; i++)
        found = same_ip(&t->e[i].ip, ip) && vg_host_match(pattern, t->e[i].name);
    pthread_mutex_unlock(&t->lock);
    return found;
}
