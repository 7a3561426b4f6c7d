/* attempt.c: a task's directory, OUT/tasks/ID, one attempt at a time.
 *
 * The batch directory is vigil's own: it is created with a marker file,
 * and a directory that exists without the marker (and is not empty) is
 * refused, so that removing a task directory left by an interrupted
 * attempt can never remove anything vigil did not make.  An attempt is
 * made whole before its run starts (work dir, code, inputs, stdin, key,
 * vigil.stderr), so a prepared sandbox can be built on it ahead of time. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "batch/batch_int.h"
#include "launcher/run_opts.h"
#include "launcher/scratch.h"
#include "util/escape.h"
#include "util/sha256.h"

#define MARKER ".vigil-batch"
#define STDIN_FILE "stdin"
#define SAID_FILE "vigil.stderr"   /* what vigil itself says, and the candidate's stderr */
#define LOG_FILE "run.msgpack"

static bool empty_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return false;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)))
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

static int make_dir(const char *path, struct vg_err *err)
{
    if (mkdir(path, 0755) < 0 && errno != EEXIST) {
        vg_errf(err, "mkdir %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
        vg_errf(err, "%s: not a directory", path);
        return -1;
    }
    return 0;
}

bool vg_attempt_is_batch_dir(const char *out)
{
    char *marker = vg_xasprintf("%s/%s", out, MARKER);
    bool ours = access(marker, F_OK) == 0;
    free(marker);
    return ours;
}

/* OUT exists and is ours afterwards, or err says why not. */
int vg_attempt_claim_out(const char *out, struct vg_err *err)
{
    char *marker = vg_xasprintf("%s/%s", out, MARKER);
    int rc = make_dir(out, err);
    /* The shards of an array job start at once: whichever creates the
     * marker first claims the directory for all of them. */
    if (rc == 0 && access(marker, F_OK) < 0 && empty_dir(out)) {
        int fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
        else if (errno != EEXIST) {
            vg_errf(err, "create %s: %s", marker, strerror(errno));
            rc = -1;
        }
    }
    if (rc == 0 && access(marker, F_OK) < 0) {
        vg_errf(err, "--out %s: not empty and not a vigil batch directory (it has no %s)", out,
                MARKER);
        rc = -1;
    }
    free(marker);
    if (rc == 0) {
        char *tasks = vg_xasprintf("%s/tasks", out);
        rc = make_dir(tasks, err);
        free(tasks);
    }
    return rc;
}

/* Copies a task's file, which must still be what its key was made of. */
static int copy_file(const struct vg_batch_file *src, const char *dst, struct vg_err *err)
{
    size_t len;
    char hex[65];
    char *data = vg_read_file(src->path, SIZE_MAX / 2, &len, err);
    if (!data)
        return -1;
    vg_sha256_buf(data, len, hex);
    if (strcmp(hex, src->sha256)) {
        vg_errf(err, "'%s' changed since the batch made its key: run the batch again", src->path);
        free(data);
        return -1;
    }
    int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int rc = fd >= 0 && vg_write_all(fd, data, len) == 0 ? 0 : -1;
    if (rc < 0)
        vg_errf(err, "write %s: %s", dst, strerror(errno));
    if (fd >= 0 && close(fd) < 0 && rc == 0) {
        vg_errf(err, "write %s: %s", dst, strerror(errno));
        rc = -1;
    }
    free(data);
    return rc;
}

static int write_text(const char *path, const char *text, struct vg_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int rc = fd >= 0 && vg_write_all(fd, text, strlen(text)) == 0 ? 0 : -1;
    if (rc < 0)
        vg_errf(err, "write %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}

/* OUT/tasks/.ID.prev: a task's result of its key, kept while --rerun runs
 * the task again (no id starts with '.'). */
static char *prev_dir(const char *out, const struct vg_batch_task *t)
{
    return vg_xasprintf("%s/tasks/.%s.prev", out, t->id);
}

/* Makes room for a new attempt.  A result of the task's key is moved
 * aside, not removed, so that an interrupted rerun leaves the task with
 * the result it had (settle); anything else there (a stale or cut-off
 * attempt) is removed: it is ours (claim_out). */
static int clear_attempt(const struct vg_batch_opts *o, const struct vg_batch_task *t,
                         struct vg_err *err)
{
    char *dir = vg_batch_task_dir(o->out, t), *prev = prev_dir(o->out, t);
    int rc = 0;
    if (access(dir, F_OK) == 0) {
        bool keep = vg_batch_task_state(o->out, t, NULL) == VG_TASK_DONE;
        if (keep && access(prev, F_OK) == 0 && vg_scratch_remove(prev) < 0)
            keep = false;
        if (keep ? rename(dir, prev) < 0 : vg_scratch_remove(dir) < 0) {
            vg_errf(err, "task %s: cannot %s the earlier attempt in %s", t->id,
                    keep ? "set aside" : "remove", dir);
            rc = -1;
        }
    }
    free(prev);
    free(dir);
    return rc;
}

/* After an attempt, or on finding one a killed batch left: the new
 * attempt stands if it is a result of the key, else the result set aside
 * comes back.  Either way one of them is the task's, never neither. */
void vg_attempt_settle(const struct vg_batch_opts *o, const struct vg_batch_task *t)
{
    char *dir = vg_batch_task_dir(o->out, t), *prev = prev_dir(o->out, t);
    if (access(prev, F_OK) == 0) {
        bool fresh = vg_batch_task_state(o->out, t, NULL) == VG_TASK_DONE;
        int rc;
        if (fresh) {
            rc = vg_scratch_remove(prev);
        } else {
            rc = access(dir, F_OK) == 0 ? vg_scratch_remove(dir) : 0;
            if (rc == 0)
                rc = rename(prev, dir);
        }
        if (rc < 0)
            vg_say(stderr, "vigil batch: task %s: cannot %s %s", t->id,
                   fresh ? "remove the earlier result in" : "restore the earlier result from",
                   prev);
    }
    free(prev);
    free(dir);
}

int vg_attempt_make(const struct vg_batch_opts *o, const struct vg_batch_task *t,
                    struct vg_err *err)
{
    char *dir = vg_batch_task_dir(o->out, t), *work = vg_xasprintf("%s/work", dir);
    int rc = clear_attempt(o, t, err);
    if (rc == 0)
        rc = make_dir(dir, err) < 0 || make_dir(work, err) < 0 ? -1 : 0;
    if (rc == 0 && t->code) {
        char *f = vg_xasprintf("%s/%s", work, t->lang->file);
        rc = write_text(f, t->code, err);
        free(f);
    }
    for (unsigned i = 0; rc == 0 && i < t->ninputs; i++) {
        const char *base = strrchr(t->inputs[i].path, '/');
        char *f = vg_xasprintf("%s/%s", work, base ? base + 1 : t->inputs[i].path);
        rc = copy_file(&t->inputs[i], f, err);
        free(f);
    }
    /* stdin is a file of the task's own, outside the candidate's reach */
    char *in = vg_xasprintf("%s/%s", dir, STDIN_FILE);
    if (rc == 0 && t->stdin_file)
        rc = copy_file(t->stdin_file, in, err);
    else if (rc == 0 && t->stdin_text)
        rc = write_text(in, t->stdin_text, err);
    free(in);
    /* vigil.stderr is made here, once: a prepared sandbox that failed and
     * the cold run after it both append to it, so the failure stays told */
    char *said = vg_xasprintf("%s/%s", dir, SAID_FILE);
    if (rc == 0)
        rc = write_text(said, "", err);
    free(said);
    if (rc == 0)
        rc = vg_batch_task_write_key(o->out, t, err);
    /* As root the candidate is host nobody: its work dir must be its own. */
    if (rc == 0 && geteuid() == 0 && chown(work, VG_HOST_NOBODY, VG_HOST_NOBODY) < 0) {
        vg_errf(err, "chown %s: %s", work, strerror(errno));
        rc = -1;
    }
    free(work);
    free(dir);
    return rc;
}

void vg_attempt_set_aside(const struct vg_batch_opts *o, const struct vg_batch_task *t,
                          const char *name)
{
    if (vg_batch_task_state(o->out, t, NULL) == VG_TASK_DONE)
        return;
    char *dir = vg_batch_task_dir(o->out, t);
    char *res = vg_xasprintf("%s/result.json", dir), *aside = vg_xasprintf("%s/%s", dir, name);
    if (rename(res, aside) < 0 && errno != ENOENT && unlink(res) < 0)
        vg_say(stderr, "vigil batch: task %s: cannot set aside its result: %s", t->id,
               strerror(errno));
    free(res);
    free(aside);
    free(dir);
}

bool vg_attempt_has_log(const struct vg_batch_opts *o, const struct vg_batch_task *t)
{
    char *log = vg_xasprintf("%s/tasks/%s/%s", o->out, t->id, LOG_FILE);
    struct stat st;
    bool has = lstat(log, &st) == 0;
    free(log);
    return has;
}

void vg_attempt_note(const struct vg_batch_opts *o, const struct vg_batch_task *t,
                     const char *line)
{
    char *said = vg_xasprintf("%s/tasks/%s/%s", o->out, t->id, SAID_FILE);
    /* made by vg_attempt_make: never created or followed here */
    int fd = open(said, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || vg_write_all(fd, line, strlen(line)) < 0 || vg_write_all(fd, "\n", 1) < 0)
        vg_say(stderr, "vigil batch: task %s: cannot write %s: %s", t->id, said, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(said);
}

char *vg_attempt_stdin(const struct vg_batch_opts *o, const struct vg_batch_task *t)
{
    if (!t->stdin_file && !t->stdin_text)
        return vg_xstrdup("/dev/null");
    return vg_xasprintf("%s/tasks/%s/%s", o->out, t->id, STDIN_FILE);
}
