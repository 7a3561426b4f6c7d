/* view_filter.h: which records the event list shows, and moving through them.
 * A filter is a conjunction of a decision set, a class, a process and a
 * text; the rows are the indices of matching records, in log order,
 * rebuilt when the filter changes and extended when follow mode adds
 * records.  Text matches the one-line summary, "smart case": ignoring case
 * unless the text has a capital letter. */
#ifndef VW_VIEW_FILTER_H
#define VW_VIEW_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "viewer/model.h"

#define VW_DEC_BIT(d) (1u << (d))
#define VW_REFUSED_MASK \
    (VW_DEC_BIT(VG_DEC_DENY) | VW_DEC_BIT(VG_DEC_KILL) | VW_DEC_BIT(VG_DEC_WOULD_DENY) | \
     VW_DEC_BIT(VG_DEC_WOULD_KILL))

struct vw_filter {
    unsigned decisions;  /* VW_DEC_BIT set of decisions; 0: every record */
    int cls;             /* enum vg_class, or -1 for any */
    uint64_t proc;       /* process identity, 0 for any */
    int32_t pid;         /* that process's pid (matches its notes) */
    char *text;          /* owned; NULL for any */
};

struct vw_rows {
    uint32_t *v;         /* record indices */
    size_t n, cap;
    size_t scanned;      /* records examined so far */
};

bool vw_filter_active(const struct vw_filter *f);
void vw_filter_clear(struct vw_filter *f);
bool vw_filter_match(const struct vw_model *m, const struct vw_filter *f, size_t i);
/* "denials class=read pid=12 text='ssh'", or "none". */
void vw_filter_describe(const struct vw_filter *f, char *buf, size_t n);
bool vw_text_match(const char *hay, const char *needle);

void vw_rows_rebuild(struct vw_rows *r, const struct vw_model *m, const struct vw_filter *f);
/* Examine records appended since the last rebuild or extend. */
void vw_rows_extend(struct vw_rows *r, const struct vw_model *m, const struct vw_filter *f);
void vw_rows_free(struct vw_rows *r);
/* How many rows show records below `limit` (replay hides the rest). */
size_t vw_rows_upto(const struct vw_rows *r, size_t limit);
/* The first row whose record is >= rec (r->n if none). */
size_t vw_rows_lower(const struct vw_rows *r, size_t rec);

/* Starting after row `from` and going in direction dir (+1/-1), wrapping
 * around within the first nrows rows: the next row whose summary contains
 * needle, or whose record was refused.  -1 when there is none. */
long vw_find_text(const struct vw_model *m, const struct vw_rows *r, size_t nrows,
                  size_t from, int dir, const char *needle);
long vw_find_refused(const struct vw_model *m, const struct vw_rows *r, size_t nrows,
                     size_t from, int dir);

#endif
