/* sched.c: the fair queue.  Each user has a FIFO of accepted runs; a free
 * worker takes the head of the next user's queue in turn (round robin over
 * users, not runs), so a user with a thousand queued runs delays another's
 * next run by at most one run per user ahead of it. */
#include <stdio.h>

#include "serve/state.h"
#include "util/escape.h"

static struct vg_suser *owner(struct vg_serve *d, const struct vg_srun *r)
{
    return vg_serve_user(d, r->uid, NULL);
}

void vg_sched_enqueue(struct vg_serve *d, struct vg_srun *r)
{
    struct vg_suser *u = owner(d, r);
    r->qnext = NULL;
    if (u->qtail)
        u->qtail->qnext = r;
    else
        u->qhead = r;
    u->qtail = r;
}

bool vg_sched_unqueue(struct vg_serve *d, struct vg_srun *r)
{
    struct vg_suser *u = owner(d, r);
    struct vg_srun *prev = NULL;
    for (struct vg_srun *q = u->qhead; q; prev = q, q = q->qnext) {
        if (q != r)
            continue;
        if (prev)
            prev->qnext = q->qnext;
        else
            u->qhead = q->qnext;
        if (u->qtail == q)
            u->qtail = prev;
        q->qnext = NULL;
        return true;
    }
    return false;
}

/* The next user in turn with a run waiting, or NULL. */
static struct vg_suser *next_user(struct vg_serve *d)
{
    for (size_t k = 0; k < d->nusers; k++) {
        size_t i = (d->rr + k) % d->nusers;
        if (d->users[i]->qhead) {
            d->rr = (i + 1) % d->nusers;
            return d->users[i];
        }
    }
    return NULL;
}

uid_t vg_sched_take_uid(struct vg_serve *d)
{
    return vg_uid_range_take(&d->uids);
}

void vg_sched_give_uid(struct vg_serve *d, uid_t uid)
{
    vg_uid_range_give(&d->uids, uid);
}

void vg_sched_run_ready(struct vg_serve *d)
{
    while (!d->stopping && d->running < d->workers) {
        uid_t host = vg_sched_take_uid(d);
        if (host == VG_UIDS_NONE)
            return; /* every uid of the range is running: wait for one */
        struct vg_suser *u = next_user(d);
        if (!u) {
            vg_sched_give_uid(d, host);
            return;
        }
        struct vg_srun *r = u->qhead;
        vg_sched_unqueue(d, r);
        r->host_uid = host;
        struct vg_err err;
        if (vg_exec_start(d, r, &err) == 0)
            continue;
        vg_sched_give_uid(d, host);
        r->host_uid = 0;
        /* it could not start (fork failed): it ends here, with the
         * reason, rather than waiting forever */
        vg_say(stderr, "vigil serve: run %s: %s", r->id, err.msg);
        snprintf(r->error, sizeof r->error, "%s", err.msg);
        snprintf(r->status, sizeof r->status, "error");
        r->exit_code = VG_SERVE_EXIT_VIGIL;
        vg_serve_ended(d, r, VG_SR_FINISHED);
    }
}
