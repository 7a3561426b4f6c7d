/* boxdir.c: a run's work directory (boxdir.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/scratch.h"
#include "serve/boxdir.h"
#include "serve/request.h"
#include "util/escape.h"

#define BOX_RANDOM_BYTES 8
#define WORK_MODE 0755

char *vg_boxdir_work(const char *box)
{
    return vg_xasprintf("%s/%s", box, VG_SREQ_WORK);
}

char *vg_boxdir_new(const char *pool_dir, uid_t uid, struct vg_err *err)
{
    uint8_t raw[BOX_RANDOM_BYTES];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        return vg_errf(err, "getrandom: %s", strerror(errno)), NULL;
    char name[2 * BOX_RANDOM_BYTES + 3] = "s-";
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(name + 2 + 2 * i, 3, "%02x", raw[i]);
    char *box = vg_xasprintf("%s/%s", pool_dir, name), *work = vg_boxdir_work(box);
    int rc = mkdir(box, 0700) < 0 || mkdir(work, WORK_MODE) < 0 ||
                     (uid && chown(work, uid, uid) < 0)
                 ? -1
                 : 0;
    if (rc < 0) {
        vg_errf(err, "%s: %s", work, strerror(errno));
        vg_scratch_remove(box);
        free(box);
        box = NULL;
    }
    free(work);
    return box;
}

/* Gives the tree under dirfd to uid.  The tree is the daemon's own, made
 * of plain files and directories (the request's): nothing is followed. */
static int chown_tree(int dirfd, uid_t uid, unsigned depth)
{
    int rc = fchown(dirfd, uid, uid);
    DIR *dd = rc == 0 ? fdopendir(dirfd) : NULL;
    if (!dd) {
        close(dirfd);
        return -1;
    }
    for (struct dirent *e; rc == 0 && (e = readdir(dd));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (e->d_type == DT_DIR && depth < VG_SREQ_MAX_DEPTH) {
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            rc = sub < 0 ? -1 : chown_tree(sub, uid, depth + 1);
        } else {
            rc = fchownat(dirfd, e->d_name, uid, uid, AT_SYMLINK_NOFOLLOW);
        }
    }
    closedir(dd);
    return rc;
}

int vg_boxdir_fill(const char *box, const char *run_dir, uid_t uid, struct vg_err *err)
{
    char *from = vg_xasprintf("%s/%s", run_dir, VG_SREQ_WORK), *to = vg_boxdir_work(box);
    DIR *dd = opendir(from);
    int tfd = open(to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc = dd && tfd >= 0 ? 0 : -1;
    for (struct dirent *e; rc == 0 && (e = readdir(dd));) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = renameat(dirfd(dd), e->d_name, tfd, e->d_name);
    }
    if (rc == 0 && uid) {
        int fd = dup(tfd);
        rc = fd < 0 ? -1 : chown_tree(fd, uid, 0);
    }
    if (rc < 0)
        vg_errf(err, "the request's files into %s: %s", to, strerror(errno));
    if (dd)
        closedir(dd);
    if (tfd >= 0)
        close(tfd);
    free(from);
    free(to);
    return rc;
}

void vg_boxdir_return(const char *box, const char *run_dir)
{
    char *work = vg_boxdir_work(box), *dst = vg_xasprintf("%s/%s", run_dir, VG_SREQ_WORK);
    /* dst is the request's, emptied at the start: the candidate's work
     * takes its place, whatever the candidate made of it */
    if ((rmdir(dst) < 0 && errno != ENOENT) || rename(work, dst) < 0)
        vg_say(stderr, "vigil serve: %s: cannot keep the run's work dir: %s", dst,
               strerror(errno));
    vg_scratch_remove(box);
    free(work);
    free(dst);
}
