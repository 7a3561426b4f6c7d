/* write_out.h: a whole output a subcommand made (a learned policy, a
 * report page) written to the file the user named, the way vigil writes
 * every output (util/outfile.h: a new file renamed onto the target, never
 * over a file vigil did not write). */
#ifndef VG_CLI_WRITE_OUT_H
#define VG_CLI_WRITE_OUT_H
#include "util/outfile.h"
#include "util/util.h"

/* 0, or -1 with err naming the file and what went wrong. */
int vg_write_out(const char *path, const struct vg_outfile_kind *k, const struct vg_buf *b,
                 struct vg_err *err);
#endif
