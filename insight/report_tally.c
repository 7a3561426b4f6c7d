/* report_tally.c: distinct strings with their counts, found by hash: a
 * fleet of thousands of candidates names tens of thousands of paths, and
 * each is looked up once per candidate that names it. */
#include <stdlib.h>
#include <string.h>

#include "insight/report_int.h"

#define FIRST_SLOTS 64
/* Slots at most half full: short probe runs. */
#define LOAD_DIVISOR 2

static size_t slot_of(const struct vg_tally *t, const char *key)
{
    size_t mask = t->nslots - 1, i = (size_t)vg_hash_str(key) & mask;
    while (t->slots[i] && strcmp(t->e[t->slots[i] - 1].key, key))
        i = (i + 1) & mask;
    return i;
}

static void grow_slots(struct vg_tally *t)
{
    free(t->slots);
    t->nslots = t->nslots ? 2 * t->nslots : FIRST_SLOTS;
    t->slots = vg_xcalloc(t->nslots, sizeof *t->slots);
    for (size_t k = 0; k < t->n; k++)
        t->slots[slot_of(t, t->e[k].key)] = k + 1;
}

const struct vg_tally_ent *vg_tally_find(const struct vg_tally *t, const char *key)
{
    if (!t->nslots)
        return NULL;
    size_t i = slot_of(t, key);
    return t->slots[i] ? &t->e[t->slots[i] - 1] : NULL;
}

struct vg_tally_ent *vg_tally_add(struct vg_tally *t, const char *key, size_t cand, uint64_t n)
{
    if ((t->n + 1) * LOAD_DIVISOR > t->nslots)
        grow_slots(t);
    size_t i = slot_of(t, key);
    if (!t->slots[i]) {
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : FIRST_SLOTS;
            t->e = vg_xrealloc(t->e, t->cap * sizeof *t->e);
        }
        t->e[t->n] = (struct vg_tally_ent){.key = vg_xstrdup(key)};
        t->slots[i] = ++t->n;
    }
    struct vg_tally_ent *e = &t->e[t->slots[i] - 1];
    e->count += n;
    if (e->last != cand + 1) {
        e->last = cand + 1;
        e->cands++;
    }
    return e;
}

static int by_weight(const void *a, const void *b)
{
    const struct vg_tally_ent *x = *(const struct vg_tally_ent *const *)a,
                              *y = *(const struct vg_tally_ent *const *)b;
    if (x->cands != y->cands)
        return x->cands > y->cands ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->key, y->key);
}

const struct vg_tally_ent **vg_tally_sorted(const struct vg_tally *t)
{
    const struct vg_tally_ent **v = vg_xcalloc(t->n + 1, sizeof *v);
    for (size_t i = 0; i < t->n; i++)
        v[i] = &t->e[i];
    qsort(v, t->n, sizeof *v, by_weight);
    return v;
}

void vg_tally_free(struct vg_tally *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->e[i].key);
        free(t->e[i].extra);
        free(t->e[i].example);
    }
    free(t->e);
    free(t->slots);
    memset(t, 0, sizeof *t);
}
