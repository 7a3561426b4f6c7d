/* strtab.c: see strtab.h.  FNV-1a hashing over vw_slots. */
#include "viewer/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* Strings live in large chunks so that interning a million short strings
 * costs a few allocations, and pointers to them never move. */
struct vw_chunk {
    struct vw_chunk *next;
    size_t used, cap;
    char data[];
};

static char *store(struct vw_strtab *t, const char *s, size_t len)
{
    struct vw_chunk *c = t->chunks;
    if (!c || c->cap - c->used < len + 1) {
        size_t cap = len + 1 > 65536 ? len + 1 : 65536;
        c = vg_xmalloc(sizeof *c + cap);
        c->next = t->chunks;
        c->used = 0;
        c->cap = cap;
        t->chunks = c;
    }
    char *p = c->data + c->used;
    memcpy(p, s, len + 1);
    c->used += len + 1;
    return p;
}

static uint64_t hash_of(const void *ctx, size_t i)
{
    return vg_hash_str(((const struct vw_strtab *)ctx)->ents[i].s);
}

struct vw_strent *vw_strtab_intern(struct vw_strtab *t, const char *s)
{
    if (!s)
        s = "";
    vw_slots_reserve(&t->slots, t->n, hash_of, t);
    uint64_t h = vg_hash_str(s);
    for (size_t j = vw_slots_first(&t->slots, h); t->slots.v[j]; j = vw_slots_next(&t->slots, j)) {
        struct vw_strent *e = &t->ents[t->slots.v[j] - 1];
        if (!strcmp(e->s, s))
            return e;
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 32;
        t->ents = vg_xrealloc(t->ents, t->cap * sizeof *t->ents);
    }
    struct vw_strent *e = &t->ents[t->n];
    e->s = store(t, s, strlen(s));
    e->n = e->denied = 0;
    vw_slots_put(&t->slots, h, t->n++);
    return e;
}

void vw_strtab_add(struct vw_strtab *t, const char *s, int denied)
{
    struct vw_strent *e = vw_strtab_intern(t, s);
    e->n++;
    if (denied)
        e->denied++;
}

static int cmp_n(const void *a, const void *b)
{
    const struct vw_strent *x = *(const struct vw_strent *const *)a;
    const struct vw_strent *y = *(const struct vw_strent *const *)b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int cmp_denied(const void *a, const void *b)
{
    const struct vw_strent *x = *(const struct vw_strent *const *)a;
    const struct vw_strent *y = *(const struct vw_strent *const *)b;
    if (x->denied != y->denied)
        return x->denied > y->denied ? -1 : 1;
    return cmp_n(a, b);
}

const struct vw_strent **vw_strtab_sorted(const struct vw_strtab *t, int by_denied)
{
    const struct vw_strent **v = vg_xcalloc(t->n + 1, sizeof *v);
    for (size_t i = 0; i < t->n; i++)
        v[i] = &t->ents[i];
    qsort(v, t->n, sizeof *v, by_denied ? cmp_denied : cmp_n);
    return v;
}

void vw_strtab_free(struct vw_strtab *t)
{
    while (t->chunks) {
        struct vw_chunk *c = t->chunks;
        t->chunks = c->next;
        free(c);
    }
    free(t->ents);
    vw_slots_free(&t->slots);
    memset(t, 0, sizeof *t);
}
