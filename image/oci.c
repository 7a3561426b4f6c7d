/* oci.c: an OCI image layout directory (oci-layout, index.json, blobs/)
 * to its layers, lowest first.  The index and the manifest are blobs
 * too: each is read only after its sha256 and size are checked against
 * the descriptor that names it, and blob paths are made of a validated
 * digest only, so nothing in the JSON names a file of its own.  Every
 * file of the layout is opened beneath it through no symlink
 * (beneath.c): a symlinked blob would make a host file (root-only, say)
 * part of the image, its digest checking since it is that file's own. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/image_int.h"
#include "util/jsonr.h"
#include "util/sha256.h"

/* The index and a manifest are small; a bigger one is not an image. */
#define JSON_MAX (4u << 20)
#define MT_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
/* An index may name an index (nested multi-platform images): this deep. */
#define MAX_NESTING 4
#define WANT_OS "linux"
#define WANT_ARCH "amd64"

/* The layout's file rel (at most max bytes), malloc'd, or NULL with err. */
static char *read_beneath(const char *dir, const char *rel, size_t max, size_t *len,
                          struct vg_err *err)
{
    int fd = vg_image_open_file_beneath(dir, rel, err);
    if (fd < 0)
        return NULL;
    struct vg_buf b = {0};
    char *chunk = vg_xmalloc(VG_IMAGE_BUF);
    ssize_t got;
    while ((got = read(fd, chunk, VG_IMAGE_BUF)) > 0 || (got < 0 && errno == EINTR)) {
        if (got < 0)
            continue;
        if (b.len + (size_t)got > max) {
            errno = EFBIG;
            break;
        }
        vg_buf_put(&b, chunk, (size_t)got);
    }
    int e = errno;
    free(chunk);
    close(fd);
    if (got != 0) {
        vg_errf(err, "%s/%s: %s", dir, rel,
                e == EFBIG ? "larger than the cap for it" : strerror(e));
        vg_buf_free(&b);
        return NULL;
    }
    if (!b.data)
        vg_buf_put(&b, "", 0);
    *len = b.len;
    return b.data;
}

/* A descriptor's digest, size and media type, checked. */
struct desc {
    char hex[VG_IMAGE_HEX];
    int64_t size;
    const char *media;
};

static int get_desc(const struct vg_jv *d, const char *what, struct desc *out,
                    struct vg_err *err)
{
    const char *dg = vg_jv_str(d, "digest");
    const struct vg_jv *sz = vg_jv_get(d, "size");
    char *end = NULL;
    long long n = sz && sz->type == VG_JNUM ? strtoll(sz->s, &end, 10) : -1;
    if (!dg || !vg_image_digest_text(dg, out->hex) || strncmp(dg, "sha256:", 7)) {
        vg_errf(err, "%s: no sha256 digest", what);
        return -1;
    }
    if (n < 0 || !end || *end) {
        vg_errf(err, "%s: no size", what);
        return -1;
    }
    out->size = n;
    out->media = vg_jv_str(d, "mediaType");
    return 0;
}

/* The blob a descriptor names, read and checked. */
static struct vg_jv *read_blob_json(const char *dir, const struct desc *d, const char *what,
                                    struct vg_err *err)
{
    if (d->size > JSON_MAX) {
        vg_errf(err, "%s: %lld bytes, more than %u", what, (long long)d->size, JSON_MAX);
        return NULL;
    }
    char *path = vg_xasprintf("blobs/sha256/%s", d->hex);
    size_t len;
    char *text = read_beneath(dir, path, JSON_MAX, &len, err);
    free(path);
    if (!text)
        return NULL;
    char hex[VG_IMAGE_HEX];
    vg_sha256_buf(text, len, hex);
    struct vg_jv *v = NULL;
    if (strcmp(hex, d->hex) || (int64_t)len != d->size)
        vg_errf(err, "%s: blob sha256:%s does not match its descriptor (sha256:%s, %zu bytes)",
                what, d->hex, hex, len);
    else if (!(v = vg_jv_parse(text, len, err))) {
        struct vg_err why = *err;
        vg_errf(err, "%s: %s", what, why.msg);
    }
    free(text);
    return v;
}

/* Of an index's manifests, the one for linux/amd64 (or the only one). */
static const struct vg_jv *pick(const struct vg_jv *idx, const char *what, struct vg_err *err)
{
    const struct vg_jv *m = vg_jv_get(idx, "manifests");
    if (!m || m->type != VG_JARR || m->n == 0) {
        vg_errf(err, "%s: no manifests", what);
        return NULL;
    }
    for (size_t i = 0; i < m->n; i++) {
        const struct vg_jv *p = vg_jv_get(&m->items[i], "platform");
        const char *os = vg_jv_str(p, "os"), *arch = vg_jv_str(p, "architecture");
        if (os && arch && !strcmp(os, WANT_OS) && !strcmp(arch, WANT_ARCH))
            return &m->items[i];
    }
    if (m->n == 1)
        return &m->items[0];
    vg_errf(err, "%s: %zu manifests and none for %s/%s", what, m->n, WANT_OS, WANT_ARCH);
    return NULL;
}

static int add_layers(const char *dir, const struct vg_jv *man, struct vg_layer **l, size_t *n,
                      struct vg_err *err)
{
    const struct vg_jv *ls = vg_jv_get(man, "layers");
    if (!ls || ls->type != VG_JARR) {
        vg_errf(err, "image manifest: no layers");
        return -1;
    }
    *l = vg_xcalloc(ls->n ? ls->n : 1, sizeof **l);
    *n = ls->n;
    for (size_t i = 0; i < ls->n; i++) {
        struct desc d;
        char what[64];
        snprintf(what, sizeof what, "image manifest: layer %zu", i + 1);
        if (get_desc(&ls->items[i], what, &d, err) < 0)
            return -1;
        struct vg_layer *y = &(*l)[i];
        y->layout = vg_xstrdup(dir);
        y->file = vg_xasprintf("blobs/sha256/%s", d.hex);
        memcpy(y->sha, d.hex, VG_IMAGE_HEX);
        y->size = d.size;
        snprintf(y->what, sizeof y->what, "layer %zu of %zu (sha256:%.12s)", i + 1, ls->n, d.hex);
    }
    return 0;
}

/* Check the layout's marker file: a directory without it is something else. */
static int check_layout(const char *dir, struct vg_err *err)
{
    size_t len;
    struct vg_err why;
    char *text = read_beneath(dir, "oci-layout", JSON_MAX, &len, &why);
    struct vg_jv *v = text ? vg_jv_parse(text, len, &why) : NULL;
    const char *ver = vg_jv_str(v, "imageLayoutVersion");
    int rc = ver ? 0 : -1;
    if (rc < 0)
        vg_errf(err, "%s: not an OCI image layout (oci-layout: %s)", dir,
                text ? "no imageLayoutVersion" : why.msg);
    vg_jv_free(v);
    free(text);
    return rc;
}

int vg_oci_layers(const char *dir, struct vg_layer **l, size_t *n, char **source,
                  struct vg_err *err)
{
    *l = NULL;
    *n = 0;
    if (check_layout(dir, err) < 0)
        return -1;
    size_t len;
    char *text = read_beneath(dir, "index.json", JSON_MAX, &len, err);
    struct vg_jv *cur = text ? vg_jv_parse(text, len, err) : NULL;
    free(text);
    if (!cur) {
        struct vg_err why = *err;
        vg_errf(err, "%s/index.json: %s", dir, why.msg);
        return -1;
    }
    int rc = -1;
    for (int depth = 0; depth <= MAX_NESTING; depth++) {
        const struct vg_jv *m = pick(cur, depth ? "nested index" : "index.json", err);
        struct desc d;
        if (!m || get_desc(m, "index.json: manifest", &d, err) < 0)
            break;
        bool index = d.media && (!strcmp(d.media, MT_INDEX) || !strcmp(d.media, MT_DOCKER_LIST));
        struct vg_jv *next = read_blob_json(dir, &d, index ? "index" : "image manifest", err);
        if (!next)
            break;
        vg_jv_free(cur);
        cur = next;
        if (!index) {
            rc = add_layers(dir, cur, l, n, err);
            *source = vg_xasprintf("oci:%s@sha256:%s", dir, d.hex);
            break;
        }
        if (depth == MAX_NESTING)
            vg_errf(err, "index.json: indexes nested more than %d deep", MAX_NESTING);
    }
    vg_jv_free(cur);
    return rc;
}
