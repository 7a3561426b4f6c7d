/* report.h: the text of the detail pane (one record, every field) and of
 * the summary view (the whole run), as styled lines. */
#ifndef VW_REPORT_H
#define VW_REPORT_H

#include "event/event.h"
#include "viewer/lines.h"
#include "viewer/model.h"

void vw_report_record(const struct vg_record *r, struct vw_lines *out);
void vw_report_summary(const struct vw_model *m, bool following, struct vw_lines *out);

#endif
