/* persist.c: what the daemon keeps on disk, so that a restart (even after
 * SIGKILL) knows every accepted run and every user's charges:
 *   STATE/runs/UID/ID/run.json   the run's record (state.h's vg_srun)
 *   STATE/users/UID/usage.json   the user's charges still in a window
 * Each is rewritten whole through a temporary file and rename(2), so it is
 * always the old or the new one, never half.  Charges are saved before the
 * run's record: a daemon killed between the two has charged a run that
 * does not exist, which errs on the side of the quota. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/scratch.h"
#include "serve/boxdir.h"
#include "serve/request.h"
#include "serve/state.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/jsonr.h"
#include "util/treesize.h"

#define RECORD_MAX (4u << 20)
#define TMP_SUFFIX ".tmp"

/* Replaces path with text: written, renamed over it (whole, whatever kills
 * the daemon), and with durable fsync'd first, so that a crash of the
 * machine keeps it too.  Only an acceptance is durable: the 201 a client
 * got is a promise; a later state lost to a crash is only ever a run
 * reported lost or a charge kept as reserved, both on the quota's side
 * (an fsync under load took 70 ms here, with the daemon's lock held). */
static int replace_file(const char *path, const struct vg_buf *text, bool durable,
                        struct vg_err *err)
{
    char *tmp = vg_xasprintf("%s%s", path, TMP_SUFFIX);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    int rc = fd < 0 || vg_write_all(fd, text->data, text->len) < 0 || (durable && fsync(fd) < 0)
                 ? -1
                 : 0;
    if (fd >= 0 && close(fd) < 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -1;
    if (rc < 0) {
        vg_errf(err, "%s: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

int vg_srun_save(const struct vg_serve *d, const struct vg_srun *r, bool durable,
                 struct vg_err *err)
{
    (void)d;
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "id"), vg_json_str(&j, r->id);
    vg_json_key(&j, "uid"), vg_json_uint(&j, r->uid);
    vg_json_key(&j, "state"), vg_json_str(&j, vg_srun_state_name(r->state));
    vg_json_key(&j, "task_id"), vg_json_str(&j, r->task_id);
    vg_json_key(&j, "submitted_ms"), vg_json_int(&j, r->submitted_ms);
    vg_json_key(&j, "started_ms"), vg_json_int(&j, r->started_ms);
    vg_json_key(&j, "ended_ms"), vg_json_int(&j, r->ended_ms);
    vg_json_key(&j, "cpu_grant_ms"), vg_json_uint(&j, r->cpu_grant_ms);
    vg_json_key(&j, "wall_grant_ms"), vg_json_uint(&j, r->wall_grant_ms);
    vg_json_key(&j, "exit_code"), vg_json_int(&j, r->exit_code);
    vg_json_key(&j, "status"), vg_json_str(&j, r->status);
    vg_json_key(&j, "error"), vg_json_str(&j, r->error);
    vg_json_key(&j, "cpu_s"), vg_json_double(&j, r->cpu_s);
    vg_json_key(&j, "wall_s"), vg_json_double(&j, r->wall_s);
    vg_json_key(&j, "pooled"), vg_json_bool(&j, r->pooled);
    vg_json_key(&j, "deleted"), vg_json_bool(&j, r->deleted);
    vg_json_key(&j, "box"), vg_json_str(&j, r->box);
    vg_json_key(&j, "host_uid"), vg_json_uint(&j, r->host_uid);
    vg_json_key(&j, "cmd");
    vg_json_arr_begin(&j);
    for (char **a = r->cmd; a && *a; a++)
        vg_json_str(&j, *a);
    vg_json_arr_end(&j);
    vg_json_obj_end(&j);
    char *path = vg_xasprintf("%s/%s", r->dir, VG_SREQ_RUN);
    int rc = replace_file(path, &b, durable, err);
    free(path);
    vg_buf_free(&b);
    return rc;
}

int vg_suser_save(const struct vg_serve *d, const struct vg_suser *u, bool durable,
                  struct vg_err *err)
{
    char *dir = vg_xasprintf("%s/%u", d->users_dir, (unsigned)u->uid);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        vg_errf(err, "%s: %s", dir, strerror(errno));
        free(dir);
        return -1;
    }
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "uid"), vg_json_uint(&j, u->uid);
    vg_json_key(&j, "charges");
    vg_json_arr_begin(&j);
    for (size_t i = 0; i < u->usage.n; i++) {
        const struct vg_charge *c = &u->usage.c[i];
        vg_json_obj_begin(&j);
        vg_json_key(&j, "id"), vg_json_str(&j, c->id);
        vg_json_key(&j, "t_ms"), vg_json_int(&j, c->t_ms);
        vg_json_key(&j, "cpu_ms"), vg_json_uint(&j, c->cpu_ms);
        vg_json_key(&j, "wall_ms"), vg_json_uint(&j, c->wall_ms);
        vg_json_obj_end(&j);
    }
    vg_json_arr_end(&j);
    vg_json_obj_end(&j);
    char *path = vg_xasprintf("%s/usage.json", dir);
    int rc = replace_file(path, &b, durable, err);
    free(path);
    free(dir);
    vg_buf_free(&b);
    return rc;
}

static struct vg_jv *read_json(const char *path, struct vg_err *err)
{
    size_t len;
    char *text = vg_read_file(path, RECORD_MAX, &len, err);
    if (!text)
        return NULL;
    struct vg_jv *v = vg_jv_parse(text, len, err);
    free(text);
    if (v && v->type != VG_JOBJ) {
        vg_jv_free(v);
        vg_errf(err, "%s: not an object", path);
        return NULL;
    }
    return v;
}

static int64_t num(const struct vg_jv *o, const char *key)
{
    const struct vg_jv *v = vg_jv_get(o, key);
    return v && v->type == VG_JNUM ? strtoll(v->s, NULL, 10) : 0;
}

static double dnum(const struct vg_jv *o, const char *key)
{
    const struct vg_jv *v = vg_jv_get(o, key);
    return v && v->type == VG_JNUM ? strtod(v->s, NULL) : 0;
}

static bool flag(const struct vg_jv *o, const char *key)
{
    const struct vg_jv *v = vg_jv_get(o, key);
    return v && v->type == VG_JBOOL && v->b;
}

/* A damaged record is not read as nothing: a lost charge would let its
 * user past the quota, a lost run would vanish.  The daemon does not
 * start; the message says which file. */
static int damaged(struct vg_err *err, const char *path, const struct vg_err *why)
{
    vg_errf(err, "%s: the daemon's record is damaged (%s); move it away to start without it",
            path, why->msg);
    return -1;
}

static int load_charges(struct vg_serve *d, struct vg_suser *u, struct vg_err *err)
{
    char *path = vg_xasprintf("%s/%u/usage.json", d->users_dir, (unsigned)u->uid);
    struct vg_err why;
    struct vg_jv *v = NULL;
    if (access(path, F_OK) == 0 && !(v = read_json(path, &why))) {
        int rc = damaged(err, path, &why);
        free(path);
        return rc;
    }
    const struct vg_jv *c = v ? vg_jv_get(v, "charges") : NULL;
    if (v && (!c || c->type != VG_JARR)) {
        vg_jv_free(v);
        snprintf(why.msg, sizeof why.msg, "no charges");
        int rc = damaged(err, path, &why);
        free(path);
        return rc;
    }
    for (size_t i = 0; c && c->type == VG_JARR && i < c->n; i++) {
        const char *id = vg_jv_str(&c->items[i], "id");
        struct vg_grant g = {.cpu_ms = (uint64_t)num(&c->items[i], "cpu_ms"),
                             .wall_ms = (uint64_t)num(&c->items[i], "wall_ms")};
        vg_usage_charge(&u->usage, id ? id : "?", num(&c->items[i], "t_ms"), &g);
    }
    u->usage.active = 0; /* counted again from the runs */
    vg_jv_free(v);
    free(path);
    return 0;
}

static enum vg_srun_state state_from(const char *s)
{
    for (int k = 0; k < VG_SR_NSTATES; k++)
        if (s && !strcmp(s, vg_srun_state_name((enum vg_srun_state)k)))
            return (enum vg_srun_state)k;
    return VG_SR_LOST;
}

static char **cmd_from(const struct vg_jv *o)
{
    const struct vg_jv *a = vg_jv_get(o, "cmd");
    size_t n = a && a->type == VG_JARR ? a->n : 0;
    char **v = vg_xcalloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = vg_xstrdup(a->items[i].type == VG_JSTR ? a->items[i].s : "");
    return v;
}

static struct vg_srun *load_run(const struct vg_serve *d, const char *dir, struct vg_err *err)
{
    char *path = vg_xasprintf("%s/%s", dir, VG_SREQ_RUN);
    struct vg_err why;
    struct vg_jv *o = read_json(path, &why);
    if (o && (!vg_jv_str(o, "id") || !vg_jv_str(o, "state") || !vg_jv_get(o, "cmd"))) {
        vg_jv_free(o);
        o = NULL;
        snprintf(why.msg, sizeof why.msg, "no id, state or cmd");
    }
    if (!o)
        damaged(err, path, &why);
    free(path);
    if (!o)
        return NULL;
    struct vg_srun *r = vg_xcalloc(1, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", vg_jv_str(o, "id") ? vg_jv_str(o, "id") : "");
    r->uid = (uid_t)num(o, "uid");
    r->dir = vg_xstrdup(dir);
    r->task_id = vg_jv_str(o, "task_id") ? vg_xstrdup(vg_jv_str(o, "task_id")) : NULL;
    r->state = state_from(vg_jv_str(o, "state"));
    r->submitted_ms = num(o, "submitted_ms");
    r->started_ms = num(o, "started_ms");
    r->ended_ms = num(o, "ended_ms");
    r->cpu_grant_ms = (uint64_t)num(o, "cpu_grant_ms");
    r->wall_grant_ms = (uint64_t)num(o, "wall_grant_ms");
    r->exit_code = (int)num(o, "exit_code");
    snprintf(r->status, sizeof r->status, "%s", vg_jv_str(o, "status") ? vg_jv_str(o, "status") : "");
    snprintf(r->error, sizeof r->error, "%s", vg_jv_str(o, "error") ? vg_jv_str(o, "error") : "");
    r->cpu_s = dnum(o, "cpu_s");
    r->wall_s = dnum(o, "wall_s");
    r->pooled = flag(o, "pooled");
    r->deleted = flag(o, "deleted");
    r->host_uid = (uid_t)num(o, "host_uid"); /* whose the files it left are */
    /* only a box of this daemon's pool directory is taken back */
    const char *box = vg_jv_str(o, "box");
    char *pool = vg_xasprintf("%s/pool/s-", d->o->state);
    if (box && !strncmp(box, pool, strlen(pool)) && !strchr(box + strlen(pool), '/'))
        r->box = vg_xstrdup(box);
    free(pool);
    r->cmd = cmd_from(o);
    vg_jv_free(o);
    return r;
}

/* A tree too deep to walk counts as this much: its user's stored quota
 * is full until the run is deleted (DELETE removes any depth).  A walk
 * stops there too. */
#define UNMEASURED_BYTES (UINT64_C(1) << 50)
#define BLOCK_UNIT 512   /* st_blocks counts 512-byte units */

uint64_t vg_srun_stored_bytes(const struct vg_srun *r)
{
    struct stat st;
    int fd = r->deleted ? -1 : open(r->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return 0;
    }
    /* a tree that cannot be measured is not free; nor is walking past the
     * quota's worth of it */
    struct vg_tree_size w;
    vg_tree_size(fd, UNMEASURED_BYTES, &w);
    return (uint64_t)st.st_blocks * BLOCK_UNIT + (w.blind ? UNMEASURED_BYTES : w.bytes);
}

/* A run the last daemon left: queued runs queue again; a running one is
 * lost (its vigil run died with the daemon), unless its result is there. */
static void recover_run(struct vg_serve *d, struct vg_srun *r, int64_t now_ms)
{
    struct vg_suser *u = vg_serve_user(d, r->uid, NULL);
    u->usage.stored += vg_srun_stored_bytes(r);
    if (r->state == VG_SR_QUEUED) {
        u->usage.active++;
        vg_sched_enqueue(d, r);
        return;
    }
    if (r->box) { /* its candidate's work, from the box it ran in */
        vg_boxdir_return(r->box, r->dir);
        free(r->box);
        r->box = NULL;
    }
    if (r->state != VG_SR_RUNNING)
        return;
    r->state = VG_SR_LOST;
    r->ended_ms = now_ms;
    snprintf(r->error, sizeof r->error, "the daemon stopped while the run ran");
    struct vg_err err;
    if (vg_srun_save(d, r, false, &err) < 0)
        vg_say(stderr, "vigil serve: %s", err.msg);
    vg_serve_event(d, VG_SVC_LOST, r, &(struct vg_svc_event){.reason = r->error});
}

static int recover_user_dir(struct vg_serve *d, const char *udir, struct vg_err *err)
{
    DIR *dd = opendir(udir);
    if (!dd)
        return 0;
    for (struct dirent *e; (e = readdir(dd));) {
        if (e->d_name[0] == '.')
            continue;
        char *dir = vg_xasprintf("%s/%s", udir, e->d_name);
        char *rec = vg_xasprintf("%s/%s", dir, VG_SREQ_RUN);
        int rc = 0;
        if (access(rec, F_OK) < 0) {
            /* made by a daemon killed before it wrote the record: ours,
             * and never accepted (its charge, if any, stays) */
            vg_scratch_remove(dir);
        } else {
            struct vg_srun *r = load_run(d, dir, err);
            if (r)
                vg_serve_add_run(d, r);
            else
                rc = -1;
        }
        free(rec);
        free(dir);
        if (rc < 0) {
            closedir(dd);
            return -1;
        }
    }
    closedir(dd);
    return 0;
}

static int by_submitted(const void *a, const void *b)
{
    const struct vg_srun *x = *(struct vg_srun *const *)a, *y = *(struct vg_srun *const *)b;
    return x->submitted_ms < y->submitted_ms ? -1 : x->submitted_ms > y->submitted_ms;
}

/* Everything is read, and found whole, before anything is acted on. */
int vg_serve_recover(struct vg_serve *d, struct vg_err *err)
{
    int64_t now_ms = (int64_t)(vg_now_wall_ns() / 1000000);
    DIR *dd = opendir(d->runs_dir);
    int rc = 0;
    for (struct dirent *e; rc == 0 && dd && (e = readdir(dd));) {
        if (e->d_name[0] == '.')
            continue;
        char *udir = vg_xasprintf("%s/%s", d->runs_dir, e->d_name);
        rc = recover_user_dir(d, udir, err);
        free(udir);
    }
    if (dd)
        closedir(dd);
    if (rc < 0)
        return -1;
    /* charges: from each known user's file, and users with charges only */
    DIR *ud = opendir(d->users_dir);
    if (ud) {
        for (struct dirent *e; (e = readdir(ud));) {
            uint64_t uid;
            if (vg_parse_u64(e->d_name, &uid))
                vg_serve_user(d, (uid_t)uid, NULL);
        }
        closedir(ud);
    }
    for (size_t i = 0; i < d->nruns; i++)
        vg_serve_user(d, d->runs[i]->uid, NULL);
    for (size_t i = 0; i < d->nusers; i++)
        if (load_charges(d, d->users[i], err) < 0)
            return -1;
    if (d->nruns)
        qsort(d->runs, d->nruns, sizeof *d->runs, by_submitted);
    for (size_t i = 0; i < d->nruns; i++)
        recover_run(d, d->runs[i], now_ms);
    return 0;
}
