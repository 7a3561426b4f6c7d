/* api.c: submitting a run, the version and the quota (api.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/scratch.h"
#include "serve/api.h"
#include "serve/pool.h"
#include "serve/request.h"
#include "util/json.h"

#define ID_BYTES 10
#define HTTP_OK 200
#define HTTP_CREATED 201
#define HTTP_BAD 400
#define HTTP_TOO_MANY 429
#define HTTP_UNAVAILABLE 503
#define HTTP_INTERNAL 500

void vg_api_error(struct vg_api_resp *a, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "error"), vg_json_str(&j, msg ? msg : "out of memory");
    vg_json_obj_end(&j);
    free(msg);
    a->status = status;
    a->body = b.data;
    a->len = b.len;
}

static void json_answer(struct vg_api_resp *a, int status, struct vg_buf *b)
{
    a->status = status;
    a->body = b->data;
    a->len = b->len;
}

void vg_api_version(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    (void)d, (void)q;
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "api"), vg_json_uint(&j, VG_API_VERSION);
    vg_json_key(&j, "vigil"), vg_json_str(&j, VG_VERSION);
    vg_json_obj_end(&j);
    json_answer(a, HTTP_OK, &b);
}

static void iso_time(struct vg_json *j, int64_t ms)
{
    if (!ms) {
        vg_json_null(j);
        return;
    }
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    char buf[40], out[48];
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, sizeof out, "%s.%03dZ", buf, (int)(ms % 1000));
    vg_json_str(j, out);
}

void vg_api_run_json(struct vg_json *j, const struct vg_srun *r)
{
    bool ended = r->state != VG_SR_QUEUED && r->state != VG_SR_RUNNING;
    vg_json_obj_begin(j);
    vg_json_key(j, "id"), vg_json_str(j, r->id);
    vg_json_key(j, "state"), vg_json_str(j, vg_srun_state_name(r->state));
    vg_json_key(j, "task_id"), vg_json_str(j, r->task_id);
    vg_json_key(j, "submitted"), iso_time(j, r->submitted_ms);
    vg_json_key(j, "started"), iso_time(j, r->started_ms);
    vg_json_key(j, "ended"), iso_time(j, r->ended_ms);
    vg_json_key(j, "exit_code");
    if (ended && r->state != VG_SR_LOST && r->status[0])
        vg_json_int(j, r->exit_code);
    else
        vg_json_null(j);
    vg_json_key(j, "status"), vg_json_str(j, r->status[0] ? r->status : NULL);
    vg_json_key(j, "error"), vg_json_str(j, r->error[0] ? r->error : NULL);
    vg_json_key(j, "cpu_s"), vg_json_double(j, r->cpu_s);
    vg_json_key(j, "wall_s"), vg_json_double(j, r->wall_s);
    vg_json_key(j, "cpu_grant_s"), vg_json_double(j, (double)r->cpu_grant_ms / 1000);
    vg_json_key(j, "wall_grant_s"), vg_json_double(j, (double)r->wall_grant_ms / 1000);
    vg_json_key(j, "pooled"), vg_json_bool(j, r->pooled);
    vg_json_key(j, "deleted"), vg_json_bool(j, r->deleted);
    vg_json_obj_end(j);
}

void vg_api_run_answer(struct vg_api_resp *a, int status, const struct vg_srun *r)
{
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_api_run_json(&j, r);
    json_answer(a, status, &b);
}

static void new_id(char out[32])
{
    uint8_t raw[ID_BYTES];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        /* the kernel's random pool always answers 10 bytes once seeded;
         * without it, time and pid still make ids unique on this machine */
        uint64_t t = vg_now_mono_ns() ^ (uint64_t)getpid() << 40;
        memcpy(raw, &t, sizeof t);
        raw[8] = raw[9] = 0;
    }
    int n = snprintf(out, 32, "r-");
    for (size_t i = 0; i < sizeof raw; i++)
        n += snprintf(out + n, 32 - (size_t)n, "%02x", raw[i]);
}

static void refusal(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a,
                    const struct vg_grant *g)
{
    const char *quota = vg_quota_name((enum vg_quota_kind)g->refused);
    struct vg_buf b = {0};
    struct vg_json j;
    char msg[sizeof g->why + 48];
    if (g->retry_s)
        snprintf(msg, sizeof msg, "%s; retry in %" PRIu64 " s", g->why, g->retry_s);
    else
        snprintf(msg, sizeof msg, "%s", g->why);
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "error"), vg_json_str(&j, msg);
    vg_json_key(&j, "quota"), vg_json_str(&j, quota);
    vg_json_key(&j, "retry_after");
    if (g->retry_s)
        vg_json_uint(&j, g->retry_s);
    else
        vg_json_null(&j);
    vg_json_obj_end(&j);
    json_answer(a, HTTP_TOO_MANY, &b);
    a->retry_after = g->retry_s;
    vg_serve_event(d, VG_SVC_REFUSED, NULL,
                   &(struct vg_svc_event){.uid = q->uid, .quota = quota, .reason = msg,
                                          .retry_after_s = g->retry_s});
}

/* The run's directory, made for it (STATE/runs/UID/ID, 0700, root's). */
static char *make_run_dir(struct vg_serve *d, uid_t uid, const char *id, struct vg_err *err)
{
    char *udir = vg_xasprintf("%s/%u", d->runs_dir, (unsigned)uid);
    if (mkdir(udir, 0700) < 0 && errno != EEXIST) {
        vg_errf(err, "%s: %s", udir, strerror(errno));
        free(udir);
        return NULL;
    }
    char *dir = vg_xasprintf("%s/%s", udir, id);
    free(udir);
    if (mkdir(dir, 0700) < 0) {
        vg_errf(err, "%s: %s", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    return dir;
}

/* Admits the written run under the lock: a quota refusal, or queued. */
static void admit(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a,
                  struct vg_sreq *sq, struct vg_srun *r)
{
    struct vg_suser *u = vg_serve_user(d, q->uid, q->user);
    int64_t now_ms = (int64_t)(vg_now_wall_ns() / 1000000);
    struct vg_grant g;
    struct vg_err err;
    vg_usage_prune(&u->quota, &u->usage, now_ms);
    if (d->stopping) {
        vg_api_error(a, HTTP_UNAVAILABLE, "the daemon is stopping");
    } else if (!vg_quota_admit(&u->quota, &u->usage, now_ms, vg_sreq_want_cpu_ms(sq),
                               vg_sreq_want_wall_ms(sq), &g)) {
        refusal(d, q, a, &g);
    } else {
        r->submitted_ms = now_ms;
        r->cpu_grant_ms = g.cpu_ms;
        r->wall_grant_ms = g.wall_ms;
        r->cmd = vg_sreq_command(sq, d->o->vigil, r->dir, r->id, g.cpu_ms, g.wall_ms);
        r->pool_fit = vg_pool_fits(d, sq, g.cpu_ms, g.wall_ms);
        vg_usage_charge(&u->usage, r->id, now_ms, &g);
        if (vg_suser_save(d, u, true, &err) < 0 || vg_srun_save(d, r, true, &err) < 0) {
            vg_usage_settle(&u->usage, r->id, 0, 0);
            vg_api_error(a, HTTP_INTERNAL, "cannot record the run: %s", err.msg);
            return;
        }
        vg_serve_add_run(d, r);
        vg_serve_event(d, VG_SVC_ACCEPTED, r, NULL);
        vg_sched_enqueue(d, r);
        vg_serve_kick(d);
        vg_api_run_answer(a, HTTP_CREATED, r);
        return;
    }
    vg_scratch_remove(r->dir);
    vg_srun_free(r);
}

void vg_api_submit(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    struct vg_sreq sq;
    struct vg_err err;
    if (vg_sreq_parse(&sq, q->body, q->body_len, &err) < 0) {
        vg_api_error(a, HTTP_BAD, "%s", err.msg);
        return;
    }
    /* the files are written before the lock is taken: a big request
     * does not hold up other users' */
    struct vg_srun *r = vg_xcalloc(1, sizeof *r);
    new_id(r->id);
    r->uid = q->uid;
    r->task_id = sq.task_id ? vg_xstrdup(sq.task_id) : NULL;
    r->dir = make_run_dir(d, q->uid, r->id, &err);
    if (!r->dir || vg_sreq_write(&sq, r->dir, geteuid(), &err) < 0) {
        vg_api_error(a, r->dir ? HTTP_BAD : HTTP_INTERNAL, "%s", err.msg);
        if (r->dir)
            vg_scratch_remove(r->dir);
        vg_srun_free(r);
        vg_sreq_free(&sq);
        return;
    }
    pthread_mutex_lock(&d->lock);
    admit(d, q, a, &sq, r);
    pthread_mutex_unlock(&d->lock);
    vg_sreq_free(&sq);
}

static void quota_entry(struct vg_json *j, const struct vg_suser *u, enum vg_quota_kind k,
                        int64_t now_ms)
{
    char lim[48];
    vg_quota_format(&u->quota, k, lim, sizeof lim);
    vg_json_key(j, vg_quota_name(k));
    vg_json_obj_begin(j);
    vg_json_key(j, "limit"), vg_json_str(j, lim);
    vg_json_key(j, "max"), vg_json_uint(j, u->quota.max[k]);
    vg_json_key(j, "used"), vg_json_uint(j, vg_usage_used(&u->quota, &u->usage, k, now_ms));
    vg_json_obj_end(j);
}

void vg_api_quota(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    struct vg_suser *u = vg_serve_user(d, q->uid, q->user);
    int64_t now_ms = (int64_t)(vg_now_wall_ns() / 1000000);
    vg_usage_prune(&u->quota, &u->usage, now_ms);
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "user"), vg_json_str(&j, u->name);
    vg_json_key(&j, "uid"), vg_json_uint(&j, u->uid);
    vg_json_key(&j, "quotas");
    vg_json_obj_begin(&j);
    for (int k = 0; k < VG_Q_COUNT; k++)
        quota_entry(&j, u, (enum vg_quota_kind)k, now_ms);
    vg_json_obj_end(&j);
    vg_json_obj_end(&j);
    json_answer(a, HTTP_OK, &b);
}
