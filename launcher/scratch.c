/* scratch.c: see scratch.h. */

#include "launcher/scratch.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *vg_scratch_create(uid_t owner, gid_t group, struct vg_err *err)
{
    const char *base = getenv("TMPDIR");
    if (!base || base[0] != '/')
        base = "/tmp";
    char *tmpl = vg_xasprintf("%s/vigil-work-XXXXXX", base);
    char *dir = mkdtemp(tmpl);
    if (!dir) {
        vg_errf(err, "create scratch directory in %s: %s", base, strerror(errno));
        free(tmpl);
        return NULL;
    }
    if (geteuid() == 0 && chown(dir, owner, group) < 0) {
        vg_errf(err, "chown scratch directory %s: %s", dir, strerror(errno));
        rmdir(dir);
        free(dir);
        return NULL;
    }
    return dir;
}

static int unlock_dir(const char *path, const struct stat *st, int type, struct FTW *f)
{
    (void)f;
    if (type == FTW_D || type == FTW_DNR)
        if ((st->st_mode & 0700) != 0700)
            chmod(path, (st->st_mode & 07777) | 0700);
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
    (void)st;
    (void)f;
    int r = (type == FTW_DP || type == FTW_D || type == FTW_DNR) ? rmdir(path) : unlink(path);
    return r < 0 && errno != ENOENT ? -1 : 0;
}

int vg_scratch_remove(const char *path)
{
    /* A directory the candidate made unreadable is only unlocked once its
     * parent is: each pass opens one more level. */
    int r = -1;
    for (int pass = 0; pass < 16 && r != 0; pass++) {
        nftw(path, unlock_dir, 32, FTW_PHYS | FTW_MOUNT);
        r = nftw(path, remove_one, 32, FTW_PHYS | FTW_MOUNT | FTW_DEPTH);
        if (r != 0 && access(path, F_OK) < 0 && errno == ENOENT)
            r = 0;
    }
    return r;
}
