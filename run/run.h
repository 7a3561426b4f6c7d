/* run.h: one `vigil run`, from its options (launcher/run_opts.h) to its
 * exit status. */
#ifndef VG_RUN_H
#define VG_RUN_H

#include "launcher/run_opts.h"

/* Run the whole thing; returns vigil's exit status (docs/RUN.md, "Exit
 * status and `status`"). */
int vg_run(struct vg_run_opts *opts);

/* With --result: write the record of a run that failed before it ran
 * (status "error", msg, exit 125), if the rule of util/outfile.h lets
 * vigil write there.  Used for errors before vg_run and inside it. */
void vg_run_error_result(const struct vg_run_opts *opts, const char *msg);
#endif
