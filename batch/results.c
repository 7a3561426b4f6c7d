/* results.c: per-task results and the batch's results file.  A task is
 * done when OUT/tasks/ID/result.json parses and has a status: `vigil run`
 * writes it once, at the end of the run, so a run that was killed leaves
 * none (or a cut one, which does not parse).  The results file is made
 * from those files every time, never appended to, so a retried shard
 * cannot leave a task in it twice. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "util/json.h"
#include "util/jsonr.h"
#include "util/sha256.h"

#define MAX_RESULT (64u << 20)
#define RESULT_FILE "result.json"

char *vg_batch_task_dir(const char *out, const struct vg_batch_task *t)
{
    return vg_xasprintf("%s/tasks/%s", out, t->id);
}

static struct vg_jv *load_result(const char *out, const struct vg_batch_task *t)
{
    char *dir = vg_batch_task_dir(out, t);
    char *path = vg_xasprintf("%s/%s", dir, RESULT_FILE);
    free(dir);
    struct vg_err err;
    size_t len;
    char *text = access(path, F_OK) == 0 ? vg_read_file(path, MAX_RESULT, &len, &err) : NULL;
    free(path);
    struct vg_jv *v = text ? vg_jv_parse(text, len, &err) : NULL;
    free(text);
    if (v && !vg_jv_str(v, "status")) {
        vg_jv_free(v);
        v = NULL;
    }
    return v;
}

bool vg_batch_task_done(const char *out, const struct vg_batch_task *t, char **status)
{
    struct vg_jv *v = load_result(out, t);
    if (!v)
        return false;
    if (status)
        *status = vg_xstrdup(vg_jv_str(v, "status"));
    vg_jv_free(v);
    return true;
}

/* What ran: the code itself for a code task; for a command, its argv and
 * every file vigil hashed for it (path and SHA-256), as compact JSON. */
static void what_ran(const struct vg_batch_task *t, const struct vg_jv *result, char hex[65])
{
    if (t->code) {
        vg_sha256_buf(t->code, strlen(t->code), hex);
        return;
    }
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "argv");
    vg_json_arr_begin(&j);
    for (char **a = t->argv; *a; a++)
        vg_json_str(&j, *a);
    vg_json_arr_end(&j);
    vg_json_key(&j, "artifacts");
    const struct vg_jv *arts = vg_jv_get(result, "artifacts");
    if (arts)
        vg_jv_write(arts, &j);
    else
        vg_json_null(&j);
    vg_json_obj_end(&j);
    vg_sha256_buf(b.data, b.len, hex);
    vg_buf_free(&b);
}

/* One line: the result record, then what ran. */
static void record(struct vg_buf *out, const struct vg_batch_task *t, const struct vg_jv *result)
{
    struct vg_json j;
    vg_json_init(&j, out, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "task_id");
    vg_json_str(&j, t->id);
    for (size_t i = 0; i < result->n; i++) {
        if (!strcmp(result->keys[i], "task_id"))
            continue;
        vg_json_key(&j, result->keys[i]);
        vg_jv_write(&result->items[i], &j);
    }
    char hex[65];
    what_ran(t, result, hex);
    vg_json_key(&j, "sha256");
    vg_json_str(&j, hex);
    vg_json_obj_end(&j);
    vg_buf_put(out, "\n", 1);
}

static int write_atomically(const char *path, const struct vg_buf *b, struct vg_err *err)
{
    char *tmp = vg_xasprintf("%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        vg_errf(err, "%s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    bool ok = vg_write_all(fd, b->data, b->len) == 0 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok)
        vg_errf(err, "write %s: %s", tmp, strerror(errno));
    else if (rename(tmp, path) < 0) {
        vg_errf(err, "replace %s: %s", path, strerror(errno));
        ok = false;
    }
    if (!ok)
        unlink(tmp); /* ours: created with O_EXCL above */
    free(tmp);
    return ok ? 0 : -1;
}

int vg_results_write(const char *out, const struct vg_batch_tasks *ts, unsigned shard,
                     unsigned nshards, const char *path, struct vg_err *err)
{
    struct vg_buf b = {0};
    vg_buf_put(&b, "", 0);
    int missing = 0;
    for (unsigned i = 0; i < ts->n; i++) {
        if (nshards && vg_batch_shard(&ts->t[i], nshards) != shard)
            continue;
        struct vg_jv *v = load_result(out, &ts->t[i]);
        if (!v) {
            missing++;
            continue;
        }
        record(&b, &ts->t[i], v);
        vg_jv_free(v);
    }
    int rc = write_atomically(path, &b, err);
    vg_buf_free(&b);
    return rc < 0 ? -1 : missing;
}
