/* api_runs.c: a user's runs: list, look, wait, fetch, cancel, delete
 * (api.h).  Every handler here runs under the daemon's lock, and finds a
 * run only among the caller's own: another user's id is a 404, as an id
 * that does not exist. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "launcher/scratch.h"
#include "serve/api.h"
#include "serve/request.h"
#include "util/escape.h"
#include "util/json.h"

#define HTTP_OK 200
#define HTTP_FORBIDDEN 403
#define HTTP_NOT_FOUND 404
#define HTTP_CONFLICT 409
#define HTTP_GONE 410
#define HTTP_BAD 400

void vg_api_run_json(struct vg_json *j, const struct vg_srun *r);
void vg_api_run_answer(struct vg_api_resp *a, int status, const struct vg_srun *r);

static bool ended(const struct vg_srun *r)
{
    return r->state != VG_SR_QUEUED && r->state != VG_SR_RUNNING;
}

static struct vg_srun *own_run(struct vg_serve *d, const struct vg_api_req *q,
                               struct vg_api_resp *a)
{
    struct vg_srun *r = q->id ? vg_serve_find_run(d, q->uid, q->id) : NULL;
    if (!r)
        vg_api_error(a, HTTP_NOT_FOUND, "no run %s", q->id ? q->id : "");
    return r;
}

void vg_api_list(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "runs");
    vg_json_arr_begin(&j);
    for (size_t i = d->nruns; i-- > 0;)
        if (d->runs[i]->uid == q->uid)
            vg_api_run_json(&j, d->runs[i]);
    vg_json_arr_end(&j);
    vg_json_obj_end(&j);
    a->status = HTTP_OK;
    a->body = b.data;
    a->len = b.len;
}

void vg_api_get(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    struct vg_srun *r = own_run(d, q, a);
    if (!r)
        return;
    uint64_t wait_s = 0;
    if (q->wait && (!vg_parse_u64(q->wait, &wait_s) || wait_s > VG_API_MAX_WAIT_S)) {
        vg_api_error(a, HTTP_BAD, "wait: a number of seconds, at most %d", VG_API_MAX_WAIT_S);
        return;
    }
    if (wait_s && !ended(r) && !q->resumed) {
        a->wait_on = r;
        a->wait_deadline_ms = (int64_t)(vg_now_mono_ns() / 1000000) + (int64_t)wait_s * 1000;
        return;
    }
    vg_api_run_answer(a, HTTP_OK, r);
}

/* A file of the run's directory; the run's own files are the daemon's,
 * made O_EXCL in a directory only root can enter. */
static void send_file(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a,
                      const char *name, const char *type, bool after_end)
{
    struct vg_srun *r = own_run(d, q, a);
    if (!r)
        return;
    if (r->deleted) {
        vg_api_error(a, HTTP_GONE, "run %s: deleted", r->id);
        return;
    }
    if (after_end && !ended(r)) {
        vg_api_error(a, HTTP_CONFLICT, "run %s: %s", r->id, vg_srun_state_name(r->state));
        return;
    }
    char *p = vg_xasprintf("%s/%s", r->dir, name);
    int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    free(p);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        vg_api_error(a, HTTP_NOT_FOUND, "run %s: no %s (yet)", r->id, name);
        return;
    }
    a->status = HTTP_OK;
    a->fd = fd;
    a->fd_size = (uint64_t)st.st_size;
    a->type = type;
}

void vg_api_result(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    send_file(d, q, a, VG_SREQ_RESULT, "application/json", true);
}

void vg_api_log(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    send_file(d, q, a, VG_SREQ_LOG, "application/x-msgpack", false);
}

void vg_api_stdout(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    send_file(d, q, a, VG_SREQ_STDOUT, "application/octet-stream", false);
}

void vg_api_stderr(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    send_file(d, q, a, VG_SREQ_STDERR, "application/octet-stream", false);
}

/* A file the candidate left: its tree is the candidate's, so it is opened
 * beneath the work directory without following any link (openat2), only
 * a regular file, only one the candidate or the request made (a hard link
 * to anything else is refused), after the run has ended. */
void vg_api_file(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    struct vg_srun *r = own_run(d, q, a);
    if (!r)
        return;
    if (!ended(r) || r->deleted) {
        vg_api_error(a, r->deleted ? HTTP_GONE : HTTP_CONFLICT, "run %s: %s", r->id,
                     r->deleted ? "deleted" : vg_srun_state_name(r->state));
        return;
    }
    char *wdir = vg_xasprintf("%s/%s", r->dir, VG_SREQ_WORK);
    int dfd = open(wdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    free(wdir);
    struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                      RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
    int fd = dfd < 0 ? -1 : (int)syscall(VG_NR_openat2, dfd, q->rest, &how, sizeof how);
    int saved = errno;
    if (dfd >= 0)
        close(dfd);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (fd >= 0)
            close(fd);
        char *shown = vg_esc_dup(q->rest); /* the asker's bytes: one line, no escapes */
        vg_api_error(a, HTTP_NOT_FOUND, "run %s: files/%s: %s", r->id, shown,
                     fd < 0 ? strerror(saved) : "cannot stat");
        free(shown);
        return;
    }
    uid_t mine = r->host_uid ? r->host_uid : geteuid();
    if (!S_ISREG(st.st_mode) || (st.st_uid != mine && st.st_uid != geteuid())) {
        close(fd);
        char *shown = vg_esc_dup(q->rest);
        vg_api_error(a, HTTP_FORBIDDEN, "run %s: files/%s: not a regular file of the run's own",
                     r->id, shown);
        free(shown);
        return;
    }
    a->status = HTTP_OK;
    a->fd = fd;
    a->fd_size = (uint64_t)st.st_size;
    a->type = "application/octet-stream";
}

void vg_api_cancel(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    struct vg_srun *r = own_run(d, q, a);
    if (!r)
        return;
    if (ended(r)) {
        vg_api_error(a, HTTP_CONFLICT, "run %s: already %s", r->id, vg_srun_state_name(r->state));
        return;
    }
    snprintf(r->error, sizeof r->error, "cancelled by its user");
    vg_exec_cancel(d, r);
    vg_api_run_answer(a, HTTP_OK, r);
}

void vg_api_delete(struct vg_serve *d, const struct vg_api_req *q, struct vg_api_resp *a)
{
    struct vg_srun *r = own_run(d, q, a);
    if (!r)
        return;
    if (!ended(r)) {
        vg_api_error(a, HTTP_CONFLICT, "run %s: %s: cancel it first", r->id,
                     vg_srun_state_name(r->state));
        return;
    }
    if (!r->deleted) {
        struct vg_suser *u = vg_serve_user(d, r->uid, NULL);
        uint64_t bytes = vg_srun_stored_bytes(r);
        /* everything but the record, which the quotas' windows still need */
        char *work = vg_xasprintf("%s/%s", r->dir, VG_SREQ_WORK);
        static const char *const files[] = {VG_SREQ_LOG, VG_SREQ_RESULT, VG_SREQ_STDOUT,
                                            VG_SREQ_STDERR, VG_SREQ_STDIN, VG_SREQ_POLICY};
        vg_scratch_remove(work);
        free(work);
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
            char *p = vg_xasprintf("%s/%s", r->dir, files[i]);
            unlink(p);
            free(p);
        }
        r->deleted = true;
        u->usage.stored = u->usage.stored > bytes ? u->usage.stored - bytes : 0;
        u->usage.stored += vg_srun_stored_bytes(r);
        struct vg_err err;
        if (vg_srun_save(d, r, false, &err) < 0)
            vg_api_error(a, 500, "%s", err.msg);
        vg_serve_event(d, VG_SVC_DELETED, r, NULL);
    }
    if (!a->body)
        vg_api_run_answer(a, HTTP_OK, r);
}
