/* scratch.h: the candidate's working directory on the host. */
#ifndef VG_SCRATCH_H
#define VG_SCRATCH_H
#include <stdbool.h>
#include <sys/types.h>
#include "util/util.h"

/* A fresh private directory under $TMPDIR (or /tmp), owned by the host uid
 * the sandbox runs as.  malloc'd path, or NULL with err. */
char *vg_scratch_create(uid_t owner, gid_t group, struct vg_err *err);
/* Remove a tree without following symlinks or crossing mounts, making
 * directories the candidate locked (chmod 0) removable first. */
int vg_scratch_remove(const char *path);
#endif
