/* report.h: the text of the detail pane (one record, every field) and of
 * the summary view (the whole run), as styled lines. */
#ifndef VW_REPORT_H
#define VW_REPORT_H

#include "event/event.h"
#include "viewer/lines.h"
#include "viewer/model.h"

void vw_report_record(const struct vg_record *r, struct vw_lines *out);
void vw_report_summary(const struct vw_model *m, bool following, struct vw_lines *out);
/* CLOCK_REALTIME ns as "2026-12-04 20:15:00 UTC" into out[n] ("?" if it
 * cannot be shown). */
void vw_utc(uint64_t ns, char *out, size_t n);

#endif
