/* dns_table.c: see dns_table.h. */
#include "net/dns_table.h"

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

bool vg_dns_table_add(struct vg_dns_table *t, const char *name, const struct vg_ip *ip)
{
    bool ok = true;
    pthread_mutex_lock(&t->lock);
    for (uint32_t i = 0; i < t->n; i++)
        if (same_ip(&t->e[i].ip, ip) && !strcmp(t->e[i].name, name)) {
            /* seen again: it becomes the latest name of the address */
            struct vg_dns_entry keep = t->e[i];
            memmove(&t->e[i], &t->e[i + 1], (t->n - i - 1) * sizeof *t->e);
            t->e[t->n - 1] = keep;
            goto out;
        }
    if (t->n == VG_DNS_TABLE_MAX || strlen(name) > VG_DNS_NAME_MAX) {
        ok = false;
        goto out;
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->e = vg_xrealloc(t->e, t->cap * sizeof *t->e);
    }
    snprintf(t->e[t->n].name, sizeof t->e[t->n].name, "%s", name);
    t->e[t->n].ip = *ip;
    t->e[t->n].ip.prefix = ip->v6 ? 128 : 32;
    t->n++;
out:
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
