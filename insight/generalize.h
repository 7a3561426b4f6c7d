/* generalize.h: from one path a run used to the pattern a person would
 * write in a policy for it (`vigil learn`): the policy's variables for the
 * candidate's own places, system trees as globs, exact paths elsewhere. */
#ifndef VG_INSIGHT_GENERALIZE_H
#define VG_INSIGHT_GENERALIZE_H
#include "event/event.h"
#include "policy/policy.h"
#include "util/util.h"

/* Append the pattern for an access of class cls (read, write, exec) to
 * path (absolute, canonical, sandbox view) to out.  places: the run's
 * $WORK, $TMP and ~ (any may be NULL).  exact: the access was to the name
 * itself (a directory listed, a symlink read): outside the candidate's
 * places it gets the path alone, not its siblings. */
void vg_generalize(enum vg_class cls, const char *path, const struct vg_places *places,
                   bool exact, struct vg_buf *out);
/* A file named on the command line: the file itself wherever it lies, its
 * place's part as the variable ($TMP/x/cand.py), never the place's whole
 * tree, which a learned policy standing alone would then grant. */
void vg_generalize_file(const char *path, const struct vg_places *places, struct vg_buf *out);
#endif
