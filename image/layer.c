/* layer.c: one layer applied to the tree being built, with the rules of
 * the OCI image spec (whiteouts, opaque directories) and vigil's own:
 * nothing is ever written outside the tree (every entry's parent is
 * opened beneath the root through no symlink: beneath.c), no device
 * node, FIFO or socket is made, setuid and setgid bits go, and the caps
 * of image_int.h end an import that grows too big. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_int.h"

#define WHITEOUT ".wh."
#define OPAQUE ".wh..wh..opq"

/* A directory's mode from its entry, set when the build ends (it stays
 * VG_IMAGE_BUILD_DIR-open until then).  seq: the later entry wins. */
struct vg_dirmode {
    char *path;
    mode_t mode;
    size_t seq;
};

static void remember_mode(struct vg_build *b, const char *path, mode_t mode)
{
    if (b->nmodes == b->capmodes)
        b->modes = vg_xrealloc(b->modes, (b->capmodes = b->capmodes ? 2 * b->capmodes : 64) *
                                             sizeof *b->modes);
    b->modes[b->nmodes] = (struct vg_dirmode){vg_xstrdup(path), mode, b->nmodes};
    b->nmodes++;
}

/* A whiteout removed path (or, opaque, what is below it): the modes of
 * directories that went must not land on ones a later layer makes. */
static void forget_modes(struct vg_build *b, const char *path, bool below_only)
{
    size_t n = strlen(path), k = 0;
    for (size_t i = 0; i < b->nmodes; i++) {
        const char *p = b->modes[i].path;
        bool under = n == 0 ? p[0] != '\0'
                            : !strncmp(p, path, n) && (p[n] == '/' || (!below_only && !p[n]));
        if (under)
            free(b->modes[i].path);
        else
            b->modes[k++] = b->modes[i];
    }
    b->nmodes = k;
}

/* Why opening the component c in fd failed, for the message. */
static const char *why_not_dir(int fd, const char *c, int e)
{
    struct stat st;
    if (e == ELOOP || (fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)))
        return "is a symlink";
    if (e == ENOTDIR)
        return "is not a directory";
    return strerror(e);
}

/* Open the directory holding path (components walked one by one beneath
 * the root, through no symlink; missing ones made when create is set).
 * 0 with *pfd (close it) and *base pointing into path; 1 when a parent is
 * absent and not created; -1 with err. */
static int open_parent(struct vg_build *b, const char *path, bool create, int *pfd,
                       const char **base, struct vg_err *err)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    int fd = vg_image_openat(b->rootfd, "", O_PATH | O_DIRECTORY, 0);
    if (fd < 0) {
        vg_errf(err, "open the tree: %m");
        return -1;
    }
    for (const char *c = path; slash && c <= slash;) {
        size_t n = strcspn(c, "/");
        char *comp = vg_xstrndup(c, n);
        int next = vg_image_openat(fd, comp, O_PATH | O_DIRECTORY, 0);
        if (next < 0 && errno == ENOENT && create) {
            if (mkdirat(fd, comp, VG_IMAGE_BUILD_DIR | VG_IMAGE_IMPLICIT_DIR) == 0) {
                char *prefix = vg_xstrndup(path, (size_t)(c - path) + n);
                remember_mode(b, prefix, VG_IMAGE_IMPLICIT_DIR);
                free(prefix);
            }
            next = vg_image_openat(fd, comp, O_PATH | O_DIRECTORY, 0);
        }
        int e = errno;
        if (next < 0) {
            int rc = e == ENOENT && !create ? 1 : -1;
            if (rc < 0)
                vg_errf(err, "its parent %.*s %s", (int)((size_t)(c - path) + n), path,
                        why_not_dir(fd, comp, e));
            free(comp);
            close(fd);
            return rc;
        }
        free(comp);
        close(fd);
        fd = next;
        c += n + 1;
    }
    *pfd = fd;
    return 0;
}

static void whiteouts_add(struct vg_whiteouts *w, const char *path, bool opaque)
{
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 16;
        w->paths = vg_xrealloc(w->paths, w->cap * sizeof *w->paths);
        w->opaque = vg_xrealloc(w->opaque, w->cap * sizeof *w->opaque);
    }
    w->paths[w->n] = vg_xstrdup(path);
    w->opaque[w->n++] = opaque;
}

void vg_whiteouts_free(struct vg_whiteouts *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->paths[i]);
    free(w->paths);
    free(w->opaque);
    *w = (struct vg_whiteouts){0};
}

/* The next entry's canonical path into path; 1 at the end, 0, or -1. */
static int next_entry(struct archive *a, struct archive_entry **e, char *path, size_t n,
                      const char *what, struct vg_err *err)
{
    int r = archive_read_next_header(a, e);
    if (r == ARCHIVE_EOF)
        return 1;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
        vg_errf(err, "%s: %s", what, archive_error_string(a));
        return -1;
    }
    const char *name = archive_entry_pathname(*e);
    if (!name) {
        vg_errf(err, "%s: an entry without a name", what);
        return -1;
    }
    struct vg_err why;
    if (vg_image_entry_path(name, path, n, &why) < 0) {
        vg_errf(err, "%s: entry %.*s: %s", what, VG_IMAGE_SHOW_NAME, name, why.msg);
        return -1;
    }
    return 0;
}

/* Whether the size an entry's header claims breaks a cap (said on err):
 * checked before its data is read or skipped. */
static bool too_big(struct archive_entry *e, uint64_t total, struct vg_err *err)
{
    if (!archive_entry_size_is_set(e) || archive_entry_size(e) < 0)
        return false;
    uint64_t size = (uint64_t)archive_entry_size(e);
    bool file = size > VG_IMAGE_MAX_FILE;
    if (!file && total + size <= VG_IMAGE_MAX_TOTAL)
        return false;
    vg_errf(err, "its %llu bytes exceed the %s cap of %llu bytes", (unsigned long long)size,
            file ? "file" : "image",
            (unsigned long long)(file ? VG_IMAGE_MAX_FILE : VG_IMAGE_MAX_TOTAL));
    return true;
}

int vg_layer_scan(struct archive *a, const char *what, struct vg_whiteouts *w,
                  struct vg_err *err)
{
    char path[VG_IMAGE_PATH_MAX];
    struct archive_entry *e;
    int r;
    size_t count = 0;
    uint64_t declared = 0; /* this layer's file sizes, as its headers say */
    while ((r = next_entry(a, &e, path, sizeof path, what, err)) == 0) {
        if (++count > VG_IMAGE_MAX_ENTRIES) {
            vg_errf(err, "%s: more than %u entries", what, VG_IMAGE_MAX_ENTRIES);
            return -1;
        }
        struct vg_err why;
        if (too_big(e, declared, &why)) {
            vg_errf(err, "%s: entry %.*s: %s", what, VG_IMAGE_SHOW_NAME, archive_entry_pathname(e),
                    why.msg);
            return -1;
        }
        if (archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e))
            declared += (uint64_t)archive_entry_size(e);
        char *slash = strrchr(path, '/');
        char *base = slash ? slash + 1 : path;
        if (strncmp(base, WHITEOUT, strlen(WHITEOUT)))
            continue;
        bool opaque = !strcmp(base, OPAQUE);
        if (!opaque && !base[strlen(WHITEOUT)]) {
            vg_errf(err, "%s: entry %s: a whiteout naming nothing", what, path);
            return -1;
        }
        /* ".wh.." and ".wh...": "." and ".." are no entry of the
         * directory; removing ".." would reach above it (at the root,
         * out of the tree) */
        const char *victim = base + strlen(WHITEOUT);
        if (!opaque && (!strcmp(victim, ".") || !strcmp(victim, ".."))) {
            vg_errf(err, "%s: entry %s: a whiteout of \"%s\", which names no entry", what,
                    path, victim);
            return -1;
        }
        /* the victim: the directory itself, or its entry NAME */
        memmove(base, opaque ? base + strlen(OPAQUE) : base + strlen(WHITEOUT),
                strlen(base) - (opaque ? strlen(OPAQUE) : strlen(WHITEOUT)) + 1);
        if (opaque && slash)
            *slash = '\0';
        whiteouts_add(w, path, opaque);
    }
    return r < 0 ? -1 : 0;
}

/* Remove what is below the directory path, keeping it. */
static int make_opaque(struct vg_build *b, const char *path, struct vg_err *err)
{
    int fd = vg_image_openat(b->rootfd, path, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) /* absent, or not a directory below: this layer's entry replaces it */
        return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -1;
    int rc = vg_image_empty_dir(fd, err);
    close(fd);
    return rc;
}

static int whiteout_one(struct vg_build *b, const char *path, bool opaque, struct vg_err *err)
{
    if (opaque) {
        if (make_opaque(b, path, err) < 0)
            return -1;
        forget_modes(b, path, true);
        return 0;
    }
    int pfd;
    const char *base;
    int rc = open_parent(b, path, false, &pfd, &base, err);
    if (rc != 0)
        return rc < 0 ? -1 : 0; /* no parent: nothing to delete */
    rc = vg_image_remove_at(pfd, base, err);
    close(pfd);
    forget_modes(b, path, false);
    return rc;
}

int vg_layer_whiteout(struct vg_build *b, const struct vg_whiteouts *w, const char *what,
                      struct vg_err *err)
{
    for (size_t i = 0; i < w->n; i++) {
        struct vg_err why;
        if (whiteout_one(b, w->paths[i], w->opaque[i], &why) < 0) {
            vg_errf(err, "%s: whiteout of %s: %s", what, w->paths[i][0] ? w->paths[i] : "/",
                    why.msg);
            return -1;
        }
    }
    return 0;
}

/* Make room for base in pfd: what is there goes, unless both are
 * directories (a directory entry then only sets the mode). */
static int clear_for(int pfd, const char *base, bool dir, bool *keep, struct vg_err *err)
{
    struct stat st;
    *keep = false;
    if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : (vg_errf(err, "stat: %m"), -1);
    if (dir && S_ISDIR(st.st_mode)) {
        *keep = true;
        return 0;
    }
    return vg_image_remove_at(pfd, base, err);
}

static int copy_data(struct vg_build *b, struct archive *a, int fd, struct vg_err *err)
{
    char *buf = vg_xmalloc(VG_IMAGE_BUF);
    uint64_t n = 0;
    la_ssize_t got;
    while ((got = archive_read_data(a, buf, VG_IMAGE_BUF)) > 0) {
        n += (uint64_t)got;
        if (n > VG_IMAGE_MAX_FILE || b->total + (uint64_t)got > VG_IMAGE_MAX_TOTAL)
            break;
        b->total += (uint64_t)got;
        if (vg_write_all(fd, buf, (size_t)got) < 0) {
            vg_errf(err, "write: %m");
            free(buf);
            return -1;
        }
    }
    free(buf);
    if (got > 0)
        vg_errf(err, n > VG_IMAGE_MAX_FILE ? "file larger than the cap of %llu bytes"
                                           : "image larger than the cap of %llu bytes",
                (unsigned long long)(n > VG_IMAGE_MAX_FILE ? VG_IMAGE_MAX_FILE
                                                            : VG_IMAGE_MAX_TOTAL));
    else if (got < 0)
        vg_errf(err, "%s", archive_error_string(a));
    return got == 0 ? 0 : -1;
}

static int make_file(struct vg_build *b, struct archive *a, struct archive_entry *e, int pfd,
                     const char *base, struct vg_err *err)
{
    if (too_big(e, b->total, err))
        return -1;
    /* O_EXCL: clear_for removed what was there, so nothing is ever
     * written through an existing link */
    int fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    S_IRUSR | S_IWUSR);
    if (fd < 0) {
        vg_errf(err, "create: %m");
        return -1;
    }
    mode_t mode = archive_entry_mode(e) & VG_IMAGE_PERM;
    if (mode & VG_IMAGE_SETID)
        b->stripped++;
    int rc = copy_data(b, a, fd, err);
    if (rc == 0 && fchmod(fd, mode & ~(mode_t)VG_IMAGE_SETID) < 0) {
        vg_errf(err, "chmod: %m");
        rc = -1;
    }
    /* The layer's modification time, kept (not in the digest): Python
     * checks a .pyc against its source's, and an image's caches would
     * otherwise be stale, every module compiled again on every run. */
    struct timespec when[2] = {{.tv_nsec = UTIME_OMIT},
                               {.tv_sec = archive_entry_mtime(e),
                                .tv_nsec = archive_entry_mtime_nsec(e)}};
    if (rc == 0 && archive_entry_mtime_is_set(e) && futimens(fd, when) < 0) {
        vg_errf(err, "set the modification time: %m");
        rc = -1;
    }
    if (close(fd) < 0 && rc == 0) {
        vg_errf(err, "close: %m");
        rc = -1;
    }
    return rc;
}

/* A hard link to a file an earlier entry made in this tree. */
static int make_hardlink(struct vg_build *b, const char *target, int pfd, const char *base,
                         struct vg_err *err)
{
    char path[VG_IMAGE_PATH_MAX];
    struct vg_err why;
    if (vg_image_entry_path(target, path, sizeof path, &why) < 0) {
        vg_errf(err, "hard link to %s, outside the tree: %s", target, why.msg);
        return -1;
    }
    int tfd = -1;
    const char *tbase;
    int rc = open_parent(b, path, false, &tfd, &tbase, &why);
    struct stat st;
    if (rc == 0 && (fstatat(tfd, tbase, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)))
        rc = 1;
    if (rc == 0 && linkat(tfd, tbase, pfd, base, 0) < 0) {
        vg_errf(err, "hard link to %s: %m", target);
        rc = -1;
    } else if (rc != 0) {
        vg_errf(err, "hard link to %s: %s", target,
                rc < 0 ? why.msg : "no such file in the tree yet");
        rc = -1;
    }
    if (tfd >= 0)
        close(tfd);
    return rc;
}

static int make_entry(struct vg_build *b, struct archive *a, struct archive_entry *e,
                      const char *path, int pfd, const char *base, struct vg_err *err)
{
    const char *hard = archive_entry_hardlink(e);
    mode_t type = archive_entry_filetype(e);
    bool keep;
    if (clear_for(pfd, base, !hard && type == AE_IFDIR, &keep, err) < 0)
        return -1;
    if (hard)
        return make_hardlink(b, hard, pfd, base, err);
    switch (type) {
    case AE_IFDIR:
        if (!keep && mkdirat(pfd, base, VG_IMAGE_BUILD_DIR) < 0) {
            vg_errf(err, "mkdir: %m");
            return -1;
        }
        remember_mode(b, path, archive_entry_mode(e) & VG_IMAGE_PERM & ~(mode_t)VG_IMAGE_SETID);
        return 0;
    case AE_IFLNK: {
        /* stored as it is, absolute or not: it is resolved inside the
         * image's root when a run uses it, never by the import */
        const char *to = archive_entry_symlink(e);
        if (!to || !to[0] || symlinkat(to, pfd, base) < 0) {
            vg_errf(err, to && to[0] ? "symlink: %m" : "a symlink to nothing");
            return -1;
        }
        return 0;
    }
    case AE_IFREG:
        return make_file(b, a, e, pfd, base, err);
    default:
        /* device nodes, FIFOs, sockets: a candidate gets the sandbox's
         * own /dev, and the store makes none (docs/IMAGES.md) */
        b->skipped++;
        return 0;
    }
}

static int apply_one(struct vg_build *b, struct archive *a, struct archive_entry *e,
                     const char *path, struct vg_err *err)
{
    if (!path[0]) { /* the root itself: its mode is the store's */
        if (archive_entry_filetype(e) == AE_IFDIR && !archive_entry_hardlink(e))
            return 0;
        vg_errf(err, "the root of the tree must be a directory");
        return -1;
    }
    const char *slash = strrchr(path, '/');
    if (!strncmp(slash ? slash + 1 : path, WHITEOUT, strlen(WHITEOUT)))
        return 0; /* applied before the entries */
    int pfd;
    const char *base;
    if (open_parent(b, path, true, &pfd, &base, err) < 0)
        return -1;
    int rc = make_entry(b, a, e, path, pfd, base, err);
    close(pfd);
    return rc;
}

int vg_layer_apply(struct vg_build *b, struct archive *a, const char *what, struct vg_err *err)
{
    char path[VG_IMAGE_PATH_MAX];
    struct archive_entry *e;
    int r;
    while ((r = next_entry(a, &e, path, sizeof path, what, err)) == 0) {
        struct vg_err why;
        if (apply_one(b, a, e, path, &why) < 0) {
            vg_errf(err, "%s: entry %.*s: %s", what, VG_IMAGE_SHOW_NAME, archive_entry_pathname(e),
                    why.msg);
            return -1;
        }
    }
    return r < 0 ? -1 : 0;
}

int vg_build_create(struct vg_build *b, const char *path, struct vg_err *err)
{
    int pfd;
    const char *base;
    bool keep;
    if (open_parent(b, path, true, &pfd, &base, err) < 0)
        return -1;
    int fd = -1;
    if (clear_for(pfd, base, false, &keep, err) == 0 &&
        (fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     S_IRUSR | S_IWUSR)) < 0)
        vg_errf(err, "create: %m");
    close(pfd);
    return fd;
}

/* Deepest first (a parent closed to its owner must come after what is
 * below it); for one path, the latest entry first. */
static int deepest_first(const void *pa, const void *pb)
{
    const struct vg_dirmode *a = pa, *b = pb;
    int c = strcmp(b->path, a->path);
    return c ? c : (a->seq < b->seq) - (a->seq > b->seq);
}

int vg_build_finish(struct vg_build *b, struct vg_err *err)
{
    if (b->nmodes)
        qsort(b->modes, b->nmodes, sizeof *b->modes, deepest_first);
    for (size_t i = 0; i < b->nmodes; i++) {
        if (i && !strcmp(b->modes[i].path, b->modes[i - 1].path))
            continue;
        int fd = vg_image_openat(b->rootfd, b->modes[i].path, O_RDONLY | O_DIRECTORY, 0);
        if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
            continue; /* replaced by a later layer */
        if (fd < 0 || fchmod(fd, b->modes[i].mode) < 0) {
            vg_errf(err, "chmod %s: %m", b->modes[i].path);
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
    }
    return 0;
}

void vg_build_free(struct vg_build *b)
{
    for (size_t i = 0; i < b->nmodes; i++)
        free(b->modes[i].path);
    free(b->modes);
    b->modes = NULL;
    b->nmodes = b->capmodes = 0;
}
