/* usage.c: see usage.h. */
#include "launcher/usage.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util/treesize.h"

/* Walks one measurement may take before it is settled (see measure); past
 * them the workdir's filesystem is asked instead. */
#define WALKS_MAX 4

static void walk_tree(const char *dir, struct vg_tree_size *w);

static uint64_t fs_used(int fd)
{
    struct statfs sf;
    if (fd < 0 || fstatfs(fd, &sf) < 0)
        return 0;
    return (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_frsize;
}

void vg_usage_init(struct vg_usage *u, const char *host_workdir, uint64_t disk_limit)
{
    memset(u, 0, sizeof *u);
    u->tmp_fd = -1;
    u->wd_fd = -1;
    u->host_workdir = disk_limit ? host_workdir : NULL;
    u->disk_limit = disk_limit;
    if (!u->host_workdir)
        return;
    u->wd_fd = open(host_workdir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    u->fs_base = fs_used(u->wd_fd);
    /* what was there before counts against nothing */
    struct vg_tree_size w;
    walk_tree(host_workdir, &w);
    u->disk_base = u->disk_bytes = u->settled_bytes = w.bytes;
    u->settled_fs = u->fs_base;
    u->disk_blind = w.blind;
    u->shape = w.shape;
}

void vg_usage_attach(struct vg_usage *u, pid_t init_pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/root/tmp", (int)init_pid);
    /* O_PATH, never followed further: only fstatfs is done on it. */
    u->tmp_fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static void walk_tree(const char *dir, struct vg_tree_size *w)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        memset(w, 0, sizeof *w);
        w->blind = true;
        return;
    }
    vg_tree_size(fd, UINT64_MAX, w);
}

/* A walk races the candidate's renames: a tree moved from a name not yet
 * read to one already read is missed, moved the other way it is counted
 * twice.  Every such change moves the times of the directories it
 * touches, so two walks meeting the same directories with the same times
 * (the last one of the previous measurement counts: nothing changed
 * between) saw a tree that stood still, and the second one's sum is
 * right.  A tree that keeps changing through WALKS_MAX walks is measured
 * by its filesystem instead: its last settled size plus what the
 * filesystem gained since; that bounds what the workdir holds (unless the
 * host frees space on it meanwhile), so the candidate can hide nothing by
 * renaming, and what the host writes there counts only while it churns. */
static void measure_disk(struct vg_usage *u)
{
    struct vg_tree_size w;
    bool settled = false;
    for (int i = 0; i < WALKS_MAX && !settled; i++) {
        walk_tree(u->host_workdir, &w);
        settled = !w.moved && w.shape == u->shape;
        u->shape = w.moved ? 0 : w.shape;
        if (w.blind)
            break;
    }
    u->disk_blind |= w.blind;
    if (w.blind) {   /* never measurable (blind before the run too): the limit cannot hold */
        u->disk_over = true;
        return;
    }
    if (settled) {
        u->disk_bytes = u->settled_bytes = w.bytes;
        u->settled_fs = fs_used(u->wd_fd);
        if (w.bytes > u->disk_base + u->disk_limit)
            u->disk_over = true;
        return;
    }
    u->disk_by_fs = true;
    uint64_t used = fs_used(u->wd_fd);
    u->disk_bytes = u->settled_bytes + (used > u->settled_fs ? used - u->settled_fs : 0);
    if (u->wd_fd < 0 || u->disk_bytes > u->disk_base + u->disk_limit)
        u->disk_over = true;
}

bool vg_usage_sample(struct vg_usage *u, bool last)
{
    struct statfs sf;
    if (u->tmp_fd >= 0 && fstatfs(u->tmp_fd, &sf) == 0 && sf.f_blocks && sf.f_bfree == 0)
        u->tmpfs_full = true;
    if (u->host_workdir && (last || ++u->ticks % VG_USAGE_DISK_EVERY == 0))
        measure_disk(u);
    return u->disk_over;
}

void vg_usage_close(struct vg_usage *u)
{
    if (u->tmp_fd >= 0)
        close(u->tmp_fd);
    if (u->wd_fd >= 0)
        close(u->wd_fd);
    u->tmp_fd = u->wd_fd = -1;
}
