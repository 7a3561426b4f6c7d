/* statedir.h: where `vigil run` puts a log the caller did not name
 * ($XDG_STATE_HOME/vigil, else ~/.local/state/vigil), and how `vigil log`
 * and `vigil view` find the latest one there. */
#ifndef VG_STATEDIR_H
#define VG_STATEDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

/* The directory, created (0700, one component at a time, never through a
 * symlink) when create is set.  The base ($XDG_STATE_HOME or $HOME) must
 * be an absolute path to a directory the caller owns; every component
 * below it vigil creates or finds must be a real directory, and the last
 * one the caller's.  malloc'd, or NULL with err set; when it is missing
 * (and not to be created), err says "no WHAT in DIR yet (HINT)": what
 * the caller looked for there, and how to get one. */
char *vg_state_dir(bool create, const char *what, const char *hint, struct vg_err *err);

/* A fresh log name in it: vigil-DATE-TIME-PID.msgpack.  malloc'd. */
char *vg_state_log_name(const char *dir);

/* How many logs the state directory keeps: each new run there removes the
 * oldest beyond this, so a machine running vigil for months does not fill
 * its disk with logs nobody named.  A log named with -o is never touched. */
#define VG_STATE_KEEP_LOGS 100

/* Remove the oldest logs in dir (only vigil-*.msgpack regular files the
 * caller owns) until keep are left.  0, or -1 with errno when one could
 * not go. */
int vg_state_prune(const char *dir, size_t keep);

/* The most recently modified vigil-*.msgpack in the state directory.
 * malloc'd, or NULL with err set (no directory, no log). */
char *vg_state_latest_log(struct vg_err *err);
#endif
