/* spec.h: the spec `vigil image build` builds an image from (docs/IMAGES.md,
 * "Build"): a few lines naming a Debian suite, its mirror, a variant, the
 * packages, and files from beside the spec to put into the tree.  Text
 * only here (the parser is a fuzz target): finding a shipped spec by name
 * is spec_find.c, building is build.c. */
#ifndef VG_IMAGE_SPEC_H
#define VG_IMAGE_SPEC_H
#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

/* The most a spec may hold: far more than any image wants, little enough
 * that a wrong file given as a spec is refused at once. */
#define VG_SPEC_MAX_BYTES (64u << 10)
#define VG_SPEC_MAX_PACKAGES 4096u
#define VG_SPEC_MAX_ADDS 1024u
#define VG_SPEC_DEFAULT_MIRROR "http://deb.debian.org/debian"
#define VG_SPEC_DEFAULT_VARIANT "essential"

/* add SRC DST: a file from the spec's directory into the tree. */
struct vg_spec_add {
    char *src;      /* relative to the spec's directory, never leaving it */
    char *dst;      /* in the tree, relative to its root ("opt/x.py") */
    unsigned line;
};

struct vg_spec {
    char *suite, *mirror, *variant;
    bool trusted;   /* mirror ... trusted: an unsigned repository of one's own */
    char **packages;
    size_t npackages;
    struct vg_spec_add *adds;
    size_t nadds;
};

/* Parse the spec text (len bytes, read from file): 0, or -1 with err
 * "FILE:LINE: problem".  s is empty after a failure; free it either way. */
int vg_spec_parse(const char *file, const char *text, size_t len, struct vg_spec *s,
                  struct vg_err *err);
void vg_spec_free(struct vg_spec *s);

/* The spec file an argument names: a path (it has a '/' or ends in
 * ".spec") as given, else a shipped spec of that name (spec_find.c), else
 * a file of that name here.  malloc'd, or NULL with err. */
char *vg_spec_find(const char *arg, struct vg_err *err);
#endif
