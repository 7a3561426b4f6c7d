/* replay.h: revealing a log's records in the order and at the pace they
 * were written, scaled by a speed.  Pure arithmetic over the model's
 * timestamps; the UI supplies the clock. */
#ifndef VW_REPLAY_H
#define VW_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "viewer/model.h"

struct vw_replay {
    bool active;       /* records at and after `limit` are hidden */
    bool playing;      /* the clock runs */
    int speed;         /* index into the speed table */
    size_t limit;      /* records [0, limit) are revealed */
    uint64_t clock_ns; /* log time reached */
    uint64_t last_ns;  /* monotonic time of the last tick */
};

void vw_replay_init(struct vw_replay *r);
double vw_replay_speed(const struct vw_replay *r);
/* Change speed by one step (0.25x .. 64x); false at either end. */
bool vw_replay_faster(struct vw_replay *r, int dir);
/* Space: not replaying -> play from record `from` (hiding everything
 * after it); playing <-> paused otherwise. */
void vw_replay_toggle(struct vw_replay *r, const struct vw_model *m, size_t from, uint64_t now);
/* Reveal exactly one more record (entering replay, paused, if needed). */
void vw_replay_step(struct vw_replay *r, const struct vw_model *m, size_t from);
/* Advance the clock to `now`; true when records were revealed.  Replay
 * ends (everything shown) when the last record is revealed. */
bool vw_replay_tick(struct vw_replay *r, const struct vw_model *m, uint64_t now);
/* How many records are visible. */
size_t vw_replay_visible(const struct vw_replay *r, const struct vw_model *m);

#endif
