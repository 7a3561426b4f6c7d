/* argv_rec.c: see argv_rec.h. */
#include "tracer/argv_rec.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

void vg_argv_rec_init(struct vg_argv_rec *r, struct vg_arena *a)
{
    *r = (struct vg_argv_rec){.arena = a, .budget = VG_ARGV_KEEP_BYTES};
    vg_sha256_init(&r->sha);
}

static void keep(struct vg_argv_rec *r, const char *s, size_t len)
{
    if (r->nkept == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->kept = vg_xrealloc(r->kept, r->cap * sizeof *r->kept);
    }
    char *copy = vg_arena_alloc(r->arena, len + 1);
    memcpy(copy, s, len);
    copy[len] = 0;
    r->kept[r->nkept++] = copy;
    r->budget -= len;
}

void vg_argv_rec_add(struct vg_argv_rec *r, const char *s, size_t len)
{
    static const char nul = 0;
    vg_sha256_update(&r->sha, s, len);
    vg_sha256_update(&r->sha, &nul, 1);
    r->argc++;
    r->bytes += len + 1;
    if (r->cut)
        return;
    bool room = r->nkept < VG_ARGV_KEEP_STRS;
    if (room && len <= r->budget) {
        keep(r, s, len);
        return;
    }
    /* The first argument that does not fit: keep what fits of it (a long
     * `sh -c` script is worth its first 64 KiB), then only count. */
    r->cut = true;
    if (room && r->budget)
        keep(r, s, r->budget);
}

void vg_argv_rec_done(struct vg_argv_rec *r, const char *const **argv, uint32_t *argc,
                      struct vg_argv_full *full)
{
    const char **v = vg_arena_alloc(r->arena, (r->nkept + 1) * sizeof *v);
    if (r->nkept)
        memcpy(v, r->kept, r->nkept * sizeof *v);
    v[r->nkept] = NULL;
    *argv = v;
    *argc = r->nkept;
    *full = (struct vg_argv_full){0};
    char hex[65];
    vg_sha256_hex(&r->sha, hex);
    if (r->cut)
        *full = (struct vg_argv_full){
            .argc = r->argc, .bytes = r->bytes, .sha256 = vg_arena_strdup(r->arena, hex)};
    free(r->kept);
    r->kept = NULL;
    r->nkept = r->cap = 0;
}
