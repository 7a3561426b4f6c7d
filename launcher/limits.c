/* limits.c: see limits.h. */
#include "launcher/limits.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MILLI 1000
#define NS_PER_S 1000000000ull

/* The unwind budget (vg_unwind_budget_take), in thousandths of an unwind
 * so that whole nanoseconds add to it. */
static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t budget_milli = (uint64_t)VG_UNWIND_BURST * MILLI;
static uint64_t budget_at_ns, budget_refused;
static bool budget_on; /* a CPU quota the run cannot be billed for */
_Static_assert(NS_PER_S % ((uint64_t)VG_UNWIND_PER_S * MILLI) == 0,
               "the budget grows by whole nanoseconds");

const char *vg_limit_mech_name(enum vg_limit_mech m)
{
    static const char *const names[] = {
        [VG_MECH_NONE] = "none", [VG_MECH_SUPERVISOR] = "supervisor",
        [VG_MECH_RLIMIT] = "rlimit", [VG_MECH_TMPFS] = "tmpfs",
        [VG_MECH_CGROUP_V1] = "cgroup v1", [VG_MECH_CGROUP_V2] = "cgroup v2",
        [VG_MECH_AFFINITY] = "affinity",
    };
    return m < VG_ARRAY_LEN(names) ? names[m] : "?";
}

int vg_limit_rlimit(enum vg_limit l)
{
    return l < VG_LIM_COUNT ? vg_limit_row(l)->rlimit : -1;
}

bool vg_enforce_rlimit(const struct vg_enforce *e, const struct vg_limits *l, int res,
                       uint64_t *v)
{
    bool any = false;
    for (int i = 0; i < VG_LIM_COUNT; i++) {
        if (vg_limit_row(i)->rlimit != res || e->how[i] != VG_MECH_RLIMIT)
            continue;
        /* a duration in ms held by RLIMIT_CPU, which counts whole seconds:
         * rounded up, never down */
        uint64_t x = vg_limit_row(i)->kind == VG_LK_MS ? (l->v[i] + MILLI - 1) / MILLI : l->v[i];
        if (!any || x < *v)
            *v = x;
        any = true;
    }
    return any;
}

/* The candidate sets its rlimits after it dropped every capability, so
 * none can go above vigil's own hard limit: say so now, not as a setup
 * failure once the sandbox exists. */
static int check_rlimits(const struct vg_enforce *e, const struct vg_limits *l,
                         struct vg_err *err)
{
    for (int i = 0; i < VG_LIM_COUNT; i++) {
        struct rlimit rl;
        int res = vg_limit_row(i)->rlimit;
        uint64_t v;
        if (e->how[i] != VG_MECH_RLIMIT || res < 0 || !vg_enforce_rlimit(e, l, res, &v))
            continue;
        if (getrlimit(res, &rl) < 0) {
            vg_errf(err, "getrlimit for --%s: %s", vg_limit_row(i)->flag, strerror(errno));
            return -1;
        }
        /* RLIMIT_CPU's hard limit is one second above the soft one. */
        uint64_t need = v + (res == RLIMIT_CPU);
        if (rl.rlim_max != RLIM_INFINITY && need > rl.rlim_max) {
            char text[32];
            vg_limit_format(i, l->v[i], text, sizeof text);
            vg_errf(err, "limit %s %s is above what vigil may grant here (its own hard limit "
                    "is %llu; see ulimit -H)", vg_limit_name(i), text,
                    (unsigned long long)rl.rlim_max);
            return -1;
        }
    }
    return 0;
}

int vg_enforce_setup(struct vg_enforce *e, const struct vg_limits *l,
                     const struct vg_enforce_in *in, struct vg_err *err)
{
    if (in->cgroups)
        vg_cgroup_create(&e->cg, l, in->pid);
    else
        memset(&e->cg, 0, sizeof e->cg);
    for (int i = 0; i < VG_LIM_COUNT; i++) {
        enum vg_cg_ctrl c = vg_limit_row(i)->cgroup;
        if (!l->v[i])
            e->how[i] = VG_MECH_NONE;
        else if (c < VG_CG_NCTRL && e->cg.dir[c])
            e->how[i] = e->cg.version[c] == 2 ? VG_MECH_CGROUP_V2 : VG_MECH_CGROUP_V1;
        else
            e->how[i] = vg_limit_row(i)->fallback;
    }
    budget_on = l->v[VG_LIM_CPUS] && !vg_cgroup_billed();
    /* The workdir in the sandbox's /tmp is bounded by the tmpfs already. */
    if (!in->host_workdir)
        e->how[VG_LIM_DISK] = VG_MECH_NONE;
    return check_rlimits(e, l, err);
}

void vg_enforce_undo(struct vg_enforce *e)
{
    vg_cgroup_remove(&e->cg);
}

/* "0-2,5" -> CPUs 0, 1, 2 and 5. */
static bool parse_cpu_list(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    while (*s) {
        char *end;
        unsigned long lo = strtoul(s, &end, 10), hi = lo;
        if (end == s)
            return false;
        if (*end == '-') {
            s = end + 1;
            hi = strtoul(s, &end, 10);
            if (end == s)
                return false;
        }
        if (lo > hi || hi >= CPU_SETSIZE)
            return false;
        for (unsigned long c = lo; c <= hi; c++)
            CPU_SET(c, set);
        if (*end && *end != ',')
            return false;
        s = end + (*end == ',');
    }
    return CPU_COUNT(set) > 0;
}

int vg_enforce_cpus(const struct vg_enforce *e, const struct vg_limits *l, const char *cpuset,
                    cpu_set_t *set, bool *pin, struct vg_err *err)
{
    cpu_set_t have;
    *pin = false;
    if (sched_getaffinity(0, sizeof have, &have) < 0) {
        vg_errf(err, "sched_getaffinity: %s", strerror(errno));
        return -1;
    }
    *set = have;
    if (cpuset) {
        if (!parse_cpu_list(cpuset, set)) {
            vg_errf(err, "--cpuset '%s' is not a list of CPUs like 0-3,6", cpuset);
            return -1;
        }
        cpu_set_t both;
        CPU_AND(&both, set, &have);
        if (!CPU_EQUAL(&both, set)) {
            vg_errf(err, "--cpuset %s: vigil may only use CPUs of its own affinity (%d of them)",
                    cpuset, CPU_COUNT(&have));
            return -1;
        }
        *pin = true;
    }
    if (e->how[VG_LIM_CPUS] == VG_MECH_AFFINITY) {
        /* The first ceil(N) CPUs of those allowed. */
        uint64_t want = (l->v[VG_LIM_CPUS] + MILLI - 1) / MILLI;
        cpu_set_t first;
        CPU_ZERO(&first);
        for (int c = 0, n = 0; c < CPU_SETSIZE && (uint64_t)n < want; c++)
            if (CPU_ISSET(c, set)) {
                CPU_SET(c, &first);
                n++;
            }
        *set = first;
        *pin = true;
    }
    return 0;
}

unsigned vg_enforce_ncpus(const struct vg_enforce *e, const struct vg_limits *l)
{
    cpu_set_t have;
    unsigned n = sched_getaffinity(0, sizeof have, &have) == 0 ? (unsigned)CPU_COUNT(&have)
                                                                 : CPU_SETSIZE;
    bool quota = e->how[VG_LIM_CPUS] == VG_MECH_CGROUP_V1 || e->how[VG_LIM_CPUS] == VG_MECH_CGROUP_V2;
    uint64_t q = (l->v[VG_LIM_CPUS] + MILLI - 1) / MILLI;
    return quota && q < n ? (unsigned)q : n;
}

bool vg_unwind_budget_take(void)
{
    if (!budget_on)
        return true;
    uint64_t now = vg_now_mono_ns();
    pthread_mutex_lock(&budget_lock);
    if (budget_at_ns) {
        /* ns * per-second rate * MILLI / NS_PER_S, without overflow for
         * any gap a run can have */
        uint64_t gap = now - budget_at_ns, full = (uint64_t)VG_UNWIND_BURST * MILLI;
        uint64_t earned = gap / (NS_PER_S / ((uint64_t)VG_UNWIND_PER_S * MILLI));
        budget_milli = full - budget_milli <= earned ? full : budget_milli + earned;
    }
    budget_at_ns = now;
    bool ok = budget_milli >= MILLI;
    if (ok)
        budget_milli -= MILLI;
    else
        budget_refused++;
    pthread_mutex_unlock(&budget_lock);
    return ok;
}

uint64_t vg_unwind_budget_refused(void)
{
    pthread_mutex_lock(&budget_lock);
    uint64_t n = budget_refused;
    pthread_mutex_unlock(&budget_lock);
    return n;
}

bool vg_unwind_budget_note(char *buf, size_t cap)
{
    uint64_t n = vg_unwind_budget_refused();
    if (!n)
        return false;
    snprintf(buf, cap, "stacks: %llu records left without their stacks: where the run's CPU "
             "quota (--cpus) cannot pay for vigil's work, vigil unwinds %d, then %d a second",
             (unsigned long long)n, VG_UNWIND_BURST, VG_UNWIND_PER_S);
    return true;
}
