/* results.c: per-task results and the batch's results file.  A task has a
 * result when OUT/tasks/ID/result.json parses and has a status: `vigil run`
 * writes it once, at the end of the run, so a run that was killed leaves
 * none (or a cut one, which does not parse).  The result is the task's
 * only beside the task's own key in task.json (written before the run):
 * a task whose code, inputs or policy changed has no result.  The results file is made
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

#define MAX_RESULT (64u << 20)
#define RESULT_FILE "result.json"
#define KEY_FILE "task.json"   /* the key the attempt in the directory was made for */

char *vg_batch_task_dir(const char *out, const struct vg_batch_task *t)
{
    return vg_xasprintf("%s/tasks/%s", out, t->id);
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

static struct vg_jv *load_json(const char *out, const struct vg_batch_task *t, const char *name)
{
    char *dir = vg_batch_task_dir(out, t);
    char *path = vg_xasprintf("%s/%s", dir, name);
    free(dir);
    struct vg_err err;
    size_t len;
    char *text = access(path, F_OK) == 0 ? vg_read_file(path, MAX_RESULT, &len, &err) : NULL;
    free(path);
    struct vg_jv *v = text ? vg_jv_parse(text, len, &err) : NULL;
    free(text);
    return v;
}

static struct vg_jv *load_result(const char *out, const struct vg_batch_task *t)
{
    struct vg_jv *v = load_json(out, t, RESULT_FILE);
    if (v && !vg_jv_str(v, "status")) {
        vg_jv_free(v);
        v = NULL;
    }
    return v;
}

/* Was the attempt in the task's directory made for the task's key? */
static bool key_matches(const char *out, const struct vg_batch_task *t)
{
    struct vg_jv *v = load_json(out, t, KEY_FILE);
    const char *key = vg_jv_str(v, "key");
    bool same = key && t->key[0] && !strcmp(key, t->key);
    vg_jv_free(v);
    return same;
}

/* The task's result (NULL: none) and what state it is in. */
static struct vg_jv *result_of(const char *out, const struct vg_batch_task *t,
                               enum vg_task_state *state)
{
    struct vg_jv *v = load_result(out, t);
    *state = !v                             ? VG_TASK_NONE
             : !key_matches(out, t)         ? VG_TASK_STALE
             : !strcmp(vg_jv_str(v, "status"), "error") ? VG_TASK_ERROR
                                            : VG_TASK_DONE;
    return v;
}

enum vg_task_state vg_batch_task_state(const char *out, const struct vg_batch_task *t,
                                       char **status)
{
    enum vg_task_state state;
    struct vg_jv *v = result_of(out, t, &state);
    if (v && status)
        *status = vg_xstrdup(vg_jv_str(v, "status"));
    vg_jv_free(v);
    return state;
}

int vg_batch_task_write_key(const char *out, const struct vg_batch_task *t, struct vg_err *err)
{
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "task_id");
    vg_json_str(&j, t->id);
    vg_batch_key_members(t, &j);
    vg_json_obj_end(&j);
    vg_buf_put(&b, "\n", 1);
    char *dir = vg_batch_task_dir(out, t);
    char *path = vg_xasprintf("%s/%s", dir, KEY_FILE);
    int rc = write_atomically(path, &b, err);
    free(path);
    free(dir);
    vg_buf_free(&b);
    return rc;
}

/* One line: the task's id and labels (from the task file as it is now:
 * a label is not in the key, so a relabelled task is not run again), the
 * result record, then the key it was made for and the manifest of the
 * files it read. */
static void record(struct vg_buf *out, const struct vg_batch_task *t, const struct vg_jv *result)
{
    struct vg_json j;
    vg_json_init(&j, out, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "task_id");
    vg_json_str(&j, t->id);
    vg_json_key(&j, "labels");
    vg_json_obj_begin(&j);
    for (unsigned i = 0; i < t->nlabels; i++) {
        vg_json_key(&j, t->labels[i].name);
        vg_json_str(&j, t->labels[i].value);
    }
    vg_json_obj_end(&j);
    for (size_t i = 0; i < result->n; i++) {
        if (!strcmp(result->keys[i], "task_id") || !strcmp(result->keys[i], "labels"))
            continue;
        vg_json_key(&j, result->keys[i]);
        vg_jv_write(&result->items[i], &j);
    }
    vg_batch_key_members(t, &j);
    vg_json_obj_end(&j);
    vg_buf_put(out, "\n", 1);
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
        enum vg_task_state st;
        struct vg_jv *v = result_of(out, &ts->t[i], &st);
        if (st == VG_TASK_NONE || st == VG_TASK_STALE) {
            vg_jv_free(v); /* a stale result is another run's: not this task's */
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
