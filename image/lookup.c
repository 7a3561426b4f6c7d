/* lookup.c: a stored image for a run (vigil run --image, a batch task's
 * image, a policy's `image`): its digest, the host path of its tree, and
 * a lock that keeps `vigil image rm` off it while the run has it.
 * The tree is bound read-only as the sandbox's system trees
 * (launcher/plan.c); nothing here writes to the store. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_int.h"

/* Hold the image for the run: a shared lock on sha256/HEX, which `vigil
 * image rm` must take exclusively (ops.c), so no image is removed under a
 * run that has it.  The directory is checked to be still the one at
 * sha256/HEX once the lock is held: an rm that won the race moved it out. */
static int hold(struct vg_store *s, struct vg_image_ref *out, const char *ref,
                struct vg_err *err)
{
    char *rel = vg_xasprintf("sha256/%s", out->hex);
    int fd = vg_image_openat(s->fd, rel, O_RDONLY | O_DIRECTORY, 0);
    struct stat held, now;
    int rc = fd < 0 || flock(fd, LOCK_SH) < 0 || fstat(fd, &held) < 0 ? -1 : 0;
    if (rc < 0)
        vg_errf(err, "image %s: %s/%s: %m", ref, s->dir, rel);
    else if (fstatat(s->fd, rel, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_ino != held.st_ino ||
             now.st_dev != held.st_dev) {
        vg_errf(err, "image %s: removed while it was being opened", ref);
        rc = -1;
    }
    free(rel);
    if (rc < 0 && fd >= 0)
        close(fd);
    out->lockfd = rc < 0 ? -1 : fd;
    out->held = rc == 0;
    return rc;
}

int vg_image_find(const char *ref, struct vg_image_ref *out, struct vg_err *err)
{
    *out = (struct vg_image_ref){.lockfd = -1};
    struct vg_store s;
    if (!vg_image_name_ok(ref, err) || vg_store_open(&s, false, err) < 0)
        return -1;
    int rc = vg_store_resolve(&s, ref, out->hex, err);
    if (rc == 0)
        rc = hold(&s, out, ref, err);
    char *rel = rc < 0 ? NULL : vg_xasprintf("sha256/%s/rootfs", out->hex);
    /* Opened beneath the store through no symlink: the path bound later
     * is this directory's, never a link someone put in the store. */
    int fd = rel ? vg_image_openat(s.fd, rel, O_PATH | O_DIRECTORY, 0) : -1;
    if (rel && fd < 0) {
        vg_errf(err, "image %s: %s/%s: %m", ref, s.dir, rel);
        rc = -1;
    }
    if (fd >= 0) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        out->rootfs = realpath(link, NULL);
        if (!out->rootfs) {
            vg_errf(err, "image %s: %s/%s: %m", ref, s.dir, rel);
            rc = -1;
        }
        close(fd);
    }
    free(rel);
    vg_store_close(&s);
    if (rc < 0)
        vg_image_ref_free(out);
    return rc;
}

void vg_image_ref_free(struct vg_image_ref *r)
{
    free(r->rootfs);
    if (r->held)
        close(r->lockfd);
    *r = (struct vg_image_ref){.lockfd = -1};
}
