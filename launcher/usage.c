/* usage.c: see usage.h. */
#include "launcher/usage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* Deeper trees are not walked further (their size is then a lower bound). */
#define WALK_DEPTH 64
#define BLOCK_UNIT 512   /* st_blocks counts 512-byte units */

static uint64_t workdir_bytes(const char *dir, bool *blind);

void vg_usage_init(struct vg_usage *u, const char *host_workdir, uint64_t disk_limit)
{
    memset(u, 0, sizeof *u);
    u->tmp_fd = -1;
    u->host_workdir = disk_limit ? host_workdir : NULL;
    u->disk_limit = disk_limit;
    if (u->host_workdir)    /* what was there before counts against nothing */
        u->disk_base = u->disk_bytes = workdir_bytes(host_workdir, &u->disk_blind);
}

void vg_usage_attach(struct vg_usage *u, pid_t init_pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/root/tmp", (int)init_pid);
    /* O_PATH, never followed further: only fstatfs is done on it. */
    u->tmp_fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Bytes allocated beneath the directory dirfd, never following a link
 * nor leaving its filesystem: the candidate owns this tree and may make
 * it point anywhere, so only metadata is read, relative to fds.  A
 * directory that cannot be read (the candidate may chmod one 000) sets
 * *blind: what cannot be measured is not under the limit. */
static uint64_t tree_bytes(int dirfd, dev_t dev, int depth, bool *blind)
{
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        *blind = true;
        return 0;
    }
    uint64_t sum = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
            continue;
        sum += (uint64_t)st.st_blocks * BLOCK_UNIT;
        if (S_ISDIR(st.st_mode) && depth < WALK_DEPTH) {
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                sum += tree_bytes(sub, dev, depth + 1, blind);
            else if (errno != ENOENT)   /* gone meanwhile: nothing to count */
                *blind = true;
        }
    }
    closedir(d);
    return sum;
}

static uint64_t workdir_bytes(const char *dir, bool *blind)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (fd >= 0)
            close(fd);
        *blind = true;
        return 0;
    }
    return tree_bytes(fd, st.st_dev, 0, blind);
}

static void measure_disk(struct vg_usage *u)
{
    bool blind = false;
    u->disk_bytes = workdir_bytes(u->host_workdir, &blind);
    /* Blind before the run too: the workdir was never measurable, and the
     * limit cannot hold; the run stops at the first sample. */
    if (blind || u->disk_bytes > u->disk_base + u->disk_limit)
        u->disk_over = true;
    u->disk_blind |= blind;
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
    u->tmp_fd = -1;
}
