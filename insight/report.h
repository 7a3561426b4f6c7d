/* report.h: `vigil report`, the fleet view of a batch.  What every
 * candidate of a batch directory tried, per candidate, per group of
 * candidates (the value of one of their tasks' labels, `--by model`) and
 * across the fleet: refusals by class, secrets and home paths touched,
 * network attempts and names refused, programs refused and programs run,
 * writes and deletions outside the workdir, limits hit, how the runs
 * ended, and the source lines behind the refusals.
 *
 * The categories are the intent summary each result record already holds
 * (insight/summary.h: results.jsonl's "summary"), added up, never derived
 * again; the logs (tasks/ID/run.msgpack) are read only for what a summary
 * does not have: the programs each run executed and the candidates' own
 * source lines behind refusals (their Python frames, and the text of the
 * line from the task's work dir).  Rendered as text, JSON or one
 * self-contained HTML page (report_text.c, report_json.c, report_html.c). */
#ifndef VG_INSIGHT_REPORT_H
#define VG_INSIGHT_REPORT_H
#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

struct vg_report_opts {
    const char *dir;     /* the batch directory (vigil batch --out), or a results file in it */
    const char *by;      /* a label name to group the candidates by, or NULL */
    unsigned top;        /* items listed per list in text and HTML (JSON has all) */
};

struct vg_report;

/* Reads the batch's results and its logs.  0; 1 when some log could not
 * be read whole (the report counts what it holds; vg_report_warnings says
 * which); -1 with err (a one-line message naming the file and line) when
 * there is no report to make. */
int vg_report_load(const struct vg_report_opts *o, struct vg_report **out, struct vg_err *err);
/* What could not be read whole, one line each (names from outside raw:
 * print them escaped). */
size_t vg_report_nwarnings(const struct vg_report *r);
const char *vg_report_warning(const struct vg_report *r, size_t i);
void vg_report_free(struct vg_report *r);

/* The renderings.  Text and HTML escape every string from outside. */
void vg_report_text(const struct vg_report *r, struct vg_buf *out);
void vg_report_json(const struct vg_report *r, struct vg_buf *out);
void vg_report_html(const struct vg_report *r, struct vg_buf *out);
/* What an HTML report starts with (the -o file's signature: vigil may
 * replace a page it wrote before, never another file). */
#define VG_REPORT_HTML_MARK "<!-- vigil report"
#endif
