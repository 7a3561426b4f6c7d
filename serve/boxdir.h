/* boxdir.h: the directory a run's candidate works in.  Every run, pooled
 * or cold, works in STATE/pool/s-RANDOM/work, made when its sandbox is
 * prepared (pooled: ahead; cold: at its start): the path is the one thing
 * of the host a candidate sees of its work dir (its cwd, mountinfo), and
 * it must not tell a pooled sandbox from a fresh one, nor the user's uid
 * and the run's id.  The request's files move in at the start; the work
 * dir moves into the run's own directory at the end. */
#ifndef VG_SERVE_BOXDIR_H
#define VG_SERVE_BOXDIR_H
#include <sys/types.h>

#include "util/util.h"

/* A new box under pool_dir with its work dir, owned by uid (0: the
 * daemon's own).  malloc'd path of the box, or NULL with err. */
char *vg_boxdir_new(const char *pool_dir, uid_t uid, struct vg_err *err);
/* Moves the request's files (run_dir/work's entries) into box/work and
 * gives them all to uid.  -1 with err. */
int vg_boxdir_fill(const char *box, const char *run_dir, uid_t uid, struct vg_err *err);
/* The run is over: box/work becomes run_dir/work, the rest of box goes. */
void vg_boxdir_return(const char *box, const char *run_dir);
/* box/work, malloc'd. */
char *vg_boxdir_work(const char *box);
#endif
