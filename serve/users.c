/* users.c: the daemon's users and runs in memory (state.h). */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "serve/request.h"
#include "serve/state.h"
#include "util/escape.h"

static const char *const state_names[VG_SR_NSTATES] = {
    [VG_SR_QUEUED] = "queued",     [VG_SR_RUNNING] = "running", [VG_SR_FINISHED] = "finished",
    [VG_SR_CANCELLED] = "cancelled", [VG_SR_LOST] = "lost",
};

const char *vg_srun_state_name(enum vg_srun_state s)
{
    return s < VG_SR_NSTATES ? state_names[s] : "?";
}

/* A local user without a line in the config is named as the system
 * knows it, else by number. */
static char *local_name(uid_t uid)
{
    struct passwd pw, *found = NULL;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found)
        return vg_xstrdup(found->pw_name);
    return vg_xasprintf("uid %u", (unsigned)uid);
}

struct vg_suser *vg_serve_user(struct vg_serve *d, uid_t uid, const char *name)
{
    for (size_t i = 0; i < d->nusers; i++)
        if (d->users[i]->uid == uid)
            return d->users[i];
    struct vg_suser *u = vg_xcalloc(1, sizeof *u);
    const struct vg_serve_user *cu = vg_serve_conf_by_uid(&d->conf, uid);
    u->uid = uid;
    u->name = cu ? vg_xstrdup(cu->name) : name ? vg_xstrdup(name) : local_name(uid);
    u->quota = cu ? cu->quota : d->conf.defaults;
    d->users = vg_xrealloc(d->users, (d->nusers + 1) * sizeof *d->users);
    d->users[d->nusers++] = u;
    return u;
}

struct vg_srun *vg_serve_find_run(struct vg_serve *d, uid_t uid, const char *id)
{
    for (size_t i = d->nruns; i-- > 0;)
        if (d->runs[i]->uid == uid && !strcmp(d->runs[i]->id, id))
            return d->runs[i];
    return NULL;
}

void vg_serve_add_run(struct vg_serve *d, struct vg_srun *r)
{
    d->runs = vg_xrealloc(d->runs, (d->nruns + 1) * sizeof *d->runs);
    d->runs[d->nruns++] = r;
}

void vg_srun_free(struct vg_srun *r)
{
    if (!r)
        return;
    free(r->dir);
    free(r->box);
    free(r->task_id);
    vg_argv_free(r->cmd);
    while (r->waiters) {
        struct vg_swaiter *w = r->waiters;
        r->waiters = w->next;
        free(w);
    }
    free(r);
}

void vg_serve_event(struct vg_serve *d, enum vg_svc_kind kind, const struct vg_srun *r,
                    struct vg_svc_event *more)
{
    struct vg_svc_event e = more ? *more : (struct vg_svc_event){0};
    e.kind = kind;
    e.uid = -1;
    if (r) {
        e.uid = r->uid;
        e.run = r->id;
        for (size_t i = 0; i < d->nusers && !e.user; i++)
            if (d->users[i]->uid == r->uid)
                e.user = d->users[i]->name;
    } else if (more) {
        e.uid = more->uid;
    }
    struct vg_err err;
    /* The audit must hold: a daemon that cannot record stops taking runs
     * (the main loop sees the log dead and shuts down). */
    if (d->log && vg_svclog_write(d->log, &e, &err) < 0 && !d->stopping) {
        vg_say(stderr, "vigil serve: the service log failed: %s; stopping", err.msg);
        d->stopping = true;
        vg_serve_kick(d);
    }
}

void vg_serve_kick(struct vg_serve *d)
{
    uint64_t one = 1;
    if (write(d->kick_fd, &one, sizeof one) < 0) {
        /* the counter is full: the loop has been woken already */
    }
}
