/* stats.h: what the summary view shows, accumulated one record at a time
 * while the log is indexed (so follow mode keeps it current). */
#ifndef VW_STATS_H
#define VW_STATS_H

#include <stdint.h>

#include "event/event.h"
#include "viewer/strtab.h"

struct vw_stats {
    uint64_t counts[VG_CLASS_NCLASSES][VG_DEC_NDECISIONS];
    uint64_t types[VG_REC_NTYPES];
    uint64_t svc_kinds[VG_SVC_NKINDS]; /* service records by kind (vigil serve's log) */
    struct vw_strtab denied_paths;  /* refused file accesses, by path */
    struct vw_strtab destinations;  /* every network address, any decision */
    struct vw_strtab programs;      /* every image a process exec'd */
    struct vw_strtab notes;         /* "what: detail" of note records */
};

void vw_stats_add(struct vw_stats *s, const struct vg_record *r);
void vw_stats_free(struct vw_stats *s);

#endif
