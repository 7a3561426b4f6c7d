/* canon_int.h: internal to canon.c and canon_proc.c: the state of one
 * walk and the /proc step. */
#ifndef VG_CANON_INT_H
#define VG_CANON_INT_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tracer/canon.h"

struct walk {
    char out[PATH_MAX];   /* resolved prefix: "" for "/", else "/a/b" */
    size_t len;
    bool lexical;         /* a component is missing: the rest is a name to be created */
    int links;
    const struct vg_canon_ctx *cx;
    int procfs;           /* is root_fd's "proc" a procfs? 0 unknown, 1 yes, -1 no */
    char why[PATH_MAX + 64]; /* set (non-empty) once the path is unresolvable */
};

/* Mark the walk unresolvable, saying why (printf-style). */
void vg_walk_unresolvable(struct walk *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Is the prefix /proc or below, and is that /proc a procfs (asked of the
 * object once per walk)?  Its entries are then handled by vg_proc_link. */
bool vg_walk_in_proc(struct walk *w);

/* The component just pushed lies in /proc (the prefix before it was
 * prev_len bytes long).  Writes its link target (not NUL-terminated) to
 * target and returns its length; 0: not a link; -1: unresolvable (w->why
 * says why).  A magic link's target is always absolute (a sandbox path to
 * jump to); /proc's own links (mounts -> self/mounts) are relative. */
ssize_t vg_proc_link(struct walk *w, size_t prev_len, char *target, size_t cap);
#endif
