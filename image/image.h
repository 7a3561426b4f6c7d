/* image.h: pinned environments (issue 24): root file systems imported
 * from OCI image layouts or `docker save` tarballs into a store addressed
 * by the digest of their content (docs/IMAGES.md), and what the CLI does
 * with them: import, list, remove, verify. */
#ifndef VG_IMAGE_H
#define VG_IMAGE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

#define VG_IMAGE_HEX 65 /* 64 hex digits and a NUL */

/* What the digest walk counts besides the digest. */
struct vg_image_sum {
    char hex[VG_IMAGE_HEX];
    uint64_t entries, bytes;
};

/* One stored image, as `vigil image ls` shows it. */
struct vg_image_info {
    char hex[VG_IMAGE_HEX];
    char *names;    /* comma-separated, or NULL when no name points at it */
    char *created;  /* RFC 3339, UTC */
    uint64_t entries, bytes;
};

/* What an import made, for the CLI's one line. */
struct vg_import_result {
    struct vg_image_sum sum;
    size_t skipped;   /* device nodes, FIFOs and sockets not created */
    size_t stripped;  /* files whose setuid/setgid bits were dropped */
    size_t layers;
    bool existed;     /* the same content was in the store already */
};

/* A name given to --name: 1-128 of [A-Za-z0-9._:@+-], not starting
 * with '.' or '-' (it is a file name in the store's index).  Every
 * reference (a name, sha256:HEX, a prefix) is spelled within it. */
bool vg_image_name_ok(const char *name, struct vg_err *err);

/* A stored image as a run uses it: its digest and where its tree is. */
struct vg_image_ref {
    char hex[VG_IMAGE_HEX];
    char *rootfs;   /* canonical host path of sha256/HEX/rootfs */
    int lockfd;     /* with held: flock shared until freed, no rm meanwhile */
    bool held;      /* (a zeroed ref holds nothing: freeing it closes no fd) */
};
/* Find ref (a name, a digest, a unique prefix of 12+ digits) in the
 * store and hold it until vg_image_ref_free.  0, or -1 with err naming
 * what is missing. */
int vg_image_find(const char *ref, struct vg_image_ref *out, struct vg_err *err);
void vg_image_ref_free(struct vg_image_ref *r);

/* Import src (an OCI layout directory, a docker-save tarball, or "-" for
 * one on stdin) as name.  0, or -1 with err naming the layer and entry. */
int vg_image_import(const char *src, const char *name, struct vg_import_result *r,
                    struct vg_err *err);
/* Every stored image, sorted by name (unnamed ones last). */
int vg_image_list(struct vg_image_info **v, size_t *n, struct vg_err *err);
void vg_image_info_free(struct vg_image_info *v, size_t n);
/* Remove the image ref names (a name, a digest or a unique prefix of one)
 * and every name pointing at it.  hex gets its digest. */
int vg_image_remove(const char *ref, char hex[VG_IMAGE_HEX], struct vg_err *err);
/* Recompute the digest of the stored rootfs: 0 when it matches, 1 when it
 * does not (err says both), -1 when it cannot be computed. */
int vg_image_verify(const char *ref, struct vg_image_sum *sum, struct vg_err *err);
#endif
