/* limits.h: how this run enforces each limit of the table (policy/limit_table.c):
 * which mechanism holds it (a cgroup where vigil may make one, else an
 * rlimit, the tmpfs size, the supervisor), set up before the sandbox
 * starts and undone after it ended. */
#ifndef VG_LIMITS_H
#define VG_LIMITS_H
#include <sched.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "launcher/cgroup.h"

const char *vg_limit_mech_name(enum vg_limit_mech m);

struct vg_enforce {
    enum vg_limit_mech how[VG_LIM_COUNT];
    struct vg_cgroup cg;
};

/* Create the cgroups the limits need (children of vigil's own group,
 * named after pid) and decide every limit's mechanism.  -1 with err set
 * when a limit cannot be held (an rlimit above vigil's own hard limit);
 * vg_enforce_undo is still needed then. */
struct vg_enforce_in {
    pid_t pid;          /* names the groups */
    bool host_workdir;  /* the workdir is a host directory (disk applies) */
    bool cgroups;       /* may use cgroups at all */
};
int vg_enforce_setup(struct vg_enforce *e, const struct vg_limits *l,
                     const struct vg_enforce_in *in, struct vg_err *err);
/* Remove what setup created; safe to call twice and on a zeroed struct. */
void vg_enforce_undo(struct vg_enforce *e);
/* The rlimit resource a limit uses when held by VG_MECH_RLIMIT; -1 none. */
int vg_limit_rlimit(enum vg_limit l);
/* The value of rlimit res in this run, in the rlimit's unit: the smallest
 * of the limits it holds (RLIMIT_CPU holds cpu, and cputotal where no
 * cgroup counts the run's CPU time: a duration in ms, rounded up to whole
 * seconds).  false: it holds none. */
bool vg_enforce_rlimit(const struct vg_enforce *e, const struct vg_limits *l, int res,
                       uint64_t *v);
/* The CPUs to pin vigil and the sandbox to: --cpuset LIST (NULL: none) and,
 * without a CPU cgroup, the CPU bandwidth rounded up to whole CPUs.
 * *pin false: no pinning.  -1 with err set on a bad or unavailable list. */
int vg_enforce_cpus(const struct vg_enforce *e, const struct vg_limits *l, const char *cpuset,
                    cpu_set_t *set, bool *pin, struct vg_err *err);

/* How many CPUs the sandbox can keep busy at once: vigil's own (which it
 * inherits, after vg_enforce_cpus), fewer under a CPU quota. */
unsigned vg_enforce_ncpus(const struct vg_enforce *e, const struct vg_limits *l);

/* May vigil unwind a record's stacks (native, and Python frames) now?
 * Always, unless the run has a CPU quota (--cpus) that does not pay for
 * vigil's work (cgroup.h, vg_cgroup_billed: no cgroup v1 cpu group, an
 * unprivileged caller): there a refusal loop would buy the dearest part
 * of each refusal's record outside the quota, and vigil unwinds the
 * first VG_UNWIND_BURST, then VG_UNWIND_PER_S a second.  Without --cpus
 * no CPU bound was asked for, and every record keeps its stacks.  Any
 * thread.  The number refused so far, for the log's note. */
#define VG_UNWIND_BURST 1000
#define VG_UNWIND_PER_S 200
bool vg_unwind_budget_take(void);
uint64_t vg_unwind_budget_refused(void);
/* The log's note when the budget refused any (false: none): the engines
 * write it as a "warning" at their end. */
bool vg_unwind_budget_note(char *buf, size_t cap);
#endif
