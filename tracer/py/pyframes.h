/* pyframes.h: the Python stack of a thread of a CPython process, read by
 * the supervisor from the interpreter's memory (process_vm_readv; nothing
 * is injected, nothing runs in the candidate).  The thread is stopped
 * (ptrace) or blocked in its seccomp notification (notify), so its own
 * frame chain holds still while it is read; other threads may change the
 * interpreter's lists meanwhile.  Everything read is the candidate's and
 * may be garbage: every read is bounded, every pointer checked, every
 * walk capped, and a read that fails just ends the stack. */
#ifndef VG_PY_PYFRAMES_H
#define VG_PY_PYFRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "event/event.h"
#include "tracer/decode.h"

#define VG_PY_STACK_MAX 64   /* frames kept; py_trunc when there are more */

/* Per-run state: symbol lookups per executable file (dev, ino) and the
 * interpreter found in each process (by process identity). */
struct vg_pyframes;
struct vg_pyframes *vg_py_new(void);
void vg_py_free(struct vg_pyframes *pf);
/* The process execs or exits: what was found in it no longer holds. */
void vg_py_forget(struct vg_pyframes *pf, uint64_t proc);

/* The Python frames of thread tr->tid (tr->nstid as the candidate's
 * interpreter knows it), innermost first, at most max; strings in a.
 * Returns how many (0: not a CPython process of a known version, no
 * Python code running in that thread, or unreadable).  *trunc: more
 * frames than max. */
uint32_t vg_py_stack(struct vg_pyframes *pf, struct vg_tracee *tr, uint64_t proc,
                     struct vg_pyframe *out, uint32_t max, bool *trunc, struct vg_arena *a);

/* pyrecord.c: plug Python frames into the shared core (struct vg_sup's
 * py hooks, which the core calls for records and for processes that exec
 * or exit), and unplug them at the end of the run. */
struct vg_sup;
void vg_py_plug(struct vg_sup *e);
void vg_py_unplug(struct vg_sup *e);
#endif
