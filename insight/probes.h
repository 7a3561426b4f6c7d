/* probes.h: grouping of probes for `vigil log`.  Consecutive probe records
 * (docs/FORMAT.md `probe`) of one process, of one class and for one name
 * (the last component: a PATH search for curl, a package.json walk, a
 * locale file per language) become one line:
 *   +0.020030 [2] exec    probed 6 paths for curl: /usr/local/sbin/curl ... -> deny
 * A group of one is printed as the record itself. */
#ifndef VG_INSIGHT_PROBES_H
#define VG_INSIGHT_PROBES_H
#include <stdbool.h>
#include <stdint.h>

#include "event/event.h"
#include "util/util.h"

/* Paths named on a grouped line; the rest are counted. */
#define VG_PROBE_SHOWN 4

struct vg_probe_group {
    bool active;
    uint64_t proc, first_ts;
    int32_t pid;
    enum vg_class cls;
    char *base;
    unsigned n;
    unsigned decisions;       /* bit (1 << vg_decision) per decision */
    struct vg_buf paths;      /* the first VG_PROBE_SHOWN, escaped */
    struct vg_buf single;     /* the first record's own line */
};

bool vg_is_probe(const struct vg_record *r);
/* Does probe r continue the open group? */
bool vg_probe_joins(const struct vg_probe_group *g, const struct vg_record *r);
/* Add probe r (line: its own `vigil log` line, kept for a group of one);
 * the caller flushes first when r does not join. */
void vg_probe_add(struct vg_probe_group *g, const struct vg_record *r, const struct vg_buf *line);
/* Append the open group's line (with a newline) to out, and close it. */
void vg_probe_flush(struct vg_probe_group *g, struct vg_buf *out);
void vg_probe_free(struct vg_probe_group *g);
#endif
