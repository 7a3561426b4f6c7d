/* slots.h: the open-addressing index under the viewer's hash tables (the
 * string table, the process table).  Entries live in the caller's array;
 * a slot holds an entry's index + 1, 0 when empty; linear probing, load at
 * most one half. */
#ifndef VW_SLOTS_H
#define VW_SLOTS_H

#include <stddef.h>
#include <stdint.h>

struct vw_slots {
    uint32_t *v;
    size_t n;  /* a power of two, or 0 before the first entry */
};

/* Make room for entry number `count` (the table then holds count + 1);
 * rehashes every entry with hash(ctx, i) when it grows. */
void vw_slots_reserve(struct vw_slots *s, size_t count,
                      uint64_t (*hash)(const void *ctx, size_t i), const void *ctx);
/* Record entry i, whose hash is h. */
void vw_slots_put(struct vw_slots *s, uint64_t h, size_t i);
void vw_slots_free(struct vw_slots *s);

/* Probe sequence for a lookup:
 *   for (size_t j = vw_slots_first(s, h); s->n && s->v[j]; j = vw_slots_next(s, j)) */
static inline size_t vw_slots_first(const struct vw_slots *s, uint64_t h)
{
    return s->n ? (size_t)h & (s->n - 1) : 0;
}
static inline size_t vw_slots_next(const struct vw_slots *s, size_t j)
{
    return (j + 1) & (s->n - 1);
}

#endif
