/* cgroup.h: the sandbox's own control groups, where the host lets vigil
 * make them: a child of vigil's own group in each controller it needs
 * (cgroup v1: memory, pids, cpu, cpuacct; or one child of a delegated v2 group),
 * joined by the sandbox's pid 1 before anything of the candidate runs,
 * read for peak memory and OOM kills at the end, and removed. */
#ifndef VG_CGROUP_H
#define VG_CGROUP_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "util/util.h"

struct vg_cgroup {
    char *dir[VG_CG_NCTRL];   /* the group vigil created; NULL: controller not used */
    int version[VG_CG_NCTRL]; /* 1 or 2 */
    bool memsw;               /* v1: swap is accounted and limited too */
    /* The reaper (cgroup.c) removes the groups if vigil dies without doing
     * it; these pipes tell it vigil is gone and say when it has finished. */
    bool reaper;
    int to_reaper, from_reaper;
};

/* What the groups saw, read after the sandbox ended. */
struct vg_cg_usage {
    bool have_memory;
    uint64_t peak_memory;     /* bytes, the whole sandbox at its largest */
    uint64_t oom_kills;       /* processes the kernel killed at the limit */
    bool have_pids;
    uint64_t pids_refused;    /* forks refused at pids.max */
    bool have_cpu;            /* a cpuacct group (--cpu-total) counted the run's CPU time */
    uint64_t cpu_user_ns, cpu_sys_ns; /* every process and thread of the sandbox, the
                               * killed ones too */
};

/* For each controller that one of the limits needs (memory always, procs
 * always, cpu when a CPU bandwidth is set, cpuacct when a whole-run CPU
 * time is): make a child of vigil's own
 * group named after pid and write the limit.  A controller that cannot be
 * used (not mounted, not writable, an unprivileged caller) is left out and
 * the caller falls back to an rlimit; nothing is left behind for it.
 * Never fails: the worst case is no cgroup at all. */
void vg_cgroup_create(struct vg_cgroup *cg, const struct vg_limits *l, pid_t pid);
/* The run's cgroup v2 group, opened for clone3's CLONE_INTO_CGROUP (the
 * sandbox's pid 1 is born in it: vg_clone_owned); -1 when the run has
 * none (v1 only, or no groups).  Close-on-exec. */
int vg_cgroup_v2_open(const struct vg_cgroup *cg);
/* Move pid (the sandbox's pid 1, before it lets the candidate start) into
 * every group but, when born_in_v2, the v2 one; its children inherit them.
 * -1 with err set. */
int vg_cgroup_join(const struct vg_cgroup *cg, pid_t pid, bool born_in_v2, struct vg_err *err);
/* The run pays for vigil's work for it: where the run has a cpu group of
 * cgroup v1 of its own (--cpus), the calling thread joins it (its quota
 * then covers the candidate and this thread, and the threads it starts,
 * which inherit the group), or leaves it for vigil's own.  Called by the
 * threads that work for the run: the engine's (from its start to its
 * end), the resolver, pasta before its exec.  Never by the I/O thread,
 * which ends the run on timeout and must never wait for the quota.
 * 0 where there is no such group (nothing to do), -1 if the kernel refused. */
int vg_cgroup_bill_self(void);
int vg_cgroup_unbill_self(void);
/* Is there such a group (vigil's threads can be billed)? */
bool vg_cgroup_billed(void);
void vg_cgroup_read(const struct vg_cgroup *cg, struct vg_cg_usage *u);
/* The CPU time of the run's cpuacct group (--cpu-total), every process
 * and thread in it, so far: open its count once (-1: no such group), then
 * read it as often as needed (false: unreadable). */
int vg_cgroup_cpu_open(const struct vg_cgroup *cg);
bool vg_cgroup_cpu_ns(const struct vg_cgroup *cg, int fd, uint64_t *ns);
/* Remove every group vigil made (they must be empty: the sandbox is gone),
 * and let the reaper go.  A group that cannot be removed is named on
 * stderr. */
void vg_cgroup_remove(struct vg_cgroup *cg);
#endif
