/* build.h: `vigil image build SPEC --name NAME`: an image made with Debian's
 * mmdebstrap from a spec (image/spec.h), normalised as an import is, made
 * reproducible, hashed and committed to the store (docs/IMAGES.md, "Build"). */
#ifndef VG_IMAGE_BUILD_H
#define VG_IMAGE_BUILD_H
#include <stddef.h>

#include "image/image.h"

struct vg_build_result {
    struct vg_import_result r;  /* digest, counts, existed; no layers */
    size_t packages;            /* installed, as dpkg-query lists them */
    char mode[16];              /* mmdebstrap's mode: "root" or "unshare" */
    char *spec;                 /* the spec file used (malloc'd) */
};

/* Build the spec arg names (a path or a shipped name) as name.  0, or -1
 * with err: a spec's "FILE:LINE: problem", or one line of what failed. */
int vg_image_build(const char *arg, const char *name, struct vg_build_result *r,
                   struct vg_err *err);
void vg_build_result_free(struct vg_build_result *r);
#endif
