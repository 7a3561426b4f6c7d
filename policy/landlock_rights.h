/* landlock_rights.h: the Landlock rights a plan (policy/landlock_plan.c)
 * grants and the launcher applies (launcher/landlock.c), with those newer
 * than the distribution's <linux/landlock.h>.  Here, below both, so that
 * the policy need not include the launcher. */
#ifndef VG_LANDLOCK_RIGHTS_H
#define VG_LANDLOCK_RIGHTS_H
#include <linux/landlock.h>

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
#endif
