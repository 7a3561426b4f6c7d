/* learn_int.h: internal to insight/learn*.c: one `vigil learn`. */
#ifndef VG_INSIGHT_LEARN_INT_H
#define VG_INSIGHT_LEARN_INT_H
#include <stdbool.h>
#include <stddef.h>

#include "event/event.h"
#include "insight/learn.h"
#include "insight/summary.h"
#include "image/image.h"
#include "policy/policy.h"

struct vg_learn_lines {
    char **v;
    size_t n, cap;
};

struct vg_learn {
    const struct vg_learn_opts *o;
    struct vg_places places;      /* ~, $WORK (the run's cwd), $TMP */
    char *work;
    struct vg_sum_places where;   /* the header's workdir and scratch, as the summary sees them */
    char *run_policy;             /* the header's policy path, for the comment */
    bool command_file;            /* argv[0] names a file: its first exec needs no rule */
    bool seen_exec;
    struct vg_policy *base;       /* what is allowed already (compiled), or NULL */
    char *include;                /* the include line's argument, or NULL: standalone */
    struct vg_learn_lines rules;  /* "allow CLASS PATTERN", in first-seen order */
    struct vg_learn_lines skipped; /* "# not learned (why): ..." */
    char incomplete[600];         /* the log has no trailer or a corrupt tail: why */
    char *image;                  /* the header's image digest ("sha256:HEX"), or NULL */
    struct vg_image_ref img;      /* that image in this store, when it is there */
    struct vg_trees *trees;       /* its trees, where policies are resolved; NULL: the host's */
};
/* Where the learned and base policies resolve their paths: the run's
 * image's trees, else the host's. */
const struct vg_trees *vg_learn_trees(const struct vg_learn *L);

/* Can the policy language write this path as one literal word?  Its words
 * are split at spaces, `#` starts a comment, `$` and `~` are variables; a
 * control or non-ASCII byte is refused too, so a learned line is always
 * one line of plain ASCII (what cannot be written is a comment, escaped). */
bool vg_learn_writable(const char *p);
/* The base policy: the run's own when it is a shipped one (same SHA-256
 * as the shipped file), or the --diff policy.  -1 with err when --diff's
 * policy cannot be loaded. */
int vg_learn_base(struct vg_learn *L, const struct vg_header *h, struct vg_err *err);
/* Write the policy (or the --diff rules), checked (learn_check.c). */
int vg_learn_write(struct vg_learn *L, struct vg_buf *out, struct vg_err *err);
#endif
