/* commit.c: a finished tree into the store, the one way an image gets
 * there (an import, a build): its manifest written beside it in its tmp/
 * directory, then, under the store's lock, the whole directory renamed to
 * sha256/HEX and the name pointed at it.  Content stored already keeps
 * its copy (and manifest); the new directory goes and only the name moves. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "image/image_int.h"

#define TIME_LEN 32
#define MANIFEST "manifest.json"

static void now_utc(char out[TIME_LEN])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, TIME_LEN, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int vg_store_commit(struct vg_store *s, const char *tmp, int tfd, const char *name,
                    struct vg_manifest *m, bool *existed, struct vg_err *err)
{
    char created[TIME_LEN];
    now_utc(created);
    m->hex = m->r->sum.hex;
    m->names = name;
    m->created = created;
    struct vg_buf b = {0};
    vg_manifest_text(m, &b);
    int rc = vg_store_write_file(tfd, MANIFEST, b.data, b.len, err);
    vg_buf_free(&b);
    if (rc < 0 || vg_store_lock(s, err) < 0)
        return -1;
    char *from = vg_xasprintf("tmp/%s", tmp), *to = vg_xasprintf("sha256/%s", m->hex);
    rc = renameat(s->fd, from, s->fd, to);
    if (rc < 0 && (errno == EEXIST || errno == ENOTEMPTY)) {
        *existed = true; /* the same content, stored before */
        rc = vg_store_tmpdir_remove(s, tmp, err);
    } else if (rc < 0)
        vg_errf(err, "rename into %s/%s: %m", s->dir, to);
    free(from);
    free(to);
    return rc < 0 ? -1 : vg_store_name(s, name, m->hex, err);
}
