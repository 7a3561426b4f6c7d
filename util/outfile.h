/* outfile.h: files vigil writes for the caller (the log, the result),
 * written so that vigil never harms what it did not create.
 *
 * The rule: the data goes into a new file vigil creates (O_EXCL, so never
 * a symlink, fifo or device someone put there) next to the target, and
 * that file is renamed onto the target when it is ready.  The target
 * itself is never opened for writing, truncated or unlinked.  If the
 * target already exists it is replaced only when it is a regular file
 * (not a symlink), with one link, owned by the caller, and either empty or
 * something vigil wrote before (its signature: a log's header, a result's
 * "vigil_version"); anything else is refused before the run.  If it did
 * not exist, it must still not exist when vigil renames (RENAME_NOREPLACE);
 * if it did, it must still be the same file.  The only file vigil ever
 * removes is its own temporary file, and only when it is still the file
 * vigil created. */
#ifndef VG_OUTFILE_H
#define VG_OUTFILE_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/util.h"

struct vg_outfile {
    char *path;        /* the target, as given */
    char *tmp;         /* our file's name, in the target's directory */
    bool unnamed;      /* ... not given yet: an O_TMPFILE until commit */
    int link_fd;       /* vigil's own fd on the unnamed file, when link_open */
    bool link_open;
    int fd;            /* open on tmp; -1 once closed or handed on */
    bool existed;      /* the target existed (and passed the rule) when reserved */
    dev_t dev;         /* that target's identity */
    ino_t ino;
    dev_t tdev;        /* our file's identity */
    ino_t tino;
    bool committed;    /* renamed onto the target */
};

/* Which output this is, and how vigil recognises a file it wrote. */
struct vg_outfile_kind {
    const char *what;      /* "-o", "--result": for messages */
    const char *signature; /* bytes found near the start of a file vigil wrote */
    size_t siglen;
    size_t within;         /* how far into the file to look for it */
};

/* Check path against the rule and create our file next to it.  0, or -1
 * with err set (nothing created, nothing touched); discard f either way. */
int vg_outfile_reserve(struct vg_outfile *f, const char *path, const struct vg_outfile_kind *k,
                       struct vg_err *err);
/* Rename our file onto the target.  The fd stays open (a log goes on
 * being written through it); whoever took it closes it. */
int vg_outfile_commit(struct vg_outfile *f, struct vg_err *err);
/* Close, and remove our file unless it was committed.  Idempotent; also
 * after a failed reserve, and on {.fd = -1} never reserved. */
void vg_outfile_discard(struct vg_outfile *f);

/* Where path would be: realpath of its directory + "/" + its last
 * component (which need not exist).  malloc'd, or NULL with errno. */
char *vg_outfile_location(const char *path);
#endif
