/* docker.c: a `docker save` tarball (manifest.json naming the layer
 * members, lowest first) to its layers.  A member named
 * blobs/sha256/HEX (docker 25 and later) is checked against HEX as it
 * is read; an older ID/layer.tar has no digest in its name to check. */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/image_int.h"
#include "util/jsonr.h"

#define MANIFEST "manifest.json"
#define MANIFEST_MAX (4u << 20)
#define BLOB_PREFIX "blobs/sha256/"

/* manifest.json's text, malloc'd, or NULL with err. */
static char *read_manifest(const char *tarball, size_t *len, struct vg_err *err)
{
    struct archive *a = archive_read_new();
    archive_read_support_format_tar(a);
    char *text = NULL;
    if (archive_read_open_filename(a, tarball, VG_IMAGE_BUF) != ARCHIVE_OK) {
        vg_errf(err, "%s: %s", tarball, archive_error_string(a));
        archive_read_free(a);
        return NULL;
    }
    struct archive_entry *e;
    int r = ARCHIVE_EOF;
    char name[VG_IMAGE_PATH_MAX];
    struct vg_err why;
    while (!text && ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN)) {
        const char *p = archive_entry_pathname(e);
        if (!p || vg_image_entry_path(p, name, sizeof name, &why) < 0 || strcmp(name, MANIFEST))
            continue;
        if (archive_entry_size(e) > MANIFEST_MAX) {
            vg_errf(err, "%s: %s larger than %u bytes", tarball, MANIFEST, MANIFEST_MAX);
            break;
        }
        size_t n = (size_t)archive_entry_size(e);
        text = vg_xmalloc(n + 1);
        la_ssize_t got = archive_read_data(a, text, n);
        if (got < 0 || (size_t)got != n) {
            vg_errf(err, "%s: %s: %s", tarball, MANIFEST,
                    got < 0 ? archive_error_string(a) : "short read");
            free(text);
            text = NULL;
            break;
        }
        text[n] = '\0';
        *len = n;
    }
    if (!text && !err->msg[0])
        vg_errf(err, "%s: no %s: not a docker-save tarball%s%s", tarball, MANIFEST,
                r == ARCHIVE_EOF ? "" : ": ", r == ARCHIVE_EOF ? "" : archive_error_string(a));
    archive_read_free(a);
    return text;
}

int vg_docker_layers(const char *tarball, struct vg_layer **l, size_t *n, struct vg_err *err)
{
    *l = NULL;
    *n = 0;
    size_t len;
    err->msg[0] = '\0';
    char *text = read_manifest(tarball, &len, err);
    if (!text)
        return -1;
    struct vg_jv *v = vg_jv_parse(text, len, err);
    free(text);
    if (!v) {
        struct vg_err why = *err;
        vg_errf(err, "%s: %s: %s", tarball, MANIFEST, why.msg);
        return -1;
    }
    const struct vg_jv *ls = v->type == VG_JARR && v->n ? vg_jv_get(&v->items[0], "Layers") : NULL;
    int rc = -1;
    if (v->type == VG_JARR && v->n > 1)
        vg_errf(err, "%s: %zu images in one tarball: save one image", tarball, v->n);
    else if (!ls || ls->type != VG_JARR)
        vg_errf(err, "%s: %s: no Layers", tarball, MANIFEST);
    else
        rc = 0;
    *l = vg_xcalloc(rc == 0 && ls->n ? ls->n : 1, sizeof **l);
    for (size_t i = 0; rc == 0 && i < ls->n; i++) {
        const struct vg_jv *m = &ls->items[i];
        if (m->type != VG_JSTR) {
            vg_errf(err, "%s: %s: layer %zu is not a string", tarball, MANIFEST, i + 1);
            rc = -1;
            break;
        }
        struct vg_layer *y = &(*l)[i];
        *n = i + 1;
        y->file = vg_xstrdup(tarball);
        y->member = vg_xstrdup(m->s);
        y->size = -1;
        const char *b = strstr(m->s, BLOB_PREFIX);
        if (!(b && vg_image_digest_text(b + strlen(BLOB_PREFIX), y->sha)))
            y->sha[0] = '\0';
        snprintf(y->what, sizeof y->what, "layer %zu of %zu (%.40s)", i + 1, ls->n, m->s);
    }
    vg_jv_free(v);
    return rc;
}
