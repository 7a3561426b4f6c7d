/* lookup.c: a stored image for a run (vigil run --image, a batch task's
 * image, a policy's `image`): its digest and the host path of its tree.
 * The tree is bound read-only as the sandbox's system trees
 * (launcher/plan.c); nothing here writes to the store. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_int.h"

int vg_image_find(const char *ref, struct vg_image_ref *out, struct vg_err *err)
{
    *out = (struct vg_image_ref){0};
    struct vg_store s;
    if (!vg_image_name_ok(ref, err) || vg_store_open(&s, false, err) < 0)
        return -1;
    int rc = vg_store_resolve(&s, ref, out->hex, err);
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
    return rc;
}

void vg_image_ref_free(struct vg_image_ref *r)
{
    free(r->rootfs);
    *r = (struct vg_image_ref){0};
}
