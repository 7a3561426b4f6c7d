/* outfile.c: see outfile.h. */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How much of an existing file is read to find vigil's signature. */
#define SIG_READ_MAX 512

/* Split path into a directory (never empty) and a last component. */
static int split(const char *path, char **dir, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
        return -1;
    if (!slash)
        *dir = vg_xstrdup(".");
    else if (slash == path)
        *dir = vg_xstrdup("/");
    else
        *dir = vg_xstrndup(path, (size_t)(slash - path));
    return 0;
}

char *vg_outfile_location(const char *path)
{
    char *dir;
    const char *base;
    if (split(path, &dir, &base) < 0) {
        errno = EISDIR;
        return NULL;
    }
    char *real = realpath(dir, NULL);
    free(dir);
    if (!real)
        return NULL;
    char *loc = vg_xasprintf("%s%s%s", real, strcmp(real, "/") ? "/" : "", base);
    free(real);
    return loc;
}

static const char *type_name(mode_t m)
{
    return S_ISLNK(m) ? "a symbolic link" : S_ISDIR(m) ? "a directory"
         : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISFIFO(m) ? "a fifo" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Is the existing regular file (lstat'ed as st) empty or vigil's own?
 * Opened without following links and without blocking, and checked to be
 * the file lstat saw. */
static bool looks_like_ours(const char *path, const struct stat *st,
                            const struct vg_outfile_kind *k)
{
    if (st->st_size == 0)
        return true;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return false;
    struct stat fst;
    char buf[SIG_READ_MAX];
    size_t want = k->within < sizeof buf ? k->within : sizeof buf;
    ssize_t n = -1;
    if (fstat(fd, &fst) == 0 && fst.st_dev == st->st_dev && fst.st_ino == st->st_ino)
        n = pread(fd, buf, want, 0);
    close(fd);
    return n > 0 && memmem(buf, (size_t)n, k->signature, k->siglen) != NULL;
}

/* The rule for a target that exists (see outfile.h). */
static int check_existing(const char *path, const struct stat *st,
                          const struct vg_outfile_kind *k, struct vg_err *err)
{
    const char *why = NULL;
    if (!S_ISREG(st->st_mode))
        why = type_name(st->st_mode);
    else if (st->st_uid != geteuid())
        why = "owned by another user";
    else if (st->st_nlink != 1)
        why = "a file with other hard links";
    else if (!looks_like_ours(path, st, k))
        why = "not a file vigil wrote";
    if (!why)
        return 0;
    vg_errf(err, "%s %s: exists and is %s; vigil replaces only an empty file or one it wrote "
                 "(a regular file you own)", k->what, path, why);
    return -1;
}

/* Our file, mode as open(0644) would give under the caller's umask:
 * unnamed (O_TMPFILE) where the filesystem can, so that a vigil killed
 * before it commits leaves nothing behind; it gets a name only at commit.
 * Elsewhere DIR/.BASE.vigil-XXXXXX, created O_EXCL. */
static int create_tmp(struct vg_outfile *f, const char *dir, const char *base)
{
    f->tmp = vg_xasprintf("%s/.%s.vigil-XXXXXX", dir, base);
    f->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    f->unnamed = f->fd >= 0;
    /* our own fd on it, to name it by: f->fd may be handed on (the log) */
    if (f->unnamed) {
        f->link_fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
        if (f->link_fd < 0)
            return -1;
        f->link_open = true;
    }
    if (f->fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        return -1;   /* not "unsupported here": the fallback would fail too */
    if (f->fd < 0)
        f->fd = mkostemp(f->tmp, O_CLOEXEC);
    if (f->fd < 0)
        return -1;
    mode_t mask = umask(0);
    umask(mask);
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return -1; /* cannot know it is ours: leave it (a stray empty file) */
    f->tdev = st.st_dev;
    f->tino = st.st_ino;
    return fchmod(f->fd, 0644 & ~mask);
}

int vg_outfile_reserve(struct vg_outfile *f, const char *path, const struct vg_outfile_kind *k,
                       struct vg_err *err)
{
    *f = (struct vg_outfile){.fd = -1, .path = vg_xstrdup(path)};
    char *dir;
    const char *base;
    if (split(path, &dir, &base) < 0) {
        vg_errf(err, "%s %s: names a directory, not a file", k->what, path);
        return -1;
    }
    struct stat st;
    int rc = -1;
    if (lstat(path, &st) == 0) {
        if (check_existing(path, &st, k, err) < 0)
            goto out;
        f->existed = true;
        f->dev = st.st_dev;
        f->ino = st.st_ino;
    } else if (errno != ENOENT) {
        vg_errf(err, "%s %s: %s", k->what, path, strerror(errno));
        goto out;
    }
    if (create_tmp(f, dir, base) < 0) {
        vg_errf(err, "%s %s: cannot create a file in %s: %s", k->what, path, dir, strerror(errno));
        vg_outfile_discard(f); /* what was made of it */
        goto out;
    }
    rc = 0;
out:
    free(dir);
    return rc;
}

static bool still_ours(const struct vg_outfile *f)
{
    struct stat st;
    if (f->unnamed)   /* no name: nobody can have replaced it */
        return f->link_open;
    return f->tmp && lstat(f->tmp, &st) == 0 && st.st_dev == f->tdev && st.st_ino == f->tino;
}

/* Give our unnamed file the name path (never replacing one: EEXIST).
 * AT_EMPTY_PATH needs no /proc but, before Linux 6.10, a capability;
 * /proc/self/fd/N works for anyone. */
static int link_unnamed(const struct vg_outfile *f, const char *path)
{
    if (linkat(f->link_fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0)
        return 0;
    if (errno != EPERM && errno != ENOENT && errno != EINVAL)
        return -1;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->link_fd);
    return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

/* An unnamed file going to replace a checked target needs a name of its
 * own first (replace_checked swaps two names): DIR/.BASE.vigil-XXXXXX,
 * like the fallback's, for the moment of the commit only. */
static int name_unnamed(struct vg_outfile *f)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    enum { TRIES = 100, SUFFIX = 6 };
    size_t len = strlen(f->tmp);
    for (int t = 0; t < TRIES; t++) {
        unsigned char rnd[SUFFIX];
        if (getentropy(rnd, sizeof rnd) < 0)
            return -1;
        for (int i = 0; i < SUFFIX; i++)
            f->tmp[len - SUFFIX + (size_t)i] = letters[rnd[i] % (sizeof letters - 1)];
        if (link_unnamed(f, f->tmp) == 0) {
            f->unnamed = false;
            return 0;
        }
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Put our file in place of the checked target by swapping the two names
 * atomically, then look at what came out: if it is not the file that was
 * checked (someone put another there during the run), swap back and
 * leave theirs alone; if it is, it was an empty file or vigil's own, and
 * goes.  Filesystems without RENAME_EXCHANGE get rename after one more
 * look, which leaves a short window (docs/SECURITY.md, "vigil never
 * harms what it did not create"). */
static int replace_checked(struct vg_outfile *f)
{
    struct stat st;
    if (renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->path, RENAME_EXCHANGE) < 0) {
        if (errno != EINVAL && errno != ENOSYS)
            return -1;
        if (lstat(f->path, &st) < 0 || st.st_dev != f->dev || st.st_ino != f->ino) {
            errno = EEXIST;
            return -1;
        }
        return rename(f->tmp, f->path);
    }
    if (lstat(f->tmp, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino)
        return unlink(f->tmp) < 0 && errno != ENOENT ? -1 : 0;
    int e = renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->path, RENAME_EXCHANGE) < 0 ? errno : EEXIST;
    errno = e;
    return -1;
}

int vg_outfile_commit(struct vg_outfile *f, struct vg_err *err)
{
    if (!still_ours(f)) {
        vg_errf(err, "write %s: vigil's file %s was replaced meanwhile", f->path, f->tmp);
        return -1;
    }
    int r;
    if (f->unnamed && !f->existed)   /* a link never replaces: as RENAME_NOREPLACE */
        r = link_unnamed(f, f->path);
    else if (f->unnamed && name_unnamed(f) < 0)
        r = -1;
    else
        r = f->existed ? replace_checked(f)
                       : renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->path, RENAME_NOREPLACE);
    if (r < 0 && !f->unnamed && f->existed && errno != EEXIST && still_ours(f))
        unlink(f->tmp);   /* named only for this commit, which failed */
    if (r < 0) {
        vg_errf(err, "write %s: %s", f->path,
                errno == EEXIST ? "another file appeared there during the run; vigil's copy "
                                  "was left out" : strerror(errno));
        return -1;
    }
    f->committed = true;
    return 0;
}

void vg_outfile_discard(struct vg_outfile *f)
{
    if (!f->committed && !f->unnamed && still_ours(f))
        unlink(f->tmp);
    if (f->fd >= 0)   /* closed last: an unnamed file goes with it */
        close(f->fd);
    if (f->link_open)
        close(f->link_fd);
    f->link_open = false;
    f->fd = -1;
    free(f->tmp);
    free(f->path);
    f->tmp = f->path = NULL;
}
