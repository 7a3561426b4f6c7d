/* setup.c: execute the plan inside the new namespaces.  One linear
 * function: make our mounts private, build the new root on a tmpfs while
 * the host root is still reachable at /oldroot, then pivot into it and drop
 * the host root entirely.  Runs in the child with the capabilities of the
 * new user namespace; every failure names its operation. */
#include "launcher/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/syscalls.h"

#define BASE "/tmp"          /* where the staging tmpfs is mounted */
#define OLDROOT "/oldroot"   /* the host root while we build */
#define NEWROOT "/newroot"   /* the sandbox root being built */

/* mkdir -p, for paths under NEWROOT. */
static int mkdir_p(char *path, mode_t mode)
{
    for (char *s = path + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        int r = mkdir(path, 0755);
        *s = '/';
        if (r < 0 && errno != EEXIST)
            return -1;
    }
    if (mkdir(path, mode) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

/* The directories above path. */
static int touch_parent(char *path)
{
    char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        *slash = 0;
        int r = mkdir_p(path, 0755);
        *slash = '/';
        if (r < 0)
            return -1;
    }
    return 0;
}

/* Make an empty file (and its parents) to bind a file over; one that is
 * there already (in an image's read-only tree: an --artifact over the
 * image's file) is the mount point as it is. */
static int touch_p(char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
        return 0;
    if (touch_parent(path) < 0)
        return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return errno == EEXIST ? 0 : -1;
    close(fd);
    return 0;
}

/* Read-only (and nosuid/nodev) for a mount and everything below it. */
static int make_ro_flags(const char *path, bool nodev, unsigned recursive)
{
    struct mount_attr attr = {
        .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | (nodev ? MOUNT_ATTR_NODEV : 0),
    };
    return (int)syscall(VG_NR_mount_setattr, AT_FDCWD, path, recursive, &attr, sizeof attr);
}

static int make_ro(const char *path, bool nodev)
{
    return make_ro_flags(path, nodev, AT_RECURSIVE);
}

static int bind_mount(const char *src, const char *dst, bool is_dir, bool rw, bool dev)
{
    char *d = vg_xstrdup(dst);
    int r = is_dir ? mkdir_p(d, 0755) : touch_p(d);
    free(d);
    if (r < 0)
        return -1;
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
        return -1;
    if (rw) {
        struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | (dev ? 0 : MOUNT_ATTR_NODEV)};
        return (int)syscall(VG_NR_mount_setattr, AT_FDCWD, dst, AT_RECURSIVE, &attr, sizeof attr);
    }
    return make_ro(dst, !dev);
}

static int do_tmpfs(const char *dst, uint64_t size, unsigned mode)
{
    char *d = vg_xstrdup(dst);
    int r = mkdir_p(d, 0755);
    free(d);
    if (r < 0)
        return -1;
    char opts[64];
    if (size)
        snprintf(opts, sizeof opts, "size=%llu,mode=%o", (unsigned long long)size, mode);
    else
        snprintf(opts, sizeof opts, "mode=%o", mode);
    return mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts);
}

static int do_mask(const char *dst)
{
    struct stat st;
    if (lstat(dst, &st) < 0)
        return -1;
    if (S_ISDIR(st.st_mode)) {
        if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
                  "size=4k,nr_inodes=1,mode=0") < 0)
            return -1;
        return 0;
    }
    if (S_ISLNK(st.st_mode))
        return 0; /* a symlink's target is masked (or not mounted) on its own */
    if (mount(OLDROOT "/dev/null", dst, NULL, MS_BIND, NULL) < 0)
        return -1;
    return make_ro(dst, false);
}

static int do_symlink(const char *target, const char *dst)
{
    char *d = vg_xstrdup(dst);
    char *slash = strrchr(d, '/');
    int r = 0;
    if (slash && slash != d) {
        *slash = 0;
        r = mkdir_p(d, 0755);
    }
    free(d);
    if (r < 0)
        return -1;
    if (symlink(target, dst) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

/* A private copy of a host file in the sandbox's own tmpfs, read with
 * the sandbox's own rights on the host file (as a bind would be), created
 * new (never through a symlink) and handed to the sandbox user, who may
 * rewrite it (gcc -o over it) without touching the host's. */
static int do_copy(const char *src, const char *dst, unsigned mode)
{
    char *d = vg_xstrdup(dst);
    int r = touch_parent(d);
    free(d);
    if (r < 0)
        return -1;
    int in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (in < 0)
        return -1;
    struct stat st;
    int out = -1;
    if (fstat(in, &st) == 0 && !S_ISREG(st.st_mode))
        errno = EINVAL;
    else
        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    r = out < 0 ? -1 : 0;
    char buf[1 << 16];
    ssize_t n;
    while (r == 0 && (n = read(in, buf, sizeof buf)) != 0)
        r = n < 0 ? -1 : vg_write_all(out, buf, (size_t)n);
    if (r == 0 && (fchown(out, VG_SANDBOX_UID, VG_SANDBOX_GID) < 0 ||
                   fchmod(out, mode & 0777) < 0))
        r = -1;
    int e = errno;
    close(in);
    if (out >= 0 && close(out) < 0 && r == 0)
        return -1;
    errno = e;
    return r;
}

/* A file of vigil's own holding text, over dst: written into the staging
 * tmpfs (our root while we build; nobody else sees it), then its mount
 * is moved onto dst read-only.  move_mount without MOVE_MOUNT_T_SYMLINKS:
 * a dst that is a symlink (/etc/resolv.conf often is) is covered itself,
 * never followed to wherever it points. */
static int do_file(const char *text, const char *dst, unsigned mode, bool make)
{
    struct stat st;
    char *d = vg_xstrdup(dst);
    /* make: a file the image lacks, on the skeleton made for it (plan_image.c) */
    int made = make && lstat(dst, &st) < 0 && errno == ENOENT ? touch_p(d) : 0;
    free(d);
    if (made < 0 || lstat(dst, &st) < 0)
        return -1;
    char name[] = "/vigil-file-XXXXXX";
    int fd = mkostemp(name, O_CLOEXEC);
    if (fd < 0)
        return -1;
    int r = vg_write_all(fd, text, strlen(text)) < 0 || fchmod(fd, mode & 0777) < 0 ? -1 : 0;
    if (close(fd) < 0)
        r = -1;
    int tree = r < 0 ? -1 : (int)syscall(VG_NR_open_tree, AT_FDCWD, name,
                                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    struct mount_attr attr = {
        .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
    };
    if (tree < 0 || syscall(VG_NR_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0 ||
        syscall(VG_NR_move_mount, tree, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        r = -1;
    int e = errno;
    if (tree >= 0)
        close(tree);
    unlink(name); /* the mount keeps the file */
    errno = e;
    return r;
}

static int run_op(const struct vg_op *op)
{
    char *dst = vg_xasprintf(NEWROOT "%s", strcmp(op->dst, "/") ? op->dst : "");
    char *src = op->src && op->kind != VG_OP_FILE ? vg_xasprintf(OLDROOT "%s", op->src) : NULL;
    struct stat st;
    int r = 0;

    switch (op->kind) {
    case VG_OP_TMPFS:
        r = do_tmpfs(dst, op->size, op->mode);
        break;
    case VG_OP_BIND_RO:
    case VG_OP_BIND_RW:
    case VG_OP_BIND_DEV:
        if (stat(src, &st) < 0) {
            r = (op->optional && errno == ENOENT) ? 0 : -1;
            break;
        }
        r = bind_mount(src, dst, S_ISDIR(st.st_mode), op->kind != VG_OP_BIND_RO,
                 op->kind == VG_OP_BIND_DEV);
        break;
    case VG_OP_COPY:
        r = do_copy(src, dst, op->mode);
        break;
    case VG_OP_MASK:
        r = do_mask(dst);
        if (r < 0 && op->optional && errno == ENOENT)
            r = 0;
        break;
    case VG_OP_DEVPTS:
        /* newinstance: not the host's ptys; ptmxmode: the candidate's
         * uid may open pts/ptmx; no gid=: the host's tty group is not
         * mapped in the sandbox's user namespace. */
        r = mkdir_p(dst, 0755);
        if (r == 0)
            r = mount("devpts", dst, "devpts", MS_NOSUID | MS_NOEXEC,
                      "newinstance,ptmxmode=0666,mode=0620");
        break;
    case VG_OP_PROC:
        r = mkdir_p(dst, 0555);
        if (r == 0)
            r = mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
        break;
    case VG_OP_SYMLINK:
        r = do_symlink(op->src, dst); /* src is link text, not a host path */
        break;
    case VG_OP_FILE:
        r = do_file(op->src, dst, op->mode, !op->optional); /* src is the file's text */
        if (r < 0 && op->optional && errno == ENOENT)
            r = 0;
        break;
    case VG_OP_DIR:
        r = mkdir_p(dst, op->mode);
        break;
    case VG_OP_WORKDIR:
        r = mkdir_p(dst, op->mode);
        if (r == 0)
            r = chown(dst, VG_SANDBOX_UID, VG_SANDBOX_GID);
        break;
    case VG_OP_SEAL:
        r = make_ro_flags(dst, true, 0); /* this mount only: the binds on it keep theirs */
        break;
    case VG_OP_REMOUNT_RO:
        if (lstat(dst, &st) < 0) {
            r = (op->optional && errno == ENOENT) ? 0 : -1;
            break;
        }
        /* The root itself only: the mounts on it (/tmp, the workdir) keep
         * their own modes. */
        if (strcmp(op->dst, "/") == 0) {
            r = make_ro_flags(dst, true, 0);
            break;
        }
        r = mount(dst, dst, NULL, MS_BIND | MS_REC, NULL);
        if (r == 0)
            r = make_ro(dst, true);
        break;
    }
    free(dst);
    free(src);
    return r;
}

int vg_setup_execute(const struct vg_plan *p, struct vg_err *err)
{
    static const char *const names[] = {
        [VG_OP_TMPFS] = "tmpfs", [VG_OP_BIND_RO] = "read-only bind", [VG_OP_BIND_RW] = "bind",
        [VG_OP_BIND_DEV] = "device bind", [VG_OP_MASK] = "mask", [VG_OP_PROC] = "proc",
        [VG_OP_SYMLINK] = "symlink", [VG_OP_DIR] = "mkdir", [VG_OP_WORKDIR] = "workdir", [VG_OP_REMOUNT_RO] = "remount read-only",
        [VG_OP_COPY] = "copy",
        [VG_OP_DEVPTS] = "devpts", [VG_OP_FILE] = "file", [VG_OP_SEAL] = "seal",
    };
    /* Nothing we mount may leak back to the host's mount namespace. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        vg_errf(err, "make mounts private: %s", strerror(errno));
        return -1;
    }
    if (mount("tmpfs", BASE, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755") < 0 ||
        chdir(BASE) < 0 || mkdir("newroot", 0755) < 0 || mkdir("oldroot", 0755) < 0 ||
        mount("tmpfs", "newroot", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") < 0 ||
        syscall(VG_NR_pivot_root, ".", "oldroot") < 0 || chdir("/") < 0) {
        vg_errf(err, "prepare the new root: %s", strerror(errno));
        return -1;
    }
    for (unsigned i = 0; i < p->nops; i++) {
        if (run_op(&p->ops[i]) < 0) {
            const struct vg_op *op = &p->ops[i];
            bool text = op->kind == VG_OP_SYMLINK || op->kind == VG_OP_FILE || !op->src;
            /* a copy never replaces a file: in a host --workdir it is the user's */
            const char *why = op->kind == VG_OP_COPY && errno == EEXIST
                                  ? "a file of that name is there, and is not replaced"
                                  : strerror(errno);
            vg_errf(err, "%s %s%s%s: %s", names[op->kind], text ? "" : op->src,
                    text ? "" : " -> ", op->dst, why);
            return -1;
        }
    }
    /* Leave the host root behind for good. */
    if (umount2(OLDROOT, MNT_DETACH) < 0 || chdir(NEWROOT) < 0 ||
        syscall(VG_NR_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
        chdir("/") < 0) {
        vg_errf(err, "switch to the new root: %s", strerror(errno));
        return -1;
    }
    return 0;
}
