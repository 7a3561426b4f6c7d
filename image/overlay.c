/* overlay.c: the files a build puts into the tree after mmdebstrap: the
 * few every build has (docs/IMAGES.md, "Build") and the spec's add lines,
 * each made as a layer's entry is (layer.c): beneath the root, through no
 * symlink, missing directories made 0755.  A source file is opened
 * beneath the spec's directory through no symlink and must be a regular
 * file; its mode is 0755 when any execute bit is set, else 0644 (what a
 * git checkout keeps of it: umask and the checkout's owner change none). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/build_int.h"
#include "util/sha256.h"

#define FILE_MODE 0644
#define EXEC_MODE 0755
#define EXEC_BITS 0111
/* The sandbox's own hostname (launcher/plan.c); the host's is what
 * mmdebstrap copies in, and differs between machines. */
#define HOSTNAME "vigil\n"
#define HOSTS "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"

/* The files every build writes: the host's resolv.conf and hostname are
 * what mmdebstrap copies in; a run binds its own resolv.conf over this
 * one (it cannot create one in a read-only tree). */
static const struct {
    const char *path, *text;
    bool if_there;  /* only emptied when a package made it */
} fixed[] = {
    {"etc/resolv.conf", "", false},
    {"etc/hosts", HOSTS, false},
    {"etc/hostname", HOSTNAME, false},
    /* random per install; empty is systemd's "not yet set" */
    {"etc/machine-id", "", true},
};

/* Write all of the file fd (size bytes) to out, hashed into sha. */
static int copy_in(int out, int fd, uint64_t size, char sha[VG_IMAGE_HEX], struct vg_err *err)
{
    struct vg_sha256 h;
    vg_sha256_init(&h);
    char *buf = vg_xmalloc(VG_IMAGE_BUF);
    int rc = 0;
    for (uint64_t left = size; rc == 0 && left;) {
        ssize_t got = read(fd, buf, left < VG_IMAGE_BUF ? left : VG_IMAGE_BUF);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            vg_errf(err, got < 0 ? "read: %m" : "it shrank while it was read");
        else if (vg_write_all(out, buf, (size_t)got) < 0)
            vg_errf(err, "write: %m");
        else {
            vg_sha256_update(&h, buf, (size_t)got);
            left -= (uint64_t)got;
            continue;
        }
        rc = -1;
    }
    free(buf);
    vg_sha256_hex(&h, sha);
    return rc;
}

/* path in the tree: text, or (text NULL) size bytes of the file fd. */
static int put(struct vg_build *b, const char *path, mode_t mode, const char *text, int fd,
               uint64_t size, char sha[VG_IMAGE_HEX], struct vg_err *err)
{
    if (size > VG_IMAGE_MAX_FILE || b->total + size > VG_IMAGE_MAX_TOTAL) {
        vg_errf(err, "its %llu bytes exceed the %s cap", (unsigned long long)size,
                size > VG_IMAGE_MAX_FILE ? "file" : "image");
        return -1;
    }
    int out = vg_build_create(b, path, err);
    if (out < 0)
        return -1;
    int rc = text ? vg_write_all(out, text, size) : copy_in(out, fd, size, sha, err);
    if (rc < 0 && text)
        vg_errf(err, "write: %m");
    if (rc == 0 && fchmod(out, mode) < 0) {
        vg_errf(err, "chmod: %m");
        rc = -1;
    }
    /* the build's fixed time, as every file from mmdebstrap has (it
     * clamps them to SOURCE_DATE_EPOCH): not in the digest, but a file's
     * time then is the same in every build of the spec */
    const struct timespec when[2] = {{.tv_sec = VG_BUILD_EPOCH}, {.tv_sec = VG_BUILD_EPOCH}};
    if (rc == 0 && futimens(out, when) < 0) {
        vg_errf(err, "set the time: %m");
        rc = -1;
    }
    if (close(out) < 0 && rc == 0) {
        vg_errf(err, "close: %m");
        rc = -1;
    }
    b->total += size;
    return rc;
}

static int put_add(struct vg_build *b, const struct vg_spec_add *add, const char *specdir,
                   char sha[VG_IMAGE_HEX], struct vg_err *err)
{
    int fd = vg_image_open_file_beneath(specdir, add->src, err);
    if (fd < 0)
        return -1;
    struct stat st;
    int rc = fstat(fd, &st);
    if (rc < 0)
        vg_errf(err, "%s/%s: %m", specdir, add->src);
    else
        rc = put(b, add->dst, (st.st_mode & EXEC_BITS) ? EXEC_MODE : FILE_MODE, NULL, fd,
                 (uint64_t)st.st_size, sha, err);
    close(fd);
    return rc;
}

int vg_build_overlay(struct vg_build *b, const struct vg_spec *s, const char *specfile,
                     const char *specdir, char (*sha)[VG_IMAGE_HEX], struct vg_err *err)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(fixed); i++) {
        if (fixed[i].if_there) {
            int there = vg_image_openat(b->rootfd, fixed[i].path, O_PATH, 0);
            if (there < 0)
                continue;
            close(there);
        }
        struct vg_err why;
        if (put(b, fixed[i].path, FILE_MODE, fixed[i].text, -1, strlen(fixed[i].text), NULL,
                &why) < 0) {
            vg_errf(err, "/%s: %s", fixed[i].path, why.msg);
            return -1;
        }
    }
    for (size_t i = 0; i < s->nadds; i++) {
        struct vg_err why;
        if (put_add(b, &s->adds[i], specdir, sha[i], &why) < 0) {
            vg_errf(err, "%s:%u: add %s: %s", specfile, s->adds[i].line, s->adds[i].src, why.msg);
            return -1;
        }
    }
    return 0;
}
