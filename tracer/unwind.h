/* unwind.h: native stacks of a stopped tracee, through libunwind-ptrace. */
#ifndef VG_UNWIND_H
#define VG_UNWIND_H
#include <stdint.h>
#include <sys/types.h>
#include "event/event.h"
#include "tracer/decode.h"

#define VG_STACK_MAX 32

struct vg_unwinder;  /* caches: address space, per-process module maps */

struct vg_unwinder *vg_unwinder_new(void);
void vg_unwinder_free(struct vg_unwinder *u);
/* The process's image changed (exec) or it exited: drop its caches. */
void vg_unwinder_forget(struct vg_unwinder *u, pid_t pid);
/* Unwind thread tid (of process pid, stopped under ptrace) into at most max
 * frames allocated from arena.  Returns the number of frames (0 on failure). */
unsigned vg_unwind(struct vg_unwinder *u, pid_t pid, pid_t tid,
                   struct vg_frame *frames, unsigned max, struct vg_arena *arena);
#endif
