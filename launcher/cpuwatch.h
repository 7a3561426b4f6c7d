/* cpuwatch.h: the whole run's CPU time (limit cputotal, --cpu-total) held
 * by the supervisor: the run's cgroup counts the CPU time of every process
 * and thread of the sandbox, and the watch reads it often enough that the
 * run cannot spend much past its budget between two readings. */
#ifndef VG_CPUWATCH_H
#define VG_CPUWATCH_H
#include <stdbool.h>
#include <stdint.h>

#include "launcher/cgroup.h"

/* The longest and shortest sleeps between two readings.  The longest is
 * the other samplers' period (usage.h); the shortest keeps a run at its
 * last milliseconds from turning the watch into a busy loop. */
#define VG_CPUWATCH_MAX_NS (250ull * 1000 * 1000)
#define VG_CPUWATCH_MIN_NS (1ull * 1000 * 1000)

struct vg_cpu_watch {
    const struct vg_cgroup *cg;
    int fd;               /* the group's count, open; -1: no watch */
    uint64_t budget_ns;   /* the limit */
    unsigned ncpus;       /* the most CPUs the sandbox runs on at once */
    uint64_t used_ns;     /* at the last reading */
    bool over;            /* the budget was spent (or the count unreadable) */
};

/* A watch of cg's CPU time against budget_ms, for a sandbox that may run
 * on ncpus CPUs at once.  No watch (fd -1) without a budget or without a
 * cpuacct group: the limit is then an rlimit (launcher/limits.h). */
void vg_cpu_watch_init(struct vg_cpu_watch *w, const struct vg_cgroup *cg, uint64_t budget_ms,
                       unsigned ncpus);
/* Read the count; true when the run must stop: the budget is spent, or
 * the count cannot be read (what cannot be measured is not under it). */
bool vg_cpu_watch_sample(struct vg_cpu_watch *w);
/* How long to sleep before the next reading: no longer than the run would
 * take to spend what is left with every CPU busy, within the bounds
 * above; 0: no watch. */
uint64_t vg_cpu_watch_next_ns(const struct vg_cpu_watch *w);
void vg_cpu_watch_close(struct vg_cpu_watch *w);
#endif
