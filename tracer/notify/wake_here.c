/* wake_here.c: see notify_int.h (vg_nt_wake_here). */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "tracer/notify/notify_int.h"

void vg_nt_wake_here(struct vg_nt_here *h, pid_t tid, const cpu_set_t *mine)
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
    h->mine = mine;
    h->self = h->held && CPU_COUNT(mine) > 0 &&
              sched_setaffinity(0, sizeof h->here, &h->here) == 0;
}

int vg_nt_wake_done(struct vg_nt_here *h)
{
    if (!h->held)
        return 0;
    h->held = false;
    if (h->self) /* failing, this thread stays on one CPU: slower, no harm */
        (void)sched_setaffinity(0, sizeof *h->mine, h->mine);
    /* Give back what it had, unless it changed them meanwhile (another of
     * its threads may): then theirs stand.  ESRCH: gone. */
    cpu_set_t now;
    if (sched_getaffinity(h->tid, sizeof now, &now) < 0)
        return errno == ESRCH ? 0 : -1;
    if (!CPU_EQUAL(&now, &h->here))
        return 0;
    return sched_setaffinity(h->tid, sizeof h->saved, &h->saved) == 0 || errno == ESRCH ? 0 : -1;
}
