/* uidrange.c: see uidrange.h. */
#include "launcher/uidrange.h"

#include <stdio.h>
#include <stdlib.h>

#include "launcher/hostuid.h"

int vg_uid_range_parse(struct vg_uid_range *r, const char *text, const char *flag,
                       struct vg_err *err)
{
    *r = (struct vg_uid_range){0};
    unsigned long a, b;
    char tail;
    if (sscanf(text, "%lu-%lu%c", &a, &b, &tail) != 2 || a < VG_HOST_UID_MIN || b < a ||
        b > VG_HOST_UID_MAX) {
        vg_errf(err, "%s %s: expected FIRST-LAST, from %u up", flag, text, VG_HOST_UID_MIN);
        return -1;
    }
    if (b - a >= VG_UID_RANGE_MAX) {
        vg_errf(err, "%s %s: at most %lu uids", flag, text, VG_UID_RANGE_MAX);
        return -1;
    }
    r->first = (uid_t)a;
    r->last = (uid_t)b;
    r->busy = vg_xcalloc(b - a + 1, sizeof *r->busy);
    return 0;
}

unsigned long vg_uid_range_size(const struct vg_uid_range *r)
{
    return r->busy ? (unsigned long)(r->last - r->first) + 1 : 0;
}

uid_t vg_uid_range_take(struct vg_uid_range *r)
{
    if (!r->busy)
        return 0;
    for (uid_t u = r->first; u <= r->last; u++)
        if (!r->busy[u - r->first]) {
            r->busy[u - r->first] = true;
            return u;
        }
    return VG_UIDS_NONE;
}

void vg_uid_range_give(struct vg_uid_range *r, uid_t uid)
{
    if (r->busy && uid >= r->first && uid <= r->last)
        r->busy[uid - r->first] = false;
}

void vg_uid_range_free(struct vg_uid_range *r)
{
    free(r->busy);
    *r = (struct vg_uid_range){0};
}
