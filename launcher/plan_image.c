/* plan_image.c: an image's trees as the sandbox's system trees (vigil run
 * --image).  Each top-level directory of the image is bound read-only in
 * the host's trees' place.  A read-only tree cannot take a mount point,
 * so where the run mounts something at a path the image lacks (a host
 * --workdir /home/u/job, a --bind-rw into /root), the directories along
 * that path become skeletons instead: a small tmpfs of the sandbox's own
 * holding a read-only bind (or symlink) of each of the image's entries
 * there, so the image's files are all still seen, the missing directories
 * can be made on it, and once the mounts are in it is made read-only
 * itself (VG_OP_SEAL), the mounts on it keeping their modes. */
#include "launcher/plan.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/syscalls.h"

/* Room for a skeleton's directories (tmpfs counts inodes and pages;
 * entries are mount points and the few directories made on it). */
#define SKELETON_TMPFS_SIZE (256 * 1024)

struct wanted {
    const char *const *paths;   /* sandbox paths something is mounted at */
    unsigned n;
};

static char *in_image(const struct vg_trees *t, const char *path)
{
    return vg_xasprintf("%s%s", t->root, path);
}

bool vg_plan_image_has(const struct vg_trees *t, const char *path)
{
    /* resolved in the image's root, as the sandbox will see it: an
     * absolute link of the image's (etc -> /usr/etc) leads into the
     * image, never to the host's file of that name */
    int root = open(t->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    int fd = root < 0 ? -1 : (int)syscall(VG_NR_openat2, root, path, &how, sizeof how);
    if (fd >= 0)
        close(fd);
    if (root >= 0)
        close(root);
    return fd >= 0;
}

/* Does something have to be made at or below dir's entry child that the
 * image does not have?  (Then child is a skeleton too.) */
static bool needs_room(const struct vg_trees *t, const struct wanted *w, const char *child)
{
    for (unsigned i = 0; i < w->n; i++) {
        if (!vg_path_under(w->paths[i], child))
            continue;
        if (!vg_plan_image_has(t, w->paths[i]))
            return true;
    }
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The image's entries of dir, sorted (the plan is the same every run). */
static char **entries(const struct vg_trees *t, const char *dir, unsigned *n)
{
    char *at = in_image(t, dir);
    DIR *d = opendir(at);
    free(at);
    char **v = NULL;
    *n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        v = vg_xrealloc(v, (*n + 1) * sizeof *v);
        v[(*n)++] = vg_xstrdup(e->d_name);
    }
    if (d)
        closedir(d);
    if (*n)
        qsort(v, *n, sizeof *v, by_name);
    return v;
}

static void add_entry(struct vg_plan *p, const struct vg_trees *t, const struct wanted *w,
                      const char *path);

/* dir as a skeleton: a tmpfs with the image's entries shown on it. */
static void add_skeleton(struct vg_plan *p, const struct vg_trees *t, const struct wanted *w,
                         const char *dir, mode_t mode)
{
    vg_plan_add(p, VG_OP_TMPFS, NULL, dir, SKELETON_TMPFS_SIZE, mode & 07777, false);
    unsigned n;
    char **names = entries(t, dir, &n);
    for (unsigned i = 0; i < n; i++) {
        char *child = vg_xasprintf("%s/%s", dir, names[i]);
        add_entry(p, t, w, child);
        free(child);
        free(names[i]);
    }
    free(names);
}

/* One entry of the image at path: a skeleton when something must be made
 * below it, else the image's own, read-only. */
static void add_entry(struct vg_plan *p, const struct vg_trees *t, const struct wanted *w,
                      const char *path)
{
    char *src = in_image(t, path);
    struct stat st;
    if (lstat(src, &st) == 0 && S_ISDIR(st.st_mode) && needs_room(t, w, path)) {
        add_skeleton(p, t, w, path, st.st_mode);
        vg_plan_add_seal(p, path);
    } else {
        vg_plan_add_shown(p, src, path, true);
    }
    free(src);
}

/* The secret-bearing files (vg_system_trees' hidden) where they really
 * are in the image: a mask is mounted at a path, and an image whose /etc
 * is a link (etc -> /usr/etc) would otherwise keep its /etc/shadow, the
 * mask's path not existing as such.  Each hidden path's directory is
 * resolved in the image's trees; the mask goes at the resolved place
 * (and the path as written, when that is another place). */
void vg_plan_add_image_masks(struct vg_plan *p)
{
    const struct vg_trees *t = p->trees;
    for (unsigned i = 0; i < t->nhidden; i++) {
        const char *h = t->hidden[i], *slash = strrchr(h, '/');
        char *dir = vg_xstrndup(h, (size_t)(slash - h)), *res = NULL;
        vg_plan_add(p, VG_OP_MASK, NULL, h, 0, 0, true);
        if (dir[0] && vg_trees_resolve(t, dir, &res) == VG_WALK_FOUND && strcmp(res, dir)) {
            char *at = vg_xasprintf("%s%s", res, slash);
            vg_plan_add(p, VG_OP_MASK, NULL, at, 0, 0, true);
            free(at);
        }
        free(res);
        free(dir);
    }
}

void vg_plan_add_image_trees(struct vg_plan *p, const char *const *wanted, unsigned nwanted)
{
    const struct vg_trees *t = p->trees;
    struct wanted w = {wanted, nwanted};
    for (unsigned i = 0; i < t->ndirs; i++)
        add_entry(p, t, &w, t->dirs[i]);
}
