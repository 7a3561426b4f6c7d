/* cpuwatch.c: see cpuwatch.h. */
#include "launcher/cpuwatch.h"

#include <string.h>
#include <unistd.h>

#define NS_PER_MS 1000000ull

void vg_cpu_watch_init(struct vg_cpu_watch *w, const struct vg_cgroup *cg, uint64_t budget_ms,
                       unsigned ncpus)
{
    memset(w, 0, sizeof *w);
    w->cg = cg;
    w->fd = budget_ms && cg ? vg_cgroup_cpu_open(cg) : -1;
    w->budget_ns = budget_ms * NS_PER_MS;
    w->ncpus = ncpus ? ncpus : 1;
}

bool vg_cpu_watch_sample(struct vg_cpu_watch *w)
{
    if (w->fd < 0)
        return false;
    uint64_t ns;
    if (!vg_cgroup_cpu_ns(w->cg, w->fd, &ns)) {
        w->over = true;
        return true;
    }
    w->used_ns = ns;
    if (ns >= w->budget_ns)
        w->over = true;
    return w->over;
}

uint64_t vg_cpu_watch_next_ns(const struct vg_cpu_watch *w)
{
    if (w->fd < 0)
        return 0;
    uint64_t left = w->budget_ns > w->used_ns ? w->budget_ns - w->used_ns : 0;
    uint64_t t = left / w->ncpus;
    return t > VG_CPUWATCH_MAX_NS ? VG_CPUWATCH_MAX_NS : t < VG_CPUWATCH_MIN_NS ? VG_CPUWATCH_MIN_NS : t;
}

void vg_cpu_watch_close(struct vg_cpu_watch *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}
