/* import.c: `vigil image import`: a source's layers applied in order to
 * a fresh tree in the store's tmp/, the tree hashed, and committed as
 * every image is (commit.c: its manifest written, only then the whole
 * directory renamed to sha256/HEX and the name pointed at it).  Any
 * error removes the temporary directory: a failed import leaves nothing
 * in the store. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_int.h"

#define ROOTFS "rootfs"
#define STDIN_COPY "source.tar"
#define ROOT_MODE (S_IRWXU | S_IRGRP | S_IXGRP | S_IROTH | S_IXOTH)

/* An import under way: where it builds, and what it found. */
struct job {
    struct vg_store *s;
    char *tmp;          /* its directory's name in tmp/ */
    int tfd;
    const char *src;    /* as given; the file read for "-" is below */
    char *srcfile;
    char *source;       /* what the manifest says it came from */
    struct vg_layer *layers;
    size_t nlayers;
};

/* Stdin into the temporary directory: a tarball is read more than once. */
static int copy_stdin(struct job *j, struct vg_err *err)
{
    int fd = openat(j->tfd, STDIN_COPY, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    S_IRUSR | S_IWUSR);
    if (fd < 0) {
        vg_errf(err, "%s/tmp/%s/" STDIN_COPY ": %m", j->s->dir, j->tmp);
        return -1;
    }
    char *buf = vg_xmalloc(VG_IMAGE_BUF);
    uint64_t total = 0;
    ssize_t got;
    int rc = 0;
    while (rc == 0 && ((got = read(STDIN_FILENO, buf, VG_IMAGE_BUF)) > 0 ||
                       (got < 0 && errno == EINTR))) {
        if (got < 0)
            continue;
        total += (uint64_t)got;
        if (total > VG_IMAGE_MAX_TOTAL) {
            vg_errf(err, "stdin: more than the image cap of %llu bytes",
                    (unsigned long long)VG_IMAGE_MAX_TOTAL);
            rc = -1;
        } else if (vg_write_all(fd, buf, (size_t)got) < 0) {
            vg_errf(err, "copy stdin: %m");
            rc = -1;
        }
    }
    if (rc == 0 && got < 0) {
        vg_errf(err, "read stdin: %m");
        rc = -1;
    }
    free(buf);
    if (close(fd) < 0 && rc == 0) {
        vg_errf(err, "copy stdin: %m");
        rc = -1;
    }
    j->srcfile = vg_xasprintf("%s/tmp/%s/" STDIN_COPY, j->s->dir, j->tmp);
    return rc;
}

static int find_layers(struct job *j, struct vg_err *err)
{
    if (!strcmp(j->src, "-")) {
        if (copy_stdin(j, err) < 0)
            return -1;
        j->source = vg_xstrdup("docker-save:-");
        return vg_docker_layers(j->srcfile, &j->layers, &j->nlayers, err);
    }
    struct stat st;
    if (stat(j->src, &st) < 0) {
        vg_errf(err, "%s: %m", j->src);
        return -1;
    }
    char *abs = realpath(j->src, NULL);
    j->srcfile = abs ? abs : vg_xstrdup(j->src);
    if (S_ISDIR(st.st_mode))
        return vg_oci_layers(j->srcfile, &j->layers, &j->nlayers, &j->source, err);
    if (!S_ISREG(st.st_mode)) {
        vg_errf(err, "%s: neither an OCI layout directory nor a docker-save tarball", j->src);
        return -1;
    }
    j->source = vg_xasprintf("docker-save:%s", j->srcfile);
    return vg_docker_layers(j->srcfile, &j->layers, &j->nlayers, err);
}

/* One pass over a layer: scan (w set) or apply.  Both check its digest:
 * the source may change between the two reads. */
static int pass(struct vg_build *b, const struct vg_layer *l, struct vg_whiteouts *w,
                struct vg_err *err)
{
    struct archive *a;
    struct vg_layer_stream *st = vg_layer_open(l, &a, err);
    if (!st)
        return -1;
    int rc = w ? vg_layer_scan(a, l->what, w, err) : vg_layer_apply(b, a, l->what, err);
    struct vg_err why;
    if (vg_layer_close(st, rc == 0, &why) < 0 && rc == 0) {
        *err = why;
        rc = -1;
    }
    return rc;
}

static int apply_layers(struct job *j, struct vg_build *b, struct vg_err *err)
{
    for (size_t i = 0; i < j->nlayers; i++) {
        struct vg_whiteouts w = {0};
        int rc = pass(b, &j->layers[i], &w, err);
        if (rc == 0)
            rc = vg_layer_whiteout(b, &w, j->layers[i].what, err);
        vg_whiteouts_free(&w);
        if (rc == 0)
            rc = pass(b, &j->layers[i], NULL, err);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int build_tree(struct job *j, struct vg_import_result *r, struct vg_err *err)
{
    if (mkdirat(j->tfd, ROOTFS, ROOT_MODE) < 0) {
        vg_errf(err, "%s/tmp/%s/" ROOTFS ": %m", j->s->dir, j->tmp);
        return -1;
    }
    struct vg_build b = {.rootfd = vg_image_openat(j->tfd, ROOTFS, O_RDONLY | O_DIRECTORY, 0)};
    if (b.rootfd < 0) {
        vg_errf(err, "%s/tmp/%s/" ROOTFS ": %m", j->s->dir, j->tmp);
        return -1;
    }
    int rc = apply_layers(j, &b, err);
    if (rc == 0)
        rc = vg_build_finish(&b, err);
    if (rc == 0 && vg_image_digest(b.rootfd, &r->sum, err) < 0) {
        struct vg_err why = *err;
        vg_errf(err, "digest of the tree: %s", why.msg);
        rc = -1;
    }
    r->skipped = b.skipped;
    r->stripped = b.stripped;
    r->layers = j->nlayers;
    vg_build_free(&b);
    close(b.rootfd);
    return rc;
}

static int run_import(struct job *j, const char *name, struct vg_import_result *r,
                      struct vg_err *err)
{
    if (find_layers(j, err) < 0 || build_tree(j, r, err) < 0)
        return -1;
    if (!strcmp(j->src, "-") && unlinkat(j->tfd, STDIN_COPY, 0) < 0) {
        vg_errf(err, "remove the copy of stdin: %m");
        return -1;
    }
    struct vg_manifest m = {.source = j->source, .r = r, .layers = j->layers,
                            .nlayers = j->nlayers};
    return vg_store_commit(j->s, j->tmp, j->tfd, name, &m, &r->existed, err);
}

int vg_image_import(const char *src, const char *name, struct vg_import_result *r,
                    struct vg_err *err)
{
    *r = (struct vg_import_result){0};
    if (!vg_image_name_ok(name, err))
        return -1;
    struct vg_store s;
    if (vg_store_open(&s, true, err) < 0)
        return -1;
    vg_store_sweep(&s);
    struct job j = {.s = &s, .src = src, .tfd = -1};
    int rc = vg_store_tmpdir(&s, "import", &j.tmp, &j.tfd, err);
    if (rc == 0) {
        rc = run_import(&j, name, r, err);
        close(j.tfd);
        struct vg_err why;
        if (rc < 0 && !r->existed && vg_store_tmpdir_remove(&s, j.tmp, &why) < 0) {
            size_t n = strlen(err->msg);
            snprintf(err->msg + n, sizeof err->msg - n, " (and %s/tmp/%s stays: %s)", s.dir,
                     j.tmp, why.msg);
        }
    }
    vg_layers_free(j.layers, j.nlayers);
    free(j.tmp);
    free(j.srcfile);
    free(j.source);
    vg_store_close(&s);
    return rc;
}
