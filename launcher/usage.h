/* usage.h: the limits whose hits the kernel tells only the candidate
 * (ENOSPC on the sandbox's tmpfs; a host workdir past its size), watched
 * from the supervisor: sampled while the run goes, and measured once more
 * at the end. */
#ifndef VG_USAGE_H
#define VG_USAGE_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* How often the I/O thread samples /tmp; the host workdir, a walk of its
 * whole tree, every DISK_EVERY samples. */
#define VG_USAGE_PERIOD_MS 250
#define VG_USAGE_DISK_EVERY 4

struct vg_usage {
    int tmp_fd;            /* O_PATH on the sandbox's /tmp: keeps it measurable
                            * after the sandbox is gone; -1 until opened */
    const char *host_workdir; /* NULL: the workdir is in the sandbox's /tmp */
    uint64_t disk_limit;   /* bytes the run may add; 0: none */
    uint64_t disk_base;    /* the host workdir's size before the run */
    unsigned ticks;
    bool tmpfs_full;       /* /tmp was seen with no block free */
    uint64_t disk_bytes;   /* the host workdir's size, last measured */
    bool disk_over;        /* ... above disk_limit, or could not be measured */
    bool disk_blind;       /* part of it could not be read */
    int wd_fd;             /* O_PATH on the host workdir, for fstatfs; -1: none */
    uint64_t fs_base;      /* bytes used on the workdir's filesystem before the run */
    uint64_t settled_bytes, settled_fs; /* the last settled walk, and the
                            * filesystem's use then */
    uint64_t shape;        /* the last walk's directories (usage.c); 0: unsettled */
    bool disk_by_fs;       /* the tree kept changing under the walks: measured
                            * by what its filesystem gained */
};

void vg_usage_init(struct vg_usage *u, const char *host_workdir, uint64_t disk_limit);
/* Once the candidate runs (its setup is done): open the sandbox's /tmp
 * through /proc/PID/root of its pid 1.  Failure only leaves tmpfs hits
 * undetected. */
void vg_usage_attach(struct vg_usage *u, pid_t init_pid);
/* Measure now (the workdir only every few calls, unless last); true when
 * the run must stop (the workdir grew past the limit). */
bool vg_usage_sample(struct vg_usage *u, bool last);
void vg_usage_close(struct vg_usage *u);
#endif
