/* proctree.h: the processes of a run, rebuilt from its proc records
 * (start/exec/exit) and credited with the syscall records they made.  Fed
 * one record at a time while the log is indexed, so follow mode extends it
 * for free. */
#ifndef VW_PROCTREE_H
#define VW_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/event.h"
#include "viewer/lines.h"
#include "viewer/slots.h"
#include "viewer/strtab.h"

struct vw_exec {
    const char *exe;  /* interned */
    const char *cmd;  /* argv joined with spaces, interned */
    uint64_t ts_ns;
};

/* A refused exec: what the process tried to run.  The tries of one
 * command in a row (a PATH search) are one entry. */
struct vw_tried {
    const char *cmd;  /* argv joined with spaces, interned */
    uint32_t tries;
};

struct vw_proc {
    uint64_t id, parent;        /* identities, never reused in a run */
    int32_t pid, ppid;
    bool thread, started, exited, core;
    uint64_t start_ns, exit_ns;
    int32_t exit_code, sig;
    const char *inherited;      /* parent's command when it forked us */
    struct vw_exec *execs;      /* the exec chain, in order */
    uint32_t nexec;
    uint64_t events, denials;   /* syscall records, and refused ones */
    struct vw_tried *tried;     /* refused execs, in order */
    uint32_t ntried;
};

struct vw_proctree {
    struct vw_proc *v;          /* in order of first appearance */
    size_t n, cap;
    struct vw_slots slots;      /* identity -> index into v */
    struct vw_strtab strings;
};

void vw_tree_add(struct vw_proctree *t, const struct vg_record *r);
/* NULL when the process never appeared. */
const struct vw_proc *vw_tree_find(const struct vw_proctree *t, uint64_t id);
/* The command a process runs now: its last exec, else what it inherited. */
const char *vw_proc_cmd(const struct vw_proc *p);
/* The tree as text, one line per process (ref = its identity) plus one per
 * further exec and one per refused command ("tried: curl -o x ..."),
 * children in order of appearance. */
void vw_tree_lines(const struct vw_proctree *t, struct vw_lines *out, bool utf8);
void vw_tree_free(struct vw_proctree *t);

#endif
