/* slots.c: see slots.h. */
#include "viewer/slots.h"

#include <stdlib.h>

#include "util/util.h"

void vw_slots_put(struct vw_slots *s, uint64_t h, size_t i)
{
    size_t j = vw_slots_first(s, h);
    while (s->v[j])
        j = vw_slots_next(s, j);
    s->v[j] = (uint32_t)(i + 1);
}

void vw_slots_reserve(struct vw_slots *s, size_t count,
                      uint64_t (*hash)(const void *ctx, size_t i), const void *ctx)
{
    if ((count + 1) * 2 <= s->n)
        return;
    struct vw_slots bigger = {vg_xcalloc(s->n ? s->n * 2 : 64, sizeof(uint32_t)),
                              s->n ? s->n * 2 : 64};
    for (size_t i = 0; i < count; i++)
        vw_slots_put(&bigger, hash(ctx, i), i);
    free(s->v);
    *s = bigger;
}

void vw_slots_free(struct vw_slots *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
