/* arena.c: the bump allocator behind one decoded call, and the call's
 * release.  A decode makes a few dozen small strings that all die
 * together, so they are carved out of a few chunks and released by one
 * vg_arena_free. */
#include <stdlib.h>
#include <string.h>

#include "core/call.h"

#define VG_ARENA_FIRST 4096u
#define VG_ARENA_ALIGN 16u

/* Chunks double in size, so 64 of them can never run out before memory
 * does; a request bigger than the next chunk gets a chunk of its own size. */
static void arena_grow(struct vg_arena *a, size_t need)
{
    if (a->n == VG_ARRAY_LEN(a->chunks)) {
        /* Unreachable in practice (2^64 bytes); treat like malloc failure. */
        abort();
    }
    size_t cap = (size_t)VG_ARENA_FIRST << (a->n < 20 ? a->n : 20);
    if (cap < need)
        cap = need;
    a->chunks[a->n++] = vg_xmalloc(cap);
    a->used = 0;
    a->cap = cap;
}

void *vg_arena_alloc(struct vg_arena *a, size_t n)
{
    size_t at = (a->used + VG_ARENA_ALIGN - 1) & ~(size_t)(VG_ARENA_ALIGN - 1);
    if (n == 0)
        n = 1;
    if (a->n == 0 || at > a->cap || a->cap - at < n) {
        arena_grow(a, n);
        at = 0;
    }
    a->used = at + n;
    return a->chunks[a->n - 1] + at;
}

char *vg_arena_strdup(struct vg_arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(vg_arena_alloc(a, n), s, n);
}

void vg_arena_free(struct vg_arena *a)
{
    for (unsigned i = 0; i < a->n; i++)
        free(a->chunks[i]);
    memset(a, 0, sizeof(*a));
}

void vg_call_free(struct vg_call *call)
{
    vg_arena_free(&call->arena);
    memset(call, 0, sizeof(*call));
}
