/* pool.h: the warm pool (docs/SERVE.md "The warm pool"): --pool N
 * sandboxes prepared ahead by `vigil run --hold` (docs/RUN.md "Prepared
 * runs"), each used by one run and gone with it, backfilled by the main
 * loop.  A run takes one when it asks nothing a preparation fixes
 * differently (the pool's policy, no image, no limits of its own, the
 * full default grants); any other run starts cold. */
#ifndef VG_SERVE_POOL_H
#define VG_SERVE_POOL_H
#include <stdbool.h>
#include <sys/types.h>

#include "serve/request.h"
#include "serve/state.h"

struct vg_pool;

/* The pool of d (d->o->pool slots; 0: none, it then holds only the
 * boxes of cold runs), its directory made afresh: what a killed daemon
 * left there is removed (recovery has taken its runs' work dirs back
 * first).  NULL with err. */
struct vg_pool *vg_pool_new(struct vg_serve *d, struct vg_err *err);
/* A box for a cold start (serve/boxdir.h), in the pool's directory. */
char *vg_pool_box(struct vg_pool *p, uid_t uid, struct vg_err *err);
/* Whether a run of this request, with these grants, may take a slot. */
bool vg_pool_fits(const struct vg_serve *d, const struct vg_sreq *q, uint64_t cpu_ms,
                  uint64_t wall_ms);
/* Starts r in a ready slot: 1 started, 0 no slot ready (start it cold),
 * -1 with err (the slot is destroyed; r did not start). */
int vg_pool_start(struct vg_pool *p, struct vg_srun *r, struct vg_err *err);
/* The main loop's turn: takes the "ready" of slots that finished
 * preparing, and starts preparing slots up to N. */
void vg_pool_tick(struct vg_pool *p);
/* pid was reaped: true when it was a slot's (unused: it is gone). */
bool vg_pool_reaped(struct vg_pool *p, pid_t pid);
/* Destroys every unused slot (their vigils exit when their socket closes). */
void vg_pool_drain(struct vg_pool *p);
/* Slots whose vigil has not exited yet. */
unsigned vg_pool_live(const struct vg_pool *p);
void vg_pool_free(struct vg_pool *p);
#endif
