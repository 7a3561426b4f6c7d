/* notify_fs.c: file calls carried out by vigil: the file-changing ones
 * (unlink, rmdir, mkdir, mknod, symlink, rename, link, chmod, chown,
 * truncate, the utime family, set/removexattr) and those that read what
 * they name (readlink, get/listxattr: the answer is written back into the
 * caller's buffer).  The kernel never reads the candidate's memory
 * again for them: the paths are the decided (canonical, sandbox-view)
 * ones, the other arguments are copied once here.
 *
 * Each path is resolved inside the sandbox root (RESOLVE_IN_ROOT) with no
 * symlink and no magic link followed, so what is acted on is the object
 * the decided path names at that moment, never what a symlink swapped in
 * meanwhile leads to.  A call on a name (unlink, rename, mkdir...) opens
 * its parent directory (O_PATH) that way and acts on the last component
 * with the *at call, which does not follow it either; a call on an object
 * (chmod, chown, truncate...) opens the object itself (O_PATH, the symlink
 * itself when the call does not follow) and acts on that fd.  A call on an
 * fd (fchmod, ftruncate...) acts on a pidfd_getfd copy of the caller's
 * file, checked to be the one decided.  Everything runs in the thread that
 * acts as the candidate (a crew: crew.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "core/syscalls.h"
#include "tracer/mem.h"
#include "tracer/decode_impl.h"
#include "tracer/notify/notify_int.h"

/* The argument of Linux 6.13's *xattrat calls */
struct xattr_args {
    uint64_t value;
    uint32_t size;
    uint32_t flags;
};
#define VG_AT_EMPTY_PATH 0x1000u
#define VG_AT_NOFOLLOW 0x100u
#define VG_AT_REMOVEDIR 0x200u
#define VG_XATTR_NAME_MAX 255u
#define VG_XATTR_SIZE_MAX 65536u
#define VG_XATTR_LIST_MAX 65536u
#define ID_NONE 0xffffffffu /* chown's "leave it" */

/* How a call reaches what it changes. */
enum reach {
    NOT_CARRIED, /* not a file call of this carrier */
    ON_NAME,     /* the last component, in its parent directory */
    ON_NAMES,    /* two of them (rename, link) */
    ON_OBJECT,   /* the object the path names (or the fd, for f* calls) */
};

/* What each op of this carrier (the syscall table's carry column) does:
 * how it reaches its object, and what the kernel says when the path is
 * "/" itself (no last component).  Which calls are which op, and where
 * their arguments are (pos.dev, pos.uid, pos.xname, pos.buf, ...), is the
 * table's (core/syscalls_rows.h). */
struct fs_row {
    enum vg_carry op;
    enum reach reach;
    int root_err;
};
#define FS_OP(o, reach, err) [VG_CARRY_##o] = {VG_CARRY_##o, (reach), (err)}
static const struct fs_row ops[VG_CARRY_N] = {
    FS_OP(UNLINK, ON_NAME, EISDIR), FS_OP(RMDIR, ON_NAME, EBUSY),
    FS_OP(MKDIR, ON_NAME, EEXIST), FS_OP(MKNOD, ON_NAME, EEXIST),
    FS_OP(SYMLINK, ON_NAME, EEXIST), FS_OP(RENAME, ON_NAMES, EBUSY),
    FS_OP(LINK, ON_NAMES, EEXIST), FS_OP(CHMOD, ON_OBJECT, 0), FS_OP(CHOWN, ON_OBJECT, 0),
    FS_OP(TRUNCATE, ON_OBJECT, 0), FS_OP(UTIMENS, ON_OBJECT, 0), FS_OP(UTIMES, ON_OBJECT, 0),
    FS_OP(UTIME, ON_OBJECT, 0), FS_OP(SETXATTR, ON_OBJECT, 0), FS_OP(RMXATTR, ON_OBJECT, 0),
    /* calls that read what they name: the answer is written back */
    FS_OP(READLINK, ON_OBJECT, 0), FS_OP(GETXATTR, ON_OBJECT, 0),
    FS_OP(LISTXATTR, ON_OBJECT, 0),
};
#undef FS_OP

/* The flags an *at call takes (the row's pos.valid): the kernel fails any
 * other bit EINVAL before it looks at a path; the calls whose flags vigil
 * passes on as they are (renameat2, the xattr calls) have the kernel
 * check them. */
static int check_flags(const struct vg_call *c)
{
    const struct vg_argpos *p = &c->ent->pos;
    if (p->valid && p->flags && ((uint32_t)vg_arg(c, p->flags) & ~(uint32_t)p->valid))
        return -EINVAL;
    return 0;
}

static const struct fs_row *row_of(const struct vg_call *c)
{
    if (!c->ent || vg_sys_carrier(c->ent) != VG_CARRIER_FS || !vg_nt_fs_knows(c->ent->carry))
        return NULL;
    return &ops[c->ent->carry];
}

bool vg_nt_fs_knows(enum vg_carry op)
{
    return (unsigned)op < VG_CARRY_N && ops[op].reach != NOT_CARRIED;
}

/* Does op read what it names (its answer is written back)? */
static bool reads(enum vg_carry op)
{
    return op == VG_CARRY_READLINK || op == VG_CARRY_GETXATTR || op == VG_CARRY_LISTXATTR;
}

bool vg_nt_fs_takes(const struct vg_call *c)
{
    /* every one, /proc paths included: letting the kernel run a call
     * decided on a path would have it read the path again, which another
     * thread may have changed to a denied one meanwhile */
    return row_of(c) != NULL;
}

/* ---- reading calls on the caller's own /proc entries ---- */

/* Is path the caller's own /proc/PID or below it (PID its process's or
 * its own thread's id in the sandbox)?  procfs guards /proc/PID/exe, cwd,
 * root, fd/N and the like with a ptrace access check, which a crew fails
 * (it is outside the sandbox's user namespace, with a Landlock domain of
 * its own) and which the kernel always passes for a process's own
 * entries: these vigil reads itself, as notify_open.c opens the caller's
 * own maps.  Nothing is shown that the caller could not read. */
static bool own_proc(const struct vg_task *t, const char *path)
{
    const char *p = path + strlen("/proc/");
    size_t n = strspn(p, "0123456789");
    if (strncmp(path, "/proc/", strlen("/proc/")) || !n || n > 9 || (p[n] && p[n] != '/'))
        return false;
    long pid = strtol(p, NULL, 10);
    return pid == t->nspid || pid == t->nstid;
}

/* The text of /proc/self and /proc/thread-self as the caller reads it:
 * they name the reader's own ids in the sandbox's pid namespace, where
 * vigil's threads have none (the kernel would answer them ENOENT).
 * 1: *text is set; 0: path is neither. */
static int self_link(const struct vg_task *t, const char *path, char *text, size_t n)
{
    if (!strcmp(path, "/proc/self"))
        snprintf(text, n, "%d", (int)t->nspid);
    else if (!strcmp(path, "/proc/thread-self"))
        snprintf(text, n, "%d/task/%d", (int)t->nspid, (int)t->nstid);
    else
        return 0;
    return 1;
}

/* One carried-out call: what the thread acting as the candidate needs,
 * every argument already copied out of the candidate. */
struct fs_job {
    const struct fs_row *row;
    const struct vg_call *c;
    int root_fd;
    int fd;                    /* the caller's file (a copy), or -1: by path */
    bool empty_path;           /* ... named by an empty path (AT_EMPTY_PATH), which
                                * takes an O_PATH file, where the f* calls do not */
    bool trailing_slash;       /* the path as given ends in '/': a directory */
    bool follow;               /* the call follows a symlink at the object */
    mode_t umask;              /* the caller's, for mkdir and mknod */
    uint32_t uid, gid;         /* chown: host ids (ID_NONE: unchanged) */
    uint64_t length;           /* truncate */
    rlim_t fsize;              /* the caller's RLIMIT_FSIZE */
    bool fsize_hit;
    struct timespec ts[2];
    bool ts_now;               /* NULL times: now */
    char xname[VG_XATTR_NAME_MAX + 1];
    char *xvalue;
    size_t xsize;
    int xflags;
    char *out;                 /* what a reading call answers, outlen bytes at most */
    size_t outlen;
};

int vg_nt_open_in_root(int root_fd, const char *path, int flags)
{
    struct open_how how = {
        .flags = (uint64_t)(O_PATH | O_CLOEXEC | flags),
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    int fd = (int)syscall(VG_NR_openat2, root_fd, path, &how, sizeof how);
    return fd < 0 ? -errno : fd;
}

int vg_nt_open_parent(int root_fd, const char *path, const char **name)
{
    const char *slash = strrchr(path, '/');
    if (!slash || path[0] != '/')
        return -EINVAL;
    *name = slash + 1;
    if (!**name)
        return -EEXIST; /* "/" itself: the caller's row says what that means */
    size_t n = (size_t)(slash - path);
    char dir[PATH_MAX];
    if (n >= sizeof dir)
        return -ENAMETOOLONG;
    memcpy(dir, path, n);
    dir[n] = 0;
    return vg_nt_open_in_root(root_fd, n ? dir : "/", O_DIRECTORY);
}

/* "/proc/self/fd/N": the inode an O_PATH fd of ours holds, for the calls
 * that have no fd form taking one (chmod, truncate, setxattr). */
static void fd_path(int fd, char *buf, size_t n)
{
    snprintf(buf, n, "/proc/self/fd/%d", fd);
}

static long ret_of(long r)
{
    return r < 0 ? -errno : r;
}

/* ---- on names ---- */

/* mkdir and mknod under the caller's umask, read for this very call.  The
 * crew's own stays 0 otherwise: opens apply the caller's umask to the mode
 * themselves (notify_open.c), and one left here would be applied to their
 * mode too (a later creat after umask(0) got 0644 for 0666). */
static long with_umask(const struct fs_job *j, int dfd, const char *name)
{
    const struct vg_call *c = j->c;
    mode_t crew = umask(j->umask);
    long r = j->row->op == VG_CARRY_MKDIR
        ? ret_of(mkdirat(dfd, name, (mode_t)c->args.mode))
        : ret_of(mknodat(dfd, name, (mode_t)c->args.mode, (dev_t)vg_arg(c, c->ent->pos.dev)));
    umask(crew);
    return r;
}

static long on_name(const struct fs_job *j, int dfd, const char *name)
{
    const struct vg_call *c = j->c;
    switch (j->row->op) {
    case VG_CARRY_UNLINK: {
        uint8_t at = c->ent->pos.flags; /* unlinkat's */
        return ret_of(unlinkat(dfd, name, at ? (int)(vg_arg(c, at) & VG_AT_REMOVEDIR) : 0));
    }
    case VG_CARRY_RMDIR:
        return ret_of(unlinkat(dfd, name, AT_REMOVEDIR));
    case VG_CARRY_MKDIR:
    case VG_CARRY_MKNOD:
        return with_umask(j, dfd, name);
    case VG_CARRY_SYMLINK:
        return ret_of(symlinkat(c->args.path2, dfd, name));
    default:
        return -ENOSYS;
    }
}

static long on_names(const struct fs_job *j, int d1, const char *n1, int d2, const char *n2)
{
    if (j->row->op == VG_CARRY_LINK)
        return ret_of(linkat(d1, n1, d2, n2, 0)); /* the decided path is the object */
    uint8_t at = j->c->ent->pos.flags;
    unsigned flags = at ? (unsigned)vg_arg(j->c, at) : 0;
    return ret_of(syscall(VG_NR_renameat2, d1, n1, d2, n2, flags));
}

/* ---- on objects ---- */

/* Would the candidate's file size limit stop this truncate?  The kernel
 * then sends it SIGXFSZ and fails the call with EFBIG (inode_newsize_ok);
 * vigil's own thread has no such limit, so the check is made here. */
static bool past_fsize(struct fs_job *j, int fd)
{
    struct stat st;
    if (j->fsize == RLIM_INFINITY || j->length <= j->fsize || fstat(fd, &st) < 0 ||
        (uint64_t)st.st_size >= j->length || !S_ISREG(st.st_mode))
        return false;
    j->fsize_hit = true;
    return true;
}

static long on_object(struct fs_job *j, int fd, bool is_path)
{
    const struct vg_call *c = j->c;
    char p[64];
    fd_path(fd, p, sizeof p);
    switch (j->row->op) {
    case VG_CARRY_CHMOD:
        if (is_path)
            return ret_of(fchmodat(AT_FDCWD, p, (mode_t)c->args.mode, 0));
        return ret_of(j->empty_path
                          ? syscall(VG_NR_fchmodat2, fd, "", (mode_t)c->args.mode, VG_AT_EMPTY_PATH)
                          : fchmod(fd, (mode_t)c->args.mode));
    case VG_CARRY_CHOWN:
        /* fchown itself refuses an O_PATH file (EBADF), as the kernel
         * refuses the candidate's */
        return ret_of(is_path || j->empty_path ? fchownat(fd, "", j->uid, j->gid, AT_EMPTY_PATH)
                                               : fchown(fd, j->uid, j->gid));
    case VG_CARRY_TRUNCATE:
        if (past_fsize(j, fd))
            return -EFBIG;
        return ret_of(is_path ? truncate(p, (off_t)j->length) : ftruncate(fd, (off_t)j->length));
    case VG_CARRY_UTIMENS:
    case VG_CARRY_UTIMES:
    case VG_CARRY_UTIME:
        if (is_path)
            return ret_of(utimensat(AT_FDCWD, p, j->ts_now ? NULL : j->ts, 0));
        return ret_of(j->empty_path ? utimensat(fd, "", j->ts_now ? NULL : j->ts, AT_EMPTY_PATH)
                                    : futimens(fd, j->ts_now ? NULL : j->ts));
    case VG_CARRY_SETXATTR:
        return ret_of(is_path ? setxattr(p, j->xname, j->xvalue, j->xsize, j->xflags)
                              : fsetxattr(fd, j->xname, j->xvalue, j->xsize, j->xflags));
    case VG_CARRY_RMXATTR:
        return ret_of(is_path ? removexattr(p, j->xname) : fremovexattr(fd, j->xname));
    case VG_CARRY_READLINK:
        return ret_of(readlinkat(fd, "", j->out, j->outlen));
    case VG_CARRY_GETXATTR:
        return ret_of(is_path ? getxattr(p, j->xname, j->out, j->outlen)
                              : fgetxattr(fd, j->xname, j->out, j->outlen));
    case VG_CARRY_LISTXATTR:
        return ret_of(is_path ? listxattr(p, j->out, j->outlen) : flistxattr(fd, j->out, j->outlen));
    default:
        return -ENOSYS;
    }
}

/* ---- in the thread acting as the candidate ---- */

/* The directory and the name a call on a name acts on, as the kernel
 * sees its last component: the decided path drops what the candidate
 * wrote after it, and the kernel answers for that itself.  A trailing
 * '/' stays on the name (the *at call then wants a directory there, and
 * follows nothing); a last component "." or ".." stays as written, in the
 * directory the decided path names (rmdir("d/.") is EINVAL, never d
 * removed).  The fd, or -errno (-EEXIST: "/" itself). */
#define NOT_ROOT 1000 /* -EEXIST - NOT_ROOT: EEXIST itself, not "/" (open_last) */

static int open_last(const struct fs_job *j, const char *canon, const char *raw, bool removes,
                     char *name, size_t n)
{
    size_t len = raw ? strlen(raw) : 0, end = len;
    while (end > 1 && raw[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && raw[start - 1] != '/')
        start--;
    bool slash = end < len;
    if (raw && ((end - start == 1 && raw[start] == '.') ||
                (end - start == 2 && !strncmp(raw + start, "..", 2)))) {
        snprintf(name, n, "%.*s%s", (int)(end - start), raw + start, slash ? "/" : "");
        return vg_nt_open_in_root(j->root_fd, canon, O_DIRECTORY);
    }
    const char *last;
    int d = vg_nt_open_parent(j->root_fd, canon, &last);
    if (d >= 0 && slash && raw && (strlen(last) != end - start || strncmp(last, raw + start, end - start))) {
        /* "link/": the decided path followed the symlink, where the
         * kernel's calls on a name never do: it finds a name that is no
         * directory (rmdir, unlink, rename's old name: ENOTDIR) or one
         * that exists (mkdir, symlink, a new name: EEXIST) */
        close(d);
        return removes ? -ENOTDIR : -EEXIST - NOT_ROOT;
    }
    if (d >= 0 && (size_t)snprintf(name, n, "%s%s", last, slash ? "/" : "") >= n) {
        close(d);
        return -ENAMETOOLONG;
    }
    return d;
}

static long by_name(struct fs_job *j)
{
    char name[NAME_MAX + 2];
    enum vg_carry op = j->row->op;
    int d = open_last(j, j->c->check_path, j->c->args.path, op == VG_CARRY_UNLINK || op == VG_CARRY_RMDIR,
                      name, sizeof name);
    if (d == -EEXIST)
        return -j->row->root_err;
    if (d == -EEXIST - NOT_ROOT)
        return -EEXIST;
    if (d < 0)
        return d;
    long r = on_name(j, d, name);
    close(d);
    return r;
}

static long by_names(struct fs_job *j)
{
    char n1[NAME_MAX + 2], n2[NAME_MAX + 2];
    int d1 = open_last(j, j->c->check_path, j->c->args.path, j->row->op == VG_CARRY_RENAME, n1,
                       sizeof n1);
    if (d1 < 0)
        return d1 == -EEXIST ? -j->row->root_err : d1 == -EEXIST - NOT_ROOT ? -EEXIST : d1;
    int d2 = open_last(j, j->c->check_path2, j->c->args.path2, false, n2, sizeof n2);
    long r = d2 < 0 ? (d2 == -EEXIST ? -j->row->root_err : d2 == -EEXIST - NOT_ROOT ? -EEXIST : d2)
                    : on_names(j, d1, n1, d2, n2);
    close(d1);
    if (d2 >= 0)
        close(d2);
    return r;
}

/* A call that does not follow, on a symlink (or a /proc magic link)
 * itself: no fd of a symlink takes a mode, times or xattrs (O_PATH), so
 * it acts on the last component in its parent, opened as by_name, with
 * the call's own no-follow form: the kernel then answers as it answers
 * the candidate (a mode on a symlink EOPNOTSUPP, user.* xattrs EPERM or
 * ENODATA, times set). */
static long on_link_name(struct fs_job *j, int d, const char *name)
{
    struct xattr_args xa = {.value = (uint64_t)(uintptr_t)j->out, .size = (uint32_t)j->outlen};
    switch (j->row->op) {
    case VG_CARRY_CHMOD:
        return ret_of(syscall(VG_NR_fchmodat2, d, name, (mode_t)j->c->args.mode, VG_AT_NOFOLLOW));
    case VG_CARRY_UTIMENS:
    case VG_CARRY_UTIMES:
    case VG_CARRY_UTIME:
        return ret_of(utimensat(d, name, j->ts_now ? NULL : j->ts, AT_SYMLINK_NOFOLLOW));
    case VG_CARRY_SETXATTR:
        xa = (struct xattr_args){.value = (uint64_t)(uintptr_t)j->xvalue,
                                 .size = (uint32_t)j->xsize, .flags = (uint32_t)j->xflags};
        return ret_of(syscall(VG_NR_setxattrat, d, name, VG_AT_NOFOLLOW, j->xname, &xa, sizeof xa));
    case VG_CARRY_GETXATTR:
        return ret_of(syscall(VG_NR_getxattrat, d, name, VG_AT_NOFOLLOW, j->xname, &xa, sizeof xa));
    case VG_CARRY_LISTXATTR:
        return ret_of(syscall(VG_NR_listxattrat, d, name, VG_AT_NOFOLLOW, j->out, j->outlen));
    case VG_CARRY_RMXATTR:
        return ret_of(syscall(VG_NR_removexattrat, d, name, VG_AT_NOFOLLOW, j->xname));
    default:
        return -ENOSYS;
    }
}

static long on_link(struct fs_job *j)
{
    const char *name;
    int d = vg_nt_open_parent(j->root_fd, j->c->check_path, &name);
    if (d < 0)
        return d;
    long r = on_link_name(j, d, name);
    close(d);
    /* before Linux 6.6 (fchmodat2) or 6.13 (the *xattrat calls) these
     * cannot reach a symlink itself: refused, as glibc's lchmod */
    return r == -ENOSYS ? -EOPNOTSUPP : r;
}

static long by_object(struct fs_job *j)
{
    if (j->fd >= 0)
        return on_object(j, j->fd, false);
    int fd = vg_nt_open_in_root(j->root_fd, j->c->check_path, O_NOFOLLOW);
    if (fd < 0)
        return fd;
    struct stat st;
    long r;
    if (fstat(fd, &st) < 0)
        r = -errno;
    else if (j->trailing_slash && !S_ISDIR(st.st_mode))
        r = -ENOTDIR; /* "f/": the kernel wants a directory there */
    else if (S_ISLNK(st.st_mode) && j->follow)
        r = -ELOOP; /* a symlink appeared since the decision: never followed */
    else if (j->row->op == VG_CARRY_READLINK && !S_ISLNK(st.st_mode))
        r = -EINVAL; /* readlink's answer for what is not a symlink */
    else if (S_ISLNK(st.st_mode) && j->row->op != VG_CARRY_CHOWN && j->row->op != VG_CARRY_READLINK)
        r = on_link(j); /* the symlink itself: the call does not follow */
    else
        r = on_object(j, fd, true);
    close(fd);
    return r;
}

static long carry(void *arg)
{
    struct fs_job *j = arg;
    switch (j->row->reach) {
    case ON_NAME:
        return by_name(j);
    case ON_NAMES:
        return by_names(j);
    case ON_OBJECT:
        return by_object(j);
    case NOT_CARRIED:
        break; /* row_of gives no such row */
    }
    return -ENOSYS;
}

/* ---- copying the arguments (the supervisor's side) ---- */

/* An id of the candidate's user namespace as the host knows it, from
 * /proc/PID/{uid,gid}_map ("inside outside count" lines). */
static int map_id(pid_t pid, const char *which, uint32_t inside, uint32_t *out)
{
    if (inside == ID_NONE) {
        *out = ID_NONE;
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, which);
    FILE *f = fopen(path, "re");
    if (!f)
        return -EIO;
    unsigned long in, outside, count;
    int r = -EINVAL; /* an id the namespace does not map: chown's own EINVAL */
    while (fscanf(f, "%lu %lu %lu", &in, &outside, &count) == 3)
        if (inside >= in && inside - in < count) {
            *out = (uint32_t)(outside + (inside - in));
            r = 0;
            break;
        }
    fclose(f);
    return r;
}

/* utimensat's timespec[2], utimes' timeval[2], utime's utimbuf, all as
 * timespec[2]; NULL is "now". */
static int copy_times(struct vg_tracee *tr, struct fs_job *j, uint64_t addr)
{
    if (!addr) {
        j->ts_now = true;
        return 0;
    }
    if (j->row->op == VG_CARRY_UTIMENS)
        return vg_tracee_read(tr, addr, j->ts, sizeof j->ts) < 0 ? -EFAULT : 0;
    if (j->row->op == VG_CARRY_UTIMES) {
        struct timeval tv[2];
        if (vg_tracee_read(tr, addr, tv, sizeof tv) < 0)
            return -EFAULT;
        for (int i = 0; i < 2; i++) {
            if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
                return -EINVAL;
            j->ts[i] = (struct timespec){tv[i].tv_sec, tv[i].tv_usec * 1000};
        }
        return 0;
    }
    struct utimbuf ub;
    if (vg_tracee_read(tr, addr, &ub, sizeof ub) < 0)
        return -EFAULT;
    j->ts[0] = (struct timespec){ub.actime, 0};
    j->ts[1] = (struct timespec){ub.modtime, 0};
    return 0;
}

/* POSIX ACLs name users and groups by id, read in the caller's user
 * namespace: the candidate's ids are not vigil's.  Rewritten to the host
 * ids they mean (struct posix_acl_xattr_header + entries). */
#define ACL_VERSION 2u
#define ACL_USER_TAG 0x02u
#define ACL_GROUP_TAG 0x08u
struct acl_entry {
    uint16_t tag, perm;
    uint32_t id;
};

static int map_acl(pid_t pid, struct fs_job *j)
{
    if (strcmp(j->xname, "system.posix_acl_access") && strcmp(j->xname, "system.posix_acl_default"))
        return 0;
    if (j->xsize < sizeof(uint32_t) || (j->xsize - sizeof(uint32_t)) % sizeof(struct acl_entry))
        return -EINVAL;
    struct acl_entry *e = (struct acl_entry *)(void *)(j->xvalue + sizeof(uint32_t));
    size_t n = (j->xsize - sizeof(uint32_t)) / sizeof *e;
    for (size_t i = 0; i < n; i++) {
        const char *map = e[i].tag == ACL_USER_TAG ? "uid_map" : e[i].tag == ACL_GROUP_TAG ? "gid_map" : NULL;
        int r = map ? map_id(pid, map, e[i].id, &e[i].id) : 0;
        if (r < 0)
            return r;
    }
    return 0;
}

/* xattr namespaces only a capability opens (trusted.*: CAP_SYS_ADMIN;
 * security.capability: CAP_SETFCAP over the file's filesystem).  The
 * candidate has no capability in any namespace, so the kernel refuses
 * them to it; vigil's thread, when vigil is unprivileged, is the owner of
 * the sandbox's user namespace, which counts as every capability in it
 * for checks made against it (security.capability on its /tmp): refused
 * here, not left to that check. */
static const char *const privileged_xattrs[] = {"trusted.", "security."};

static bool privileged_xattr(const char *name)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(privileged_xattrs); i++)
        if (!strncmp(name, privileged_xattrs[i], strlen(privileged_xattrs[i])))
            return true;
    return false;
}

static int copy_xattr(struct vg_tracee *tr, pid_t pid, struct fs_job *j, struct vg_arena *a)
{
    const struct vg_call *c = j->c;
    const char *name = vg_tracee_read_str(tr, vg_arg(c, c->ent->pos.xname), sizeof j->xname, a);
    if (!name)
        return -EFAULT;
    if (strlen(name) >= sizeof j->xname - 1 || !name[0])
        return -ERANGE;
    memcpy(j->xname, name, strlen(name) + 1);
    if (privileged_xattr(name) && j->row->op != VG_CARRY_GETXATTR)
        return -EPERM;
    if (j->row->op != VG_CARRY_SETXATTR)
        return 0;
    j->xsize = (size_t)vg_arg(c, c->ent->pos.size);
    j->xflags = (int)vg_arg(c, c->ent->pos.xflags);
    if (j->xsize > VG_XATTR_SIZE_MAX)
        return -E2BIG;
    j->xvalue = j->xsize ? vg_arena_alloc(a, j->xsize) : NULL;
    if (j->xsize && vg_tracee_read(tr, vg_arg(c, c->ent->pos.buf), j->xvalue, j->xsize) < 0)
        return -EFAULT;
    return map_acl(pid, j);
}

/* The caller's file for an f* call (or an *at call on AT_EMPTY_PATH, or
 * utimensat with no path), as a copy checked to be the file decided:
 * another thread may have put another file at that number meanwhile. */
static int copy_fd(const struct vg_task *t, const struct vg_call *c, int fdnum)
{
    int fd = vg_thread_getfd(t->tid, t->tgid, fdnum); /* the caller's own table */
    int e = errno;
    if (fd < 0)
        return e == ESRCH ? -ESRCH : -EBADF;
    char link[64], now[PATH_MAX];
    fd_path(fd, link, sizeof link);
    ssize_t n = readlink(link, now, sizeof now - 1);
    if (n < 0 || (now[n] = 0, !c->check_path || strcmp(now, c->check_path))) {
        close(fd);
        return -EBADF; /* not the file decided any more */
    }
    return fd;
}

/* Which file an object call acts on: the fd itself (f* calls, an empty
 * path with AT_EMPTY_PATH, utimensat's NULL path), else by path; -errno
 * for what the kernel would refuse before looking (a NULL or empty path). */
static int object_fd(const struct vg_task *t, const struct vg_call *c, struct fs_job *j)
{
    const struct vg_argpos *p = &c->ent->pos;
    if (p->path == VG_ARG_NONE)
        return copy_fd(t, c, (int)vg_arg(c, p->fd));
    uint64_t flags = p->flags ? vg_arg(c, p->flags) : 0;
    int dirfd = p->fd ? (int)vg_arg(c, p->fd) : AT_FDCWD;
    /* readlinkat reads its dirfd's link on an empty path, no flag needed */
    bool empty_link = j->row->op == VG_CARRY_READLINK && p->fd && dirfd != AT_FDCWD;
    bool empty_ok = (flags & VG_AT_EMPTY_PATH) || empty_link;
    if (c->args.path && c->args.path[0])
        return -1; /* by path */
    if (j->row->op == VG_CARRY_UTIMENS && !c->args.path)
        return copy_fd(t, c, dirfd); /* futimens */
    if (!empty_ok)
        return c->args.path ? -ENOENT : -EFAULT;
    j->empty_path = true;
    return copy_fd(t, c, dirfd);
}

/* A buffer for the answer of a reading call: its size argument, at most
 * max (the kernel's own limit for what the call can return); size 0 asks
 * getxattr and listxattr for the size only. */
static int answer_buffer(struct vg_call *c, struct fs_job *j, size_t max)
{
    size_t want = (size_t)vg_arg(c, c->ent->pos.size);
    j->outlen = want < max ? want : max;
    j->out = j->outlen ? vg_arena_alloc(&c->arena, j->outlen) : NULL;
    return 0;
}

/* The extras of an object call. */
static int copy_object_args(const struct vg_task *t, struct vg_call *c,
                            struct vg_tracee *tr, struct fs_job *j)
{
    const struct vg_argpos *p = &c->ent->pos;
    j->follow = vg_follows(p->follow, p->flags ? vg_arg(c, p->flags) : 0);
    switch (j->row->op) {
    case VG_CARRY_CHOWN: {
        int r = map_id(t->tgid, "uid_map", (uint32_t)vg_arg(c, p->uid), &j->uid);
        return r < 0 ? r : map_id(t->tgid, "gid_map", (uint32_t)vg_arg(c, p->gid), &j->gid);
    }
    case VG_CARRY_TRUNCATE: {
        struct rlimit rl;
        if ((int64_t)vg_arg(c, p->length) < 0)
            return -EINVAL;
        j->length = vg_arg(c, p->length);
        if (prlimit(t->tgid, RLIMIT_FSIZE, NULL, &rl) < 0)
            return -EIO; /* its limit unknown: do not guess */
        j->fsize = rl.rlim_cur;
        return 0;
    }
    case VG_CARRY_UTIMENS:
    case VG_CARRY_UTIMES:
    case VG_CARRY_UTIME:
        return copy_times(tr, j, vg_arg(c, p->times));
    case VG_CARRY_SETXATTR:
    case VG_CARRY_RMXATTR:
        return copy_xattr(tr, t->tgid, j, &c->arena);
    case VG_CARRY_GETXATTR: {
        int r = copy_xattr(tr, t->tgid, j, &c->arena);
        return r < 0 ? r : answer_buffer(c, j, VG_XATTR_SIZE_MAX);
    }
    case VG_CARRY_LISTXATTR:
        return answer_buffer(c, j, VG_XATTR_LIST_MAX);
    case VG_CARRY_READLINK:
        if ((int)vg_arg(c, p->size) <= 0)
            return -EINVAL;
        return answer_buffer(c, j, PATH_MAX);
    default:
        return 0;
    }
}

/* The answer of a reading call, into the caller's buffer (it may be gone
 * by now: EFAULT, as the kernel would say). */
static long write_answer(const struct vg_task *t, const struct fs_job *j, long r)
{
    if (r <= 0 || !j->outlen)
        return r;
    struct iovec local = {j->out, (size_t)r};
    struct iovec remote = {(void *)(uintptr_t)vg_arg(j->c, j->c->ent->pos.buf), (size_t)r};
    return process_vm_writev(t->tgid, &local, 1, &remote, 1, 0) == (ssize_t)r ? r : -EFAULT;
}

/* What the kernel refuses before it reads a path (NULL, empty). */
static int path_given(const char *raw, const char *resolved)
{
    if (!raw)
        return -EFAULT;
    if (!raw[0])
        return -ENOENT;
    if (resolved && resolved[0] != '/' && resolved[0] != '(')
        return -ENOTDIR; /* resolved from a dirfd that is no directory ("pipe:[7]") */
    return resolved && resolved[0] == '/' ? 0 : -ENOENT;
}

static int prepare(struct nt *n, const struct vg_task *t, struct vg_call *c, struct fs_job *j)
{
    struct vg_tracee tr = {.tid = t->tid, .pid = t->tgid, .nspid = t->nspid, .nstid = t->nstid,
                           .root_fd = n->sup.root_fd, .cache = n->sup.canon, .pivoted = true};
    int r = check_flags(c);
    if (r < 0)
        return r;
    j->trailing_slash = c->args.path && c->args.path[0] &&
                        c->args.path[strlen(c->args.path) - 1] == '/';
    switch (j->row->reach) {
    case ON_NAMES:
        r = path_given(c->args.path2, c->check_path2);
        /* fall through */
    case ON_NAME:
        if (!r)
            r = path_given(c->args.path, c->check_path);
        if (!r && (j->row->op == VG_CARRY_MKDIR || j->row->op == VG_CARRY_MKNOD))
            r = vg_nt_caller_umask(t->tid, &j->umask) < 0 ? -EIO : 0;
        return r;
    case ON_OBJECT:
        j->fd = object_fd(t, c, j);
        if (j->fd < -1)
            return j->fd;
        if (j->fd == -1 && (r = path_given(c->args.path, c->check_path)) < 0)
            return r;
        return copy_object_args(t, c, &tr, j);
    case NOT_CARRIED:
        break; /* row_of gives no such row */
    }
    return -ENOSYS;
}

/* A link text vigil knows (self_link) as readlink answers it: cut to the
 * buffer, no NUL. */
static long answer_text(struct fs_job *j, const char *text)
{
    size_t len = strlen(text) < j->outlen ? strlen(text) : j->outlen;
    memcpy(j->out, text, len);
    return (long)len;
}

/* Where the job runs: the caller's own /proc entries and links, which
 * only the caller itself may read, by vigil in this thread (above);
 * everything else in the crew, as the candidate.  A truncate may wait for
 * a lease's holder, whose signal and calls must be served meanwhile: the
 * engine's lock is released for it. */
static long run_job(struct nt *n, struct nt_rx *rx, const struct vg_task *t, struct fs_job *j)
{
    const char *path = j->c->check_path;
    if (reads(j->row->op) && j->fd < 0 && path) {
        char text[sizeof "/task/" + 2 * sizeof "-2147483648"];
        if (j->row->op == VG_CARRY_READLINK && self_link(t, path, text, sizeof text))
            return answer_text(j, text);
        if (own_proc(t, path))
            return carry(j);
    }
    return vg_nt_as_candidate(n, rx, t, carry, j, j->row->op == VG_CARRY_TRUNCATE);
}

long vg_nt_fs(struct nt *n, struct nt_rx *rx, struct vg_task *t, struct vg_call *c,
              struct vg_call_verdict *v)
{
    (void)v; /* decided once: nothing here can change what was decided */
    struct fs_job j = {.row = row_of(c), .c = c, .root_fd = n->sup.root_fd, .fd = -1};
    long r = prepare(n, t, c, &j);
    /* what was copied above came from the caller still in its call */
    uint64_t id = rx->req->id;
    if (r == 0 && ioctl(n->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
        r = -ESRCH;
    if (r == 0)
        r = write_answer(t, &j, run_job(n, rx, t, &j));
    if (j.fd >= 0)
        close(j.fd);
    if (j.fsize_hit) {
        n->sup.ctx->out.limit_seen[VG_LIM_FSIZE] = true;
        syscall(VG_NR_tgkill, t->tgid, t->tid, SIGXFSZ); /* as the kernel would */
    }
    return r;
}
