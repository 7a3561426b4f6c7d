/* treesize.c: see treesize.h. */
#include "util/treesize.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK_UNIT 512   /* st_blocks counts 512-byte units */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static void mix(uint64_t *h, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        *h = (*h ^ (v & 0xff)) * FNV_PRIME;
}

/* A directory's identity and the times every change of its names moves
 * (a rename in or out, a create, an unlink); kernels with multigrain
 * timestamps give a change after this stat a time of its own. */
static void mix_dir(struct vg_tree_size *w, const struct stat *st)
{
    mix(&w->shape, (uint64_t)st->st_ino);
    mix(&w->shape, (uint64_t)st->st_ctim.tv_sec);
    mix(&w->shape, (uint64_t)st->st_ctim.tv_nsec);
    mix(&w->shape, (uint64_t)st->st_mtim.tv_sec);
    mix(&w->shape, (uint64_t)st->st_mtim.tv_nsec);
}

/* What an error met on a name the directory listed means: gone or
 * replaced meanwhile (a concurrent rename: the walk is not settled), or
 * unreadable (what cannot be measured is not known to be small). */
static void name_failed(struct vg_tree_size *w, int err)
{
    if (err == ENOENT || err == ESTALE || err == ENOTDIR || err == ELOOP)
        w->moved = true;
    else
        w->blind = true;
}

static void walk(int dirfd, dev_t dev, int depth, uint64_t cap, struct vg_tree_size *w)
{
    struct stat self;
    DIR *d = fstat(dirfd, &self) == 0 ? fdopendir(dirfd) : NULL;
    if (!d) {
        close(dirfd);
        w->blind = true;
        return;
    }
    mix_dir(w, &self);
    struct dirent *e;
    while (!w->capped && (e = readdir(d))) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            name_failed(w, errno);
            continue;
        }
        if (st.st_dev != dev)
            continue;
        w->bytes += (uint64_t)st.st_blocks * BLOCK_UNIT;
        w->capped = w->bytes >= cap;
        if (S_ISDIR(st.st_mode) && depth >= VG_TREE_DEPTH) {
            w->blind = true; /* a candidate's 70 levels once hid 16 MB under a 4M limit */
        } else if (S_ISDIR(st.st_mode) && !w->capped) {
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                walk(sub, dev, depth + 1, cap, w);
            else
                name_failed(w, errno);
        }
    }
    closedir(d);
}

void vg_tree_size(int dirfd, uint64_t cap, struct vg_tree_size *w)
{
    memset(w, 0, sizeof *w);
    w->shape = FNV_OFFSET;
    struct stat st;
    if (fstat(dirfd, &st) < 0) {
        close(dirfd);
        w->blind = true;
        return;
    }
    walk(dirfd, st.st_dev, 0, cap, w);
}
