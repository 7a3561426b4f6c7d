/* cpu_pin.c: see notify_int.h (vg_nt_wake_here, vg_nt_pin). */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "tracer/notify/notify_int.h"
#include "util/util.h"

void vg_nt_pin_init(struct vg_nt_pin *p)
{
    p->cpu = -1;
    p->caller = 0;
    p->at = 0;
    p->keep = false;
    if (sched_getaffinity(0, sizeof p->own, &p->own) < 0)
        CPU_ZERO(&p->own); /* then it is never narrowed (nothing to give back) */
}

/* Widening can fail only if this thread's own CPUs went away (hotplug,
 * a cpuset the host changed): it then stays where it is, slower, and
 * harms nobody, since the thread is vigil's. */
static void widen(struct vg_nt_pin *p)
{
    (void)sched_setaffinity(0, sizeof p->own, &p->own);
    p->cpu = -1;
}

void vg_nt_pin_follow(struct vg_nt_pin *p, pid_t caller)
{
    if (p->cpu >= 0 && caller != p->caller)
        widen(p);
}

void vg_nt_pin_wait(struct vg_nt_pin *p)
{
    if (p->cpu >= 0 && (!p->keep || vg_now_mono_ns() - p->at >= VG_NT_PIN_NS))
        widen(p);
}

/* This thread on cpu only, for caller's calls. */
static void pin_here(struct vg_nt_pin *p, int cpu, const cpu_set_t *here, pid_t caller)
{
    p->caller = caller;
    if (p->cpu == cpu || CPU_COUNT(&p->own) == 0)
        return;
    p->cpu = sched_setaffinity(0, sizeof *here, here) == 0 ? cpu : -1;
    p->at = vg_now_mono_ns();
}

void vg_nt_wake_here(struct vg_nt_here *h, pid_t tid, struct vg_nt_pin *mine)
{
    h->held = false;
    int cpu = sched_getcpu();
    if (cpu < 0 || sched_getaffinity(tid, sizeof h->saved, &h->saved) < 0 ||
        !CPU_ISSET(cpu, &h->saved) || CPU_COUNT(&h->saved) == 1)
        return; /* not allowed here, or here already: nothing to narrow */
    CPU_ZERO(&h->here);
    CPU_SET(cpu, &h->here);
    h->tid = tid;
    h->held = sched_setaffinity(tid, sizeof h->here, &h->here) == 0;
    if (h->held)
        pin_here(mine, cpu, &h->here, tid);
}

int vg_nt_wake_done(struct vg_nt_here *h)
{
    if (!h->held)
        return 0;
    h->held = false;
    /* Give back what it had, unless it changed them meanwhile (another of
     * its threads may): then theirs stand.  ESRCH: gone. */
    cpu_set_t now;
    if (sched_getaffinity(h->tid, sizeof now, &now) < 0)
        return errno == ESRCH ? 0 : -1;
    if (!CPU_EQUAL(&now, &h->here))
        return 0;
    return sched_setaffinity(h->tid, sizeof h->saved, &h->saved) == 0 || errno == ESRCH ? 0 : -1;
}
