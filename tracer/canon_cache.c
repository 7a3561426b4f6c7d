/* canon_cache.c: memo of readlinkat results under immutable trees.
 * Correct because nothing below a read-only bind (or in the read-only
 * sandbox root) can be created, removed or retargeted while the run lasts:
 * the candidate has no capability to mount or remount. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/canon_cache.h"
#include "util/util.h"

struct entry {
    char *path;       /* NULL: free slot */
    ssize_t n;        /* readlinkat's return */
    int err;          /* its errno when n < 0 */
    char *target;     /* when n >= 0 */
    bool plain;       /* opened, it was a directory or a regular file */
};

struct vg_canon_cache {
    char **prefixes;
    unsigned nprefixes;
    struct entry *slots;
    size_t cap, n;
};

#define MAX_ENTRIES 65536 /* beyond this, stop remembering (bounded memory) */

struct vg_canon_cache *vg_canon_cache_new(const char *const *prefixes, unsigned n)
{
    struct vg_canon_cache *c = vg_xcalloc(1, sizeof *c);
    c->prefixes = vg_xcalloc(n ? n : 1, sizeof *c->prefixes);
    for (unsigned i = 0; i < n; i++)
        c->prefixes[i] = vg_xstrdup(prefixes[i]);
    c->nprefixes = n;
    c->cap = 1024;
    c->slots = vg_xcalloc(c->cap, sizeof *c->slots);
    return c;
}

void vg_canon_cache_free(struct vg_canon_cache *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->nprefixes; i++)
        free(c->prefixes[i]);
    free(c->prefixes);
    for (size_t i = 0; i < c->cap; i++) {
        free(c->slots[i].path);
        free(c->slots[i].target);
    }
    free(c->slots);
    free(c);
}

static bool under(const char *path, const char *prefix)
{
    size_t l = strlen(prefix);
    return !strncmp(path, prefix, l) && (path[l] == '/' || path[l] == 0);
}

/* Never /proc, whatever the prefixes say: its links change with every
 * chdir, dup2 and exit (canon_proc.c does not come here, this is a guard).
 * Also asked by the notify engine (crew.c: no look before an open). */
bool vg_canon_cache_immutable(const struct vg_canon_cache *c, const char *path)
{
    if (under(path, "/proc"))
        return false;
    for (unsigned i = 0; i < c->nprefixes; i++)
        if (under(path, c->prefixes[i]))
            return true;
    return false;
}

static struct entry *find(struct vg_canon_cache *c, const char *path)
{
    size_t i = (size_t)vg_hash_str(path) & (c->cap - 1);
    while (c->slots[i].path && strcmp(c->slots[i].path, path))
        i = (i + 1) & (c->cap - 1);
    return &c->slots[i];
}

static void grow(struct vg_canon_cache *c)
{
    struct entry *old = c->slots;
    size_t oldcap = c->cap;
    c->cap *= 2;
    c->slots = vg_xcalloc(c->cap, sizeof *c->slots);
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].path)
            *find(c, old[i].path) = old[i];
    free(old);
}

static ssize_t answer(const struct entry *e, char *buf, size_t size)
{
    if (e->n < 0) {
        errno = e->err;
        return -1;
    }
    size_t n = (size_t)e->n < size ? (size_t)e->n : size;
    memcpy(buf, e->target, n);
    return (ssize_t)n;
}

/* The memo's entry of path, a lookup made before; NULL when it has none. */
static struct entry *known(struct vg_canon_cache *c, const char *path)
{
    if (!c || !vg_canon_cache_immutable(c, path))
        return NULL;
    struct entry *e = find(c, path);
    return e->path ? e : NULL;
}

bool vg_canon_cache_plain(struct vg_canon_cache *c, const char *path)
{
    const struct entry *e = known(c, path);
    return e && e->plain;
}

void vg_canon_cache_saw_plain(struct vg_canon_cache *c, const char *path)
{
    struct entry *e = known(c, path);
    if (e)
        e->plain = true;
}

ssize_t vg_canon_cache_readlink(struct vg_canon_cache *c, int root_fd, const char *path,
                                char *buf, size_t size)
{
    const char *rel = path[0] == '/' ? path + 1 : path;
    if (!c || !vg_canon_cache_immutable(c, path))
        return readlinkat(root_fd, rel, buf, size);
    struct entry *e = find(c, path);
    if (e->path)
        return answer(e, buf, size);
    ssize_t n = readlinkat(root_fd, rel, buf, size);
    int err = errno;
    if (c->n >= MAX_ENTRIES || (size_t)(n < 0 ? 0 : n) >= size) {
        errno = err;
        return n;
    }
    if ((c->n + 1) * 2 > c->cap) {
        grow(c);
        e = find(c, path);
    }
    *e = (struct entry){.path = vg_xstrdup(path), .n = n, .err = err,
                        .target = n >= 0 ? vg_xstrndup(buf, (size_t)n) : NULL};
    c->n++;
    errno = err;
    return n;
}
