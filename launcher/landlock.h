/* landlock.h: apply a Landlock plan (see vg_policy_landlock_plan in
 * policy/policy.h) to the calling process, the kernel-enforced backstop
 * under the supervisor's per-call decisions.  The rights a plan names are
 * policy/landlock_rights.h's. */
#ifndef VG_TRACER_LANDLOCK_H
#define VG_TRACER_LANDLOCK_H
#include <stdint.h>
#include "policy/landlock_rights.h"
#include "policy/policy.h"
#include "util/util.h"

/* The kernel's Landlock ABI version; 0 when unsupported or disabled. */
int vg_landlock_abi(void);
/* Restrict the calling process (and what it execs) to plan.  Paths that do
 * not exist are handled as struct vg_landlock_rule says.  An empty plan
 * (nothing handled) or abi 0 does nothing.  With keep, the ruleset's fd
 * is kept open there (-1 when there is none), for the notify engine's
 * crew threads to restrict themselves with the very same rules. */
int vg_landlock_apply(const struct vg_landlock_plan *plan, int abi, int *keep, struct vg_err *err);
#endif
