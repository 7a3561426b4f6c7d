/* digest.c: the content digest of a tree (docs/IMAGES.md, "The
 * digest"): one record per entry, in bytewise order of the paths,
 * hashed with SHA-256.  The records say what a candidate can see of the
 * tree (names, types, permission bits, contents, link targets) and
 * nothing it cannot rely on (times, owners, inode numbers), so the same
 * image imported twice, anywhere, has the same digest. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_int.h"
#include "util/sha256.h"

/* One entry: its path (also the sort key) and its whole record. */
struct rec {
    char *path;
    char *text;
    size_t len;
};

struct walk {
    struct rec *v;
    size_t n, cap;
    uint64_t bytes;
};

void vg_image_record(struct vg_buf *b, char type, mode_t mode, const char *path,
                     const char *detail)
{
    /* NUL after the path and after the detail: neither can hold one, so
     * the records read back one way only */
    vg_buf_printf(b, "%c %04o %s", type, (unsigned)(mode & VG_IMAGE_PERM), path);
    vg_buf_put(b, "", 1);
    vg_buf_puts(b, detail);
    vg_buf_put(b, "", 1);
}

/* "SIZE SHA256" of the regular file name in dirfd. */
static int file_detail(int dirfd, const char *name, char *out, size_t cap, uint64_t *size,
                       struct vg_err *err)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        vg_errf(err, "open: %m");
        return -1;
    }
    struct vg_sha256 s;
    vg_sha256_init(&s);
    char *buf = vg_xmalloc(VG_IMAGE_BUF);
    uint64_t n = 0;
    ssize_t got;
    while ((got = read(fd, buf, VG_IMAGE_BUF)) > 0 || (got < 0 && errno == EINTR))
        if (got > 0) {
            vg_sha256_update(&s, buf, (size_t)got);
            n += (uint64_t)got;
        }
    int e = errno;
    free(buf);
    close(fd);
    if (got < 0) {
        errno = e;
        vg_errf(err, "read: %m");
        return -1;
    }
    char hex[VG_IMAGE_HEX];
    vg_sha256_hex(&s, hex);
    snprintf(out, cap, "%llu %s", (unsigned long long)n, hex);
    *size = n;
    return 0;
}

static int link_detail(int dirfd, const char *name, char *out, size_t cap, struct vg_err *err)
{
    ssize_t n = readlinkat(dirfd, name, out, cap);
    if (n < 0 || (size_t)n >= cap) {
        vg_errf(err, n < 0 ? "readlink: %m" : "link target too long");
        return -1;
    }
    out[n] = '\0';
    return 0;
}

static int add(struct walk *w, const char *path, const struct stat *st, int dirfd,
               const char *name, struct vg_err *err)
{
    char detail[VG_IMAGE_PATH_MAX + 1] = "";
    char type;
    uint64_t size = 0;
    if (S_ISDIR(st->st_mode))
        type = 'd';
    else if (S_ISLNK(st->st_mode)) {
        type = 'l';
        if (link_detail(dirfd, name, detail, sizeof detail, err) < 0)
            return -1;
    } else if (S_ISREG(st->st_mode)) {
        type = 'f';
        if (file_detail(dirfd, name, detail, sizeof detail, &size, err) < 0)
            return -1;
    } else {
        /* the store never creates one: someone put it there */
        vg_errf(err, "neither a file, a directory nor a symlink");
        return -1;
    }
    if (w->n == VG_IMAGE_MAX_ENTRIES) {
        vg_errf(err, "more than %u entries", VG_IMAGE_MAX_ENTRIES);
        return -1;
    }
    if (w->n == w->cap)
        w->v = vg_xrealloc(w->v, (w->cap = w->cap ? 2 * w->cap : 256) * sizeof *w->v);
    struct vg_buf b = {0};
    vg_image_record(&b, type, st->st_mode, path, detail);
    w->v[w->n++] = (struct rec){vg_xstrdup(path), b.data, b.len};
    w->bytes += size;
    return 0;
}

static int descend(struct walk *w, int dirfd, const char *name, const char *path, int depth,
                   struct vg_err *err);

/* Every entry below the directory fd (which it takes), at prefix. */
static int walk_dir(struct walk *w, int fd, const char *prefix, int depth, struct vg_err *err)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        vg_errf(err, "%s: %m", prefix[0] ? prefix : ".");
        close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (errno = 0, e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *path = prefix[0] ? vg_xasprintf("%s/%s", prefix, e->d_name)
                               : vg_xstrdup(e->d_name);
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            vg_errf(err, "%s: %m", path);
            rc = -1;
        } else if (add(w, path, &st, dirfd(d), e->d_name, err) < 0) {
            struct vg_err why = *err;
            vg_errf(err, "%s: %s", path, why.msg);
            rc = -1;
        } else if (S_ISDIR(st.st_mode)) {
            rc = descend(w, dirfd(d), e->d_name, path, depth, err);
        }
        free(path);
    }
    if (rc == 0 && errno) {
        vg_errf(err, "%s: readdir: %m", prefix[0] ? prefix : ".");
        rc = -1;
    }
    closedir(d);
    return rc;
}

static int descend(struct walk *w, int dirfd, const char *name, const char *path, int depth,
                   struct vg_err *err)
{
    if (depth >= VG_IMAGE_MAX_DEPTH) {
        vg_errf(err, "%s: deeper than %d directories", path, VG_IMAGE_MAX_DEPTH);
        return -1;
    }
    int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) {
        vg_errf(err, "%s: %m", path);
        return -1;
    }
    return walk_dir(w, sub, path, depth + 1, err);
}

static int by_path(const void *a, const void *b)
{
    /* strcmp compares as unsigned char: the bytewise order of the doc */
    return strcmp(((const struct rec *)a)->path, ((const struct rec *)b)->path);
}

int vg_image_digest(int rootfd, struct vg_image_sum *sum, struct vg_err *err)
{
    struct walk w = {0};
    int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd < 0 ? -1 : walk_dir(&w, fd, "", 0, err);
    if (fd < 0)
        vg_errf(err, "open the tree: %m");
    if (rc == 0) {
        if (w.n)
            qsort(w.v, w.n, sizeof *w.v, by_path);
        struct vg_sha256 s;
        vg_sha256_init(&s);
        for (size_t i = 0; i < w.n; i++)
            vg_sha256_update(&s, w.v[i].text, w.v[i].len);
        vg_sha256_hex(&s, sum->hex);
        sum->entries = w.n;
        sum->bytes = w.bytes;
    }
    for (size_t i = 0; i < w.n; i++) {
        free(w.v[i].path);
        free(w.v[i].text);
    }
    free(w.v);
    return rc;
}
