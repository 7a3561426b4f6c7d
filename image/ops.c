/* ops.c: what `vigil image ls`, `rm` and `verify` do to the store. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "image/image_int.h"
#include "util/jsonr.h"

#define MANIFEST_MAX (1u << 20)

/* created, entries and bytes from sha256/HEX/manifest.json. */
static void read_info(struct vg_store *s, struct vg_image_info *in)
{
    char *rel = vg_xasprintf("sha256/%s/manifest.json", in->hex);
    int fd = vg_image_openat(s->fd, rel, O_RDONLY, 0);
    free(rel);
    if (fd < 0)
        return;
    char *text = vg_xmalloc(MANIFEST_MAX + 1);
    ssize_t n = read(fd, text, MANIFEST_MAX);
    close(fd);
    struct vg_err err;
    struct vg_jv *v = n > 0 ? vg_jv_parse(text, (size_t)n, &err) : NULL;
    free(text);
    const char *c = vg_jv_str(v, "created");
    in->created = vg_xstrdup(c ? c : "?");
    const struct vg_jv *e = vg_jv_get(v, "entries"), *b = vg_jv_get(v, "bytes");
    in->entries = e && e->type == VG_JNUM ? strtoull(e->s, NULL, 10) : 0;
    in->bytes = b && b->type == VG_JNUM ? strtoull(b->s, NULL, 10) : 0;
    vg_jv_free(v);
}

static int by_names(const void *pa, const void *pb)
{
    const struct vg_image_info *a = pa, *b = pb;
    if (!a->names || !b->names)
        return (!a->names) - (!b->names);
    int c = strcmp(a->names, b->names);
    return c ? c : strcmp(a->hex, b->hex);
}

int vg_image_list(struct vg_image_info **v, size_t *n, struct vg_err *err)
{
    *v = NULL;
    *n = 0;
    struct vg_store s;
    if (vg_store_open(&s, false, err) < 0)
        return errno == ENOENT ? 0 : -1; /* no store yet: no images */
    int fd = vg_image_openat(s.fd, "sha256", O_RDONLY | O_DIRECTORY, 0);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        vg_store_close(&s);
        return 0;
    }
    size_t cap = 0;
    struct dirent *e;
    char hex[VG_IMAGE_HEX];
    while ((e = readdir(d))) {
        if (!vg_image_digest_text(e->d_name, hex))
            continue;
        if (*n == cap)
            *v = vg_xrealloc(*v, (cap = cap ? 2 * cap : 16) * sizeof **v);
        struct vg_image_info *in = &(*v)[(*n)++];
        *in = (struct vg_image_info){0};
        memcpy(in->hex, hex, VG_IMAGE_HEX);
        in->names = vg_store_names_of(&s, hex);
        read_info(&s, in);
    }
    closedir(d);
    vg_store_close(&s);
    if (*n)
        qsort(*v, *n, sizeof **v, by_names);
    return 0;
}

void vg_image_info_free(struct vg_image_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].names);
        free(v[i].created);
    }
    free(v);
}

/* Remove names/NAME for every name pointing at hex. */
static int drop_names(struct vg_store *s, const char *hex, struct vg_err *err)
{
    char *names = vg_store_names_of(s, hex);
    int nfd = vg_image_openat(s->fd, "names", O_RDONLY | O_DIRECTORY, 0);
    int rc = nfd < 0 ? -1 : 0;
    for (char *save = NULL, *w = names ? strtok_r(names, ",", &save) : NULL; w && rc == 0;
         w = strtok_r(NULL, ",", &save))
        if (unlinkat(nfd, w, 0) < 0 && errno != ENOENT)
            rc = -1;
    if (rc < 0)
        vg_errf(err, "%s/names: %m", s->dir);
    if (nfd >= 0)
        close(nfd);
    free(names);
    return rc;
}

/* A run holds its image (lookup.c: a shared flock on sha256/HEX): the
 * exclusive one, or "in use", never the tree pulled from under a run. */
static int take_exclusive(struct vg_store *s, const char *hex, const char *ref, int *held,
                          struct vg_err *err)
{
    char *rel = vg_xasprintf("sha256/%s", hex);
    int fd = vg_image_openat(s->fd, rel, O_RDONLY | O_DIRECTORY, 0);
    int rc = 0;
    if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
        /* not a directory (a link put there): no run can hold it, as a
         * run opens it the same way; the rename below takes the link out */
    } else if (fd < 0) {
        vg_errf(err, "%s/%s: %m", s->dir, rel);
        rc = -1;
    } else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        vg_errf(err, errno == EWOULDBLOCK ? "image %s is in use by a run: not removed"
                                          : "image %s: lock: %m", ref);
        close(fd);
        rc = -1;
    }
    free(rel);
    *held = rc < 0 ? -1 : fd;
    return rc;
}

int vg_image_remove(const char *ref, char hex[VG_IMAGE_HEX], struct vg_err *err)
{
    struct vg_store s;
    if (vg_store_open(&s, false, err) < 0)
        return -1;
    int rc = vg_store_lock(&s, err);
    if (rc == 0)
        rc = vg_store_resolve(&s, ref, hex, err);
    char *tmp = NULL;
    int tfd = -1, held = -1;
    if (rc == 0)
        rc = take_exclusive(&s, hex, ref, &held, err);
    /* out of sha256/ in one rename, then removed at leisure: a reader
     * never sees half an image */
    if (rc == 0)
        rc = vg_store_tmpdir(&s, "rm", &tmp, &tfd, err);
    if (rc == 0) {
        close(tfd);
        char *from = vg_xasprintf("sha256/%s", hex), *to = vg_xasprintf("tmp/%s/image", tmp);
        rc = renameat(s.fd, from, s.fd, to);
        if (rc < 0)
            vg_errf(err, "move %s/%s out: %m", s.dir, from);
        free(from);
        free(to);
        if (rc == 0)
            rc = drop_names(&s, hex, err);
        struct vg_err why;
        if (vg_store_tmpdir_remove(&s, tmp, &why) < 0 && rc == 0) {
            *err = why;
            rc = -1;
        }
    }
    free(tmp);
    if (held >= 0)
        close(held);
    vg_store_close(&s);
    return rc;
}

int vg_image_verify(const char *ref, struct vg_image_sum *sum, struct vg_err *err)
{
    struct vg_store s;
    if (vg_store_open(&s, false, err) < 0)
        return -1;
    char hex[VG_IMAGE_HEX];
    int rc = vg_store_resolve(&s, ref, hex, err);
    int rootfd = -1;
    if (rc == 0) {
        char *rel = vg_xasprintf("sha256/%s/rootfs", hex);
        if ((rootfd = vg_image_openat(s.fd, rel, O_RDONLY | O_DIRECTORY, 0)) < 0) {
            vg_errf(err, "%s/%s: %m", s.dir, rel);
            rc = -1;
        }
        free(rel);
    }
    if (rc == 0 && vg_image_digest(rootfd, sum, err) < 0) {
        struct vg_err why = *err;
        vg_errf(err, "%s/sha256/%s/rootfs: %s", s.dir, hex, why.msg);
        rc = -1;
    }
    if (rc == 0 && strcmp(sum->hex, hex)) {
        vg_errf(err, "image %s: its rootfs now has digest sha256:%s, not sha256:%s: "
                     "the store was changed since the import", ref, sum->hex, hex);
        rc = 1;
    }
    if (rootfd >= 0)
        close(rootfd);
    vg_store_close(&s);
    return rc;
}
