/* uidrange.h: a range of host uids handed out one per live run (vigil
 * serve's --uid-range, vigil batch's): each run's candidate is then a user
 * of its own to the kernel (`vigil run --host-uid`, hostuid.h).  A uid is
 * taken when a run's vigil starts and given back when it has been reaped,
 * so no two live runs share one. */
#ifndef VG_UIDRANGE_H
#define VG_UIDRANGE_H
#include <stdbool.h>
#include <sys/types.h>

#include "util/util.h"

/* What take() returns when every uid of the range is a live run's. */
#define VG_UIDS_NONE ((uid_t)-1)
/* More uids than runs could ever be alive at once (each holds a process,
 * a pid 1 and a cgroup), and a bound on the busy map. */
#define VG_UID_RANGE_MAX 65536ul

struct vg_uid_range {
    uid_t first, last;
    bool *busy;              /* [uid - first]; NULL: no range (every run is nobody or the caller) */
};

/* "FIRST-LAST", both in [VG_HOST_UID_MIN, VG_HOST_UID_MAX], at most
 * VG_UID_RANGE_MAX of them; flag names the
 * option in the message.  -1 with a one-line reason. */
int vg_uid_range_parse(struct vg_uid_range *r, const char *text, const char *flag,
                       struct vg_err *err);
/* How many uids it holds (0 for no range). */
unsigned long vg_uid_range_size(const struct vg_uid_range *r);
/* A free uid, now taken; 0 with no range; VG_UIDS_NONE when all are taken. */
uid_t vg_uid_range_take(struct vg_uid_range *r);
/* uid (taken from this range, or 0) is free again. */
void vg_uid_range_give(struct vg_uid_range *r, uid_t uid);
void vg_uid_range_free(struct vg_uid_range *r);
#endif
