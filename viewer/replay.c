/* replay.c: see replay.h. */
#include "viewer/replay.h"

static const double speeds[] = {0.25, 0.5, 1, 2, 4, 8, 16, 32, 64};
enum { NSPEEDS = sizeof speeds / sizeof speeds[0], SPEED_1X = 2 };

void vw_replay_init(struct vw_replay *r)
{
    *r = (struct vw_replay){.speed = SPEED_1X};
}

double vw_replay_speed(const struct vw_replay *r)
{
    return speeds[r->speed];
}

bool vw_replay_faster(struct vw_replay *r, int dir)
{
    int s = r->speed + (dir > 0 ? 1 : -1);
    if (s < 0 || s >= NSPEEDS)
        return false;
    r->speed = s;
    return true;
}

static void finish_if_done(struct vw_replay *r, const struct vw_model *m)
{
    if (r->limit >= m->n) {
        r->active = r->playing = false;
        r->limit = m->n;
    }
}

static void start(struct vw_replay *r, const struct vw_model *m, size_t from)
{
    if (from >= m->n)
        from = 0;
    r->active = true;
    r->limit = from + 1;
    r->clock_ns = m->n ? m->meta[from].ts_ns : 0;
}

void vw_replay_toggle(struct vw_replay *r, const struct vw_model *m, size_t from, uint64_t now)
{
    if (!r->active) {
        start(r, m, from);
        r->playing = true;
    } else {
        r->playing = !r->playing;
    }
    r->last_ns = now;
    finish_if_done(r, m);
}

void vw_replay_step(struct vw_replay *r, const struct vw_model *m, size_t from)
{
    if (!r->active) {
        start(r, m, from);
    } else {
        r->limit++;
        if (r->limit <= m->n && m->meta[r->limit - 1].ts_ns > r->clock_ns)
            r->clock_ns = m->meta[r->limit - 1].ts_ns;
    }
    r->playing = false;
    finish_if_done(r, m);
}

bool vw_replay_tick(struct vw_replay *r, const struct vw_model *m, uint64_t now)
{
    if (!r->active || !r->playing) {
        r->last_ns = now;
        return false;
    }
    double dt = (double)(now - r->last_ns) * speeds[r->speed];
    r->last_ns = now;
    r->clock_ns += (uint64_t)dt;
    size_t before = r->limit;
    while (r->limit < m->n && m->meta[r->limit].ts_ns <= r->clock_ns)
        r->limit++;
    bool changed = r->limit != before;
    finish_if_done(r, m);
    return changed || !r->active;
}

size_t vw_replay_visible(const struct vw_replay *r, const struct vw_model *m)
{
    return r->active && r->limit < m->n ? r->limit : m->n;
}
