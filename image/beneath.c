/* beneath.c: the file operations of an import, which runs as root and
 * must never reach outside the tree it builds: every path is resolved by
 * the kernel beneath a directory fd and through no symlink (openat2), and
 * every change is made on a final name relative to an fd so opened.  A
 * symlink in the tree is only ever created, removed or read, never
 * followed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "image/image_int.h"

#define PROC_FD "/proc/self/fd/"

int vg_image_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    struct open_how how = {
        .flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
        .mode = (flags & O_CREAT) ? mode : 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(VG_NR_openat2, dirfd, path[0] ? path : ".", &how, sizeof how);
}

int vg_image_open_file_beneath(const char *dir, const char *rel, struct vg_err *err)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        vg_errf(err, "%s: %m", dir);
        return -1;
    }
    /* O_NONBLOCK: a FIFO must not hang the open; it is refused below */
    int fd = vg_image_openat(dfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
    int e = errno;
    close(dfd);
    struct stat st;
    if (fd < 0) {
        vg_errf(err, "%s/%s: %s", dir, rel, e == ELOOP ? "is or is under a symlink, refused"
                                                      : strerror(e));
        return -1;
    }
    if (fstat(fd, &st) < 0) {
        vg_errf(err, "%s/%s: %m", dir, rel);
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        vg_errf(err, "%s/%s: not a regular file, refused", dir, rel);
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        vg_errf(err, "%s/%s: %m", dir, rel);
        close(fd);
        return -1;
    }
    return fd;
}

static int remove_tree(int dirfd, const char *name, int depth, struct vg_err *err);

/* Remove the entries of the open directory fd (which it takes). */
static int empty_fd(int fd, int depth, struct vg_err *err)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        vg_errf(err, "open directory: %m");
        close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    /* removing while reading: readdir may then skip or repeat entries,
     * so read again from the start until a pass removes nothing */
    for (bool again = true; again && rc == 0;) {
        again = false;
        rewinddir(d);
        while (rc == 0 && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            rc = remove_tree(dirfd(d), e->d_name, depth + 1, err);
            again = true;
        }
    }
    closedir(d);
    return rc;
}

static int remove_tree(int dirfd, const char *name, int depth, struct vg_err *err)
{
    /* "." is dirfd itself and ".." the directory above it, which may be
     * outside the tree (a whiteout ".wh..." at the root named the
     * import's own directory, tree and all) */
    if (!strcmp(name, ".") || !strcmp(name, "..")) {
        vg_errf(err, "remove %s: not an entry of the directory", name);
        return -1;
    }
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM) {
        vg_errf(err, "remove %s: %m", name);
        return -1;
    }
    if (depth > VG_IMAGE_REMOVE_DEPTH) {
        vg_errf(err, "remove %s: deeper than %d directories", name, VG_IMAGE_REMOVE_DEPTH);
        return -1;
    }
    /* O_PATH first: a directory without read permission (the image said
     * 0000) is still ours to open up */
    int p = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (p < 0) {
        vg_errf(err, "remove %s: %m", name);
        return -1;
    }
    /* through the fd, never the name: fchmodat follows a symlink swapped
     * in since (an O_PATH fd takes no fchmod; its /proc link does) */
    struct stat st;
    char self[sizeof PROC_FD + 3 * sizeof(int)];
    snprintf(self, sizeof self, PROC_FD "%d", p);
    if (fstat(p, &st) == 0 && (st.st_mode & S_IRWXU) != S_IRWXU &&
        chmod(self, (st.st_mode | S_IRWXU) & VG_IMAGE_PERM) < 0) {
        vg_errf(err, "remove %s: make it writable: %m", name);
        close(p);
        return -1;
    }
    close(p);
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        vg_errf(err, "remove %s: %m", name);
        return -1;
    }
    if (empty_fd(fd, depth, err) < 0)
        return -1;
    if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
        vg_errf(err, "remove %s: %m", name);
        return -1;
    }
    return 0;
}

int vg_image_remove_at(int dirfd, const char *name, struct vg_err *err)
{
    return remove_tree(dirfd, name, 0, err);
}

int vg_image_empty_dir(int dirfd, struct vg_err *err)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        vg_errf(err, "open directory: %m");
        return -1;
    }
    return empty_fd(fd, 0, err);
}
