/* source.h: the source line the intent summary gives an attempt, from
 * its record's decoded Python stack (`py`, innermost first). */
#ifndef VG_INSIGHT_SOURCE_H
#define VG_INSIGHT_SOURCE_H
#include <stdbool.h>

struct vg_buf;
struct vg_pyframe;
struct vg_syscall_ev;

/* The record's source line, "cand.py:14 in fetch_binary": the innermost
 * Python frame whose file is not the interpreter's own (stdlib,
 * site-packages, dist-packages, frozen modules).  Appended to out; false
 * (out unchanged) when the record has no such frame. */
bool vg_sum_source(const struct vg_syscall_ev *e, struct vg_buf *out);
/* That frame itself (vigil report reads its line), or NULL. */
const struct vg_pyframe *vg_sum_source_frame(const struct vg_syscall_ev *e);
#endif
