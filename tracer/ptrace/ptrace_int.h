/* ptrace_int.h: what only the ptrace engine does, for the shared stop
 * dispatcher (tracer/stops.c): decide a call at a ptrace stop. */
#ifndef VG_PTRACE_INT_H
#define VG_PTRACE_INT_H
#include <stdint.h>

struct vg_sup;
struct vg_task;

/* A PTRACE_EVENT_SECCOMP stop: vigil's RET_TRACE (decided), or a
 * candidate's own filter's on a call vigil lets run (continued). */
void vg_pt_on_seccomp(struct vg_sup *e, struct vg_task *t);
/* Decode the call tid is stopped in (or was just refused by the
 * baseline), decide it, record it with its stack, then release or fail it. */
void vg_pt_judge(struct vg_sup *e, struct vg_task *t, int nr, const uint64_t args[6]);
#endif
