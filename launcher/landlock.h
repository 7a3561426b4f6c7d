/* landlock.h: apply a Landlock plan (see vg_policy_landlock_plan in
 * policy/policy.h) to the calling process, the kernel-enforced backstop
 * under the supervisor's per-call decisions.  Also the Landlock constants
 * newer than the distribution's <linux/landlock.h>. */
#ifndef VG_TRACER_LANDLOCK_H
#define VG_TRACER_LANDLOCK_H
#include <stdint.h>
#include <linux/landlock.h>

#include "policy/policy.h"
#include "util/util.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)       /* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)    /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)   /* ABI 5 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#define VG_LANDLOCK_RULE_NET_PORT 2                 /* ABI 4 */

/* Rights a rule on a non-directory may carry. */
#define VG_LL_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
                           LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
                           LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* The kernel's Landlock ABI version; 0 when unsupported or disabled. */
int vg_landlock_abi(void);
/* Restrict the calling process (and what it execs) to plan.  Paths that do
 * not exist are handled as struct vg_landlock_rule says.  An empty plan
 * (nothing handled) or abi 0 does nothing.  With keep, the ruleset's fd
 * is kept open there (-1 when there is none), for the notify engine's
 * crew threads to restrict themselves with the very same rules. */
int vg_landlock_apply(const struct vg_landlock_plan *plan, int abi, int *keep, struct vg_err *err);
#endif
