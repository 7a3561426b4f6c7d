/* probe_cgroup.h: put the calling process in a fresh cgroup v2 group of
 * its own and learn that group's id, the one bpf_get_current_cgroup_id()
 * returns in BPF, so that the probe's program watches this process only. */
#ifndef VIGIL_LSM_PROBE_CGROUP_H
#define VIGIL_LSM_PROBE_CGROUP_H

#include <limits.h>
#include <stddef.h>

struct probe_cgroup {
    char parent[PATH_MAX];     /* the group the process was in */
    char dir[PATH_MAX];        /* the group made for it */
    unsigned long long id;     /* dir's cgroup id */
};

/* Make a child of the caller's current group under root (the cgroup2 mount,
 * /sys/fs/cgroup), move the caller into it and fill cg.  0, or -1 with a
 * message in err. */
int probe_cgroup_enter(struct probe_cgroup *cg, const char *root, char *err, size_t errlen);

/* Move the caller back to cg->parent and remove cg->dir.  0 or -1 (err). */
int probe_cgroup_leave(const struct probe_cgroup *cg, char *err, size_t errlen);

#endif
