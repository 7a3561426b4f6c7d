/* learn.h: `vigil learn`: from a run's log, the policy that would have
 * allowed what the run did, written the way a person would (docs/POLICY.md
 * "vigil learn"): the candidate's places as $WORK, $TMP and ~, system trees
 * as globs, programs exactly, connections as host:port.  Probes (lookups
 * that found nothing) and secrets never become rules.  When the run's
 * policy was a shipped one, the result includes it and adds only what it
 * did not allow; with a diff policy, only what that policy does not allow
 * is given.  The text is checked with the policy parser and every line it
 * warns about is turned into a comment, so `vigil check` passes it. */
#ifndef VG_INSIGHT_LEARN_H
#define VG_INSIGHT_LEARN_H
#include "util/util.h"

struct vg_learn_opts {
    const char *log;       /* the run log */
    const char *diff;      /* a policy (name or file): print only what it lacks; or NULL */
    const char *name;      /* the output's file name, for the parser's messages */
    const char *home;      /* the invoking user's home (~), or NULL */
};

/* The policy text (or, with diff, the rules to add) into out: 0; 1 with
 * err saying so when the log is truncated or corrupt (out then covers its
 * complete records); -1 with err when the log or a policy cannot be read. */
int vg_learn(const struct vg_learn_opts *o, struct vg_buf *out, struct vg_err *err);
#endif
