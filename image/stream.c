/* stream.c: one layer's bytes, from an OCI blob or from a member of a
 * docker-save tarball, hashed as they are read so that the digest its
 * descriptor names is checked on exactly the bytes that were unpacked
 * (libarchive decompresses and reads the tar; image/layer.c writes). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/image_int.h"
#include "util/sha256.h"

struct vg_layer_stream {
    const struct vg_layer *l;
    int fd;                 /* the file, when it is the layer */
    struct archive *outer;  /* the tarball, when the layer is its member */
    struct archive *inner;  /* the layer's tar */
    struct vg_sha256 sha;
    uint64_t nread;
    bool failed;            /* a read error, said by libarchive */
    char buf[VG_IMAGE_BUF];
};

/* The next raw bytes of the layer, hashed on the way. */
static ssize_t raw_read(struct vg_layer_stream *s, void *buf, size_t n)
{
    ssize_t got;
    if (s->outer)
        got = archive_read_data(s->outer, buf, n);
    else
        while ((got = read(s->fd, buf, n)) < 0 && errno == EINTR)
            ;
    if (got > 0) {
        vg_sha256_update(&s->sha, buf, (size_t)got);
        s->nread += (uint64_t)got;
    }
    if (got < 0)
        s->failed = true;
    return got;
}

static la_ssize_t read_cb(struct archive *a, void *ctx, const void **out)
{
    (void)a;
    struct vg_layer_stream *s = ctx;
    *out = s->buf;
    return raw_read(s, s->buf, sizeof s->buf);
}

/* Position the tarball's reader at the member holding the layer. */
static int find_member(struct vg_layer_stream *s, struct vg_err *err)
{
    s->outer = archive_read_new();
    archive_read_support_format_tar(s->outer);
    if (archive_read_open_filename(s->outer, s->l->file, VG_IMAGE_BUF) != ARCHIVE_OK) {
        vg_errf(err, "%s: %s", s->l->file, archive_error_string(s->outer));
        return -1;
    }
    struct archive_entry *e;
    int r;
    char want[VG_IMAGE_PATH_MAX], name[VG_IMAGE_PATH_MAX];
    struct vg_err why;
    if (vg_image_entry_path(s->l->member, want, sizeof want, &why) < 0) {
        vg_errf(err, "%s: layer %s: %s", s->l->file, s->l->member, why.msg);
        return -1;
    }
    while ((r = archive_read_next_header(s->outer, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
        const char *p = archive_entry_pathname(e);
        if (p && vg_image_entry_path(p, name, sizeof name, &why) == 0 && !strcmp(name, want) &&
            archive_entry_filetype(e) == AE_IFREG)
            return 0;
    }
    vg_errf(err, "%s: no layer %s in the tarball%s%s", s->l->file, s->l->member,
            r == ARCHIVE_EOF ? "" : ": ", r == ARCHIVE_EOF ? "" : archive_error_string(s->outer));
    return -1;
}

struct vg_layer_stream *vg_layer_open(const struct vg_layer *l, struct archive **a,
                                      struct vg_err *err)
{
    struct vg_layer_stream *s = vg_xcalloc(1, sizeof *s);
    s->l = l;
    s->fd = -1;
    vg_sha256_init(&s->sha);
    int rc = 0;
    if (l->member)
        rc = find_member(s, err);
    else if ((s->fd = l->layout ? vg_image_open_file_beneath(l->layout, l->file, err)
                                : vg_open_regular(l->file, err)) < 0)
        rc = -1;
    if (rc == 0) {
        s->inner = archive_read_new();
        /* what OCI and docker use for layers: tar, plain, gzip or zstd */
        archive_read_support_filter_gzip(s->inner);
        archive_read_support_filter_zstd(s->inner);
        archive_read_support_format_tar(s->inner);
        if (archive_read_open(s->inner, s, NULL, read_cb, NULL) != ARCHIVE_OK) {
            vg_errf(err, "%s: %s", l->what, archive_error_string(s->inner));
            rc = -1;
        }
    }
    if (rc < 0) {
        vg_layer_close(s, false, NULL);
        return NULL;
    }
    *a = s->inner;
    return s;
}

/* Read the rest of the layer's bytes: a digest covers all of them. */
static void drain(struct vg_layer_stream *s)
{
    while (raw_read(s, s->buf, sizeof s->buf) > 0)
        ;
}

static int check_sum(struct vg_layer_stream *s, struct vg_err *err)
{
    const struct vg_layer *l = s->l;
    drain(s);
    char hex[VG_IMAGE_HEX];
    vg_sha256_hex(&s->sha, hex);
    if (s->failed) {
        vg_errf(err, "%s: read error", l->what);
        return -1;
    }
    if (l->sha[0] && strcmp(hex, l->sha)) {
        vg_errf(err, "%s: its content has sha256:%s, not the sha256:%s its descriptor names",
                l->what, hex, l->sha);
        return -1;
    }
    if (l->size >= 0 && s->nread != (uint64_t)l->size) {
        vg_errf(err, "%s: %llu bytes, not the %lld its descriptor names", l->what,
                (unsigned long long)s->nread, (long long)l->size);
        return -1;
    }
    return 0;
}

int vg_layer_close(struct vg_layer_stream *s, bool check, struct vg_err *err)
{
    int rc = check ? check_sum(s, err) : 0;
    if (s->inner)
        archive_read_free(s->inner);
    if (s->outer)
        archive_read_free(s->outer);
    if (s->fd >= 0)
        close(s->fd);
    free(s);
    return rc;
}

void vg_layers_free(struct vg_layer *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(l[i].file);
        free(l[i].layout);
        free(l[i].member);
    }
    free(l);
}
