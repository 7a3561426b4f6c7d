/* scratch.c: see scratch.h. */

#include "launcher/scratch.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
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

/* One directory on the way down: what it is, so that the way back up
 * ("..") can be checked to lead where it came from, and its name in its
 * parent. */
struct level {
    dev_t dev;
    ino_t ino;
    char *name;
};

/* Removes what dirfd holds but subdirectories; the name of the first
 * subdirectory on the same file system into *sub (NULL: none left).  -1
 * when something cannot go (another file system mounted there, EPERM). */
static int clear_files(int dirfd, dev_t dev, char **sub)
{
    *sub = NULL;
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = 0;
    for (struct dirent *e; !*sub && (e = readdir(d));) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            rc = errno == ENOENT ? rc : -1;
        } else if (st.st_dev != dev) {
            rc = -1; /* a mount point: not ours to cross */
        } else if (S_ISDIR(st.st_mode)) {
            *sub = vg_xstrdup(e->d_name);
        } else if (unlinkat(dirfd, e->d_name, 0) < 0 && errno != ENOENT) {
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

/* The directory name below dirfd, opened; a directory the candidate made
 * unreadable (chmod 0) is given its owner's rights back first. */
static int open_sub(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && fchmodat(dirfd, name, 0700, 0) == 0)
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0)
        fchmod(fd, 0700); /* its entries can go (a dir without w or x) */
    return fd;
}

/* Removes the tree by file descriptors, one directory open at a time: by
 * path, a tree deeper than PATH_MAX (a candidate's 20 names of 250 bytes)
 * could not be reached, and recursion would go as deep as the candidate
 * made it.  It goes down to the first subdirectory, empties, goes back up
 * through ".." (checked against the inode it came from) and removes it. */
int vg_scratch_remove(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : (errno == ENOTDIR ? unlink(path) : -1);
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return -1;
    }
    fchmod(fd, st.st_mode | 0700);
    dev_t dev = st.st_dev;
    struct level *up = NULL;
    size_t depth = 0, cap = 0;
    int rc = 0;
    for (;;) {
        char *sub;
        if (clear_files(fd, dev, &sub) < 0)
            rc = -1;
        if (sub) {
            int next = open_sub(fd, sub);
            struct stat here;
            if (next < 0 || fstat(fd, &here) < 0) {
                free(sub);
                if (next >= 0)
                    close(next);
                rc = -1;
                break;
            }
            if (depth == cap)
                up = vg_xrealloc(up, (cap = cap ? 2 * cap : 64) * sizeof *up);
            up[depth++] = (struct level){here.st_dev, here.st_ino, sub};
            close(fd);
            fd = next;
            continue;
        }
        if (depth == 0)
            break;
        /* empty: back to the parent, and this one goes */
        struct level *l = &up[--depth];
        int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat pst;
        close(fd);
        if (parent < 0 || fstat(parent, &pst) < 0 || pst.st_dev != l->dev ||
            pst.st_ino != l->ino) {
            if (parent >= 0)
                close(parent);
            free(l->name);
            fd = -1;
            rc = -1;
            break;
        }
        if (unlinkat(parent, l->name, AT_REMOVEDIR) < 0)
            rc = -1;
        free(l->name);
        fd = parent;
        if (rc < 0)
            break; /* a directory that would not go: stop rather than loop on it */
    }
    for (size_t i = 0; i < depth; i++)
        free(up[i].name);
    free(up);
    if (fd >= 0)
        close(fd);
    if (rc == 0 && rmdir(path) < 0 && errno != ENOENT)
        rc = -1;
    return rc;
}
