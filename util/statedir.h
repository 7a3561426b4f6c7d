/* statedir.h: where `vigil run` puts a log the caller did not name
 * ($XDG_STATE_HOME/vigil, else ~/.local/state/vigil), and how `vigil log`
 * and `vigil view` find the latest one there. */
#ifndef VG_STATEDIR_H
#define VG_STATEDIR_H

#include <stdbool.h>

#include "util/util.h"

/* The directory, created (0700, one component at a time, never through a
 * symlink) when create is set.  The base ($XDG_STATE_HOME or $HOME) must
 * be an absolute path to a directory the caller owns; every component
 * below it vigil creates or finds must be a real directory, and the last
 * one the caller's.  malloc'd, or NULL with err set. */
char *vg_state_dir(bool create, struct vg_err *err);

/* A fresh log name in it: vigil-DATE-TIME-PID.msgpack.  malloc'd. */
char *vg_state_log_name(const char *dir);

/* The most recently modified vigil-*.msgpack in the state directory.
 * malloc'd, or NULL with err set (no directory, no log). */
char *vg_state_latest_log(struct vg_err *err);
#endif
