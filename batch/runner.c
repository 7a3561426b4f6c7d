/* runner.c: runs a shard's missing tasks, N at a time, each as its own
 * `vigil run` of this binary.
 *
 * The batch directory is vigil's own: it is created with a marker file,
 * and a directory that exists without the marker (and is not empty) is
 * refused, so that removing a task directory left by an interrupted
 * attempt can never remove anything vigil did not make.  Every run gets
 * PR_SET_PDEATHSIG: if the batch dies, even by SIGKILL, its runs die, and
 * their sandboxes with them. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "batch/batch.h"
#include "policy/policy.h"
#include "run/run.h"
#include "launcher/scratch.h"
#include "util/escape.h"
#include "util/sha256.h"

#define MARKER ".vigil-batch"
#define INTERRUPTED "result.interrupted.json"
#define STDIN_FILE "stdin"
#define NS_PER_S 1e9

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

struct slot {
    pid_t pid;
    const struct vg_batch_task *task;
    uint64_t start_ns;
};

struct runner {
    const struct vg_batch_opts *o;
    struct slot *slots;
    unsigned nslots, running;
    struct vg_progress prog;
    bool task_error;
};

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

/* OUT exists and is ours afterwards, or err says why not. */
static int claim_out(const char *out, struct vg_err *err)
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
static void settle(const struct vg_batch_opts *o, const struct vg_batch_task *t)
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

/* A fresh OUT/tasks/ID with its work directory, code and inputs. */
static int prepare(const struct vg_batch_opts *o, const struct vg_batch_task *t, struct vg_err *err)
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

/* The words of a task's `vigil run` besides its flags and command: vigil
 * run -q -o LOG --result R --task-id ID --workdir W (11), -p FILE,
 * --image DIGEST, "--" and the final NULL. */
#define RUN_ARGV_FIXED 17

/* The `vigil run` command line of a task (NULL-terminated, malloc'd). */
static char **run_argv(const struct vg_batch_opts *o, const struct vg_batch_task *t)
{
    char *dir = vg_batch_task_dir(o->out, t);
    unsigned argc = 0;
    for (const char *const *a = t->argv ? (const char *const *)t->argv : t->lang->argv; *a; a++)
        argc++;
    char **v = vg_xcalloc(RUN_ARGV_FIXED + t->nflags + argc, sizeof *v);
    unsigned n = 0;
    v[n++] = vg_xstrdup(o->vigil);
    v[n++] = vg_xstrdup("run");
    v[n++] = vg_xstrdup("-q");
    v[n++] = vg_xstrdup("-o");
    v[n++] = vg_xasprintf("%s/run.msgpack", dir);
    v[n++] = vg_xstrdup("--result");
    v[n++] = vg_xasprintf("%s/result.json", dir);
    v[n++] = vg_xstrdup("--task-id");
    v[n++] = vg_xstrdup(t->id);
    v[n++] = vg_xstrdup("--workdir");
    v[n++] = vg_xasprintf("%s/work", dir);
    if (t->policy_file) { /* absolute: the run works in its own directory */
        v[n++] = vg_xstrdup("-p");
        v[n++] = vg_xstrdup(t->policy_file);
    }
    if (t->image_digest) { /* the digest found when the batch started, not a name */
        v[n++] = vg_xstrdup("--image");
        v[n++] = vg_xstrdup(t->image_digest);
    }
    for (unsigned i = 0; i < t->nflags; i++)
        v[n++] = vg_xstrdup(t->flags[i]);
    v[n++] = vg_xstrdup("--");
    for (const char *const *a = t->argv ? (const char *const *)t->argv : t->lang->argv; *a; a++)
        v[n++] = vg_xstrdup(*a);
    free(dir);
    return v;
}

static void free_argv(char **v)
{
    for (char **a = v; *a; a++)
        free(*a);
    free(v);
}

static int start(struct runner *r, const struct vg_batch_task *t, struct vg_err *err)
{
    if (prepare(r->o, t, err) < 0)
        return -1;
    char **argv = run_argv(r->o, t);
    char *work = vg_xasprintf("%s/tasks/%s/work", r->o->out, t->id);
    char *said = vg_xasprintf("%s/tasks/%s/vigil.stderr", r->o->out, t->id);
    char *in = t->stdin_file || t->stdin_text
                   ? vg_xasprintf("%s/tasks/%s/%s", r->o->out, t->id, STDIN_FILE)
                   : vg_xstrdup("/dev/null");
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* The run dies with the batch.  The candidate's output is in its
         * result (tails); what vigil itself says goes to vigil.stderr. */
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        int in_fd = open(in, O_RDONLY | O_CLOEXEC);
        int err_fd = open(said, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent || null < 0 ||
            in_fd < 0 || err_fd < 0 || dup2(in_fd, 0) < 0 || dup2(null, 1) < 0 ||
            dup2(err_fd, 2) < 0 || chdir(work) < 0)
            _exit(VG_BATCH_INCOMPLETE);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execv(argv[0], argv);
        _exit(127);
    }
    free(work);
    free(said);
    free(in);
    free_argv(argv);
    if (pid < 0) {
        vg_errf(err, "fork: %s", strerror(errno));
        return -1;
    }
    for (unsigned i = 0; i < r->nslots; i++)
        if (!r->slots[i].pid) {
            r->slots[i] = (struct slot){pid, t, vg_now_mono_ns()};
            break;
        }
    r->running++;
    r->prog.running = r->running;
    return 0;
}

/* A run the batch stopped (or that a Ctrl-C reached with it) recorded
 * status error: that is no result of the task, and a rerun must run it
 * again.  Its record is kept beside, under a name no rerun takes for a
 * result (prepare removes it with the rest of the attempt). */
static void set_aside_interrupted(const struct runner *r, const struct vg_batch_task *t)
{
    if (vg_batch_task_state(r->o->out, t, NULL) != VG_TASK_DONE) {
        char *dir = vg_batch_task_dir(r->o->out, t);
        char *res = vg_xasprintf("%s/result.json", dir), *aside = vg_xasprintf("%s/%s", dir, INTERRUPTED);
        if (rename(res, aside) < 0 && errno != ENOENT && unlink(res) < 0)
            fprintf(stderr, "vigil batch: task %s: cannot set aside its interrupted result: %s\n",
                    t->id, strerror(errno));
        free(res);
        free(aside);
        free(dir);
    }
}

/* Waits for one run to end and takes in its result. */
static void reap(struct runner *r)
{
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0)
        return; /* EINTR: a stop signal; the caller looks */
    for (unsigned i = 0; i < r->nslots; i++) {
        struct slot *s = &r->slots[i];
        if (s->pid != pid)
            continue;
        if (stop_signal) {   /* it may have ended of the same signal */
            set_aside_interrupted(r, s->task);
            settle(r->o, s->task);
            s->pid = 0;
            r->running--;
            return;
        }
        char *st = NULL;
        vg_batch_task_state(r->o->out, s->task, &st);
        r->prog.done++;
        if (!st || strcmp(st, "ok"))
            r->prog.failed++;
        if (st && !strcmp(st, "error"))
            r->task_error = true;
        r->running--;
        r->prog.running = r->running;
        vg_progress_task(&r->prog, s->task, st, (double)(vg_now_mono_ns() - s->start_ns) / NS_PER_S);
        settle(r->o, s->task);
        free(st);
        s->pid = 0;
        return;
    }
}

static void stop_all(struct runner *r)
{
    for (unsigned i = 0; i < r->nslots; i++)
        if (r->slots[i].pid)
            kill(r->slots[i].pid, SIGTERM);
    while (r->running) {
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0 && errno == ECHILD)
            break;
        for (unsigned i = 0; pid > 0 && i < r->nslots; i++)
            if (r->slots[i].pid == pid) {
                set_aside_interrupted(r, r->slots[i].task);
                settle(r->o, r->slots[i].task);
                r->slots[i].pid = 0;
                r->running--;
            }
    }
}

static char *results_path(const struct vg_batch_opts *o)
{
    if (o->nshards > 1)
        return vg_xasprintf("%s/results-%u-of-%u.jsonl", o->out, o->shard, o->nshards);
    return vg_xasprintf("%s/results.jsonl", o->out);
}

static int finish(const struct vg_batch_opts *o, const struct vg_batch_tasks *ts, bool stopped,
                  bool task_error)
{
    struct vg_err err;
    char *path = results_path(o);
    int missing = vg_results_write(o->out, ts, o->shard, o->nshards > 1 ? o->nshards : 0, path,
                                   &err);
    if (missing < 0) {
        vg_say(stderr, "vigil batch: %s", err.msg);
        free(path);
        return VG_BATCH_INCOMPLETE;
    }
    vg_say(stderr, "vigil batch: results in %s%s", path,
           missing ? " (some tasks have none: run the batch again to finish them)" : "");
    free(path);
    if (stopped || missing)
        return VG_BATCH_INCOMPLETE;
    return task_error ? VG_BATCH_TASK_ERROR : VG_BATCH_OK;
}

/* Has the task a result of its key (what the results file takes)? */
static bool has_result(const char *out, const struct vg_batch_task *t)
{
    enum vg_task_state st = vg_batch_task_state(out, t, NULL);
    return st == VG_TASK_DONE || st == VG_TASK_ERROR;
}

static int merge(const struct vg_batch_opts *o, const struct vg_batch_tasks *ts)
{
    struct vg_err err;
    char *path = vg_xasprintf("%s/results.jsonl", o->out);
    int missing = vg_results_write(o->out, ts, 0, 0, path, &err);
    if (missing < 0)
        vg_say(stderr, "vigil batch: %s", err.msg);
    else if (missing) {
        struct vg_buf ids = {0};
        for (unsigned i = 0, shown = 0; i < ts->n && shown < 10; i++)
            if (!has_result(o->out, &ts->t[i])) {
                vg_buf_printf(&ids, " %s", ts->t[i].id);
                shown++;
            }
        vg_say(stderr, "vigil batch: %d of %u tasks have no result yet:%s%s", missing, ts->n,
               ids.data ? ids.data : "", missing > 10 ? " ..." : "");
        vg_buf_free(&ids);
    } else {
        vg_say(stderr, "vigil batch: %u results in %s", ts->n, path);
    }
    free(path);
    return missing ? VG_BATCH_INCOMPLETE : VG_BATCH_OK;
}

/* Does the task run (again)?  Only a result of its own key that is not an
 * error is done; --rerun widens that.  *status: the result's, if any. */
static bool must_run(const struct vg_batch_opts *o, const struct vg_batch_task *t, char **status)
{
    enum vg_task_state st = vg_batch_task_state(o->out, t, status);
    if (st != VG_TASK_DONE)
        return true;
    return o->rerun == VG_RERUN_ALL || (o->rerun == VG_RERUN_FAILED && strcmp(*status, "ok"));
}

int vg_batch_run(const struct vg_batch_opts *o, const struct vg_batch_tasks *ts)
{
    struct vg_err err;
    if (o->merge) {
        /* joins what shards made: nothing to create */
        char *marker = vg_xasprintf("%s/%s", o->out, MARKER);
        bool ours = access(marker, F_OK) == 0;
        free(marker);
        if (!ours) {
            vg_say(stderr, "vigil batch: --merge: %s is not a vigil batch directory", o->out);
            return VG_BATCH_CONFIG;
        }
        return merge(o, ts);
    }
    if (claim_out(o->out, &err) < 0) {
        vg_say(stderr, "vigil batch: %s", err.msg);
        return VG_BATCH_CONFIG;
    }
    struct runner r = {.o = o, .nslots = o->jobs};
    r.slots = vg_xcalloc(o->jobs, sizeof *r.slots);
    r.prog = (struct vg_progress){.bar = o->progress, .start_ns = vg_now_mono_ns()};
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    for (unsigned i = 0; i < ts->n; i++)
        if (o->nshards <= 1 || vg_batch_shard(&ts->t[i], o->nshards) == o->shard)
            r.prog.total++;
    int rc = 0;
    for (unsigned i = 0; i < ts->n && !stop_signal && rc == 0; i++) {
        const struct vg_batch_task *t = &ts->t[i];
        if (o->nshards > 1 && vg_batch_shard(t, o->nshards) != o->shard)
            continue;
        settle(o, t); /* what a killed batch left half-way */
        char *st = NULL;
        bool skip = !must_run(o, t, &st);
        if (skip) {
            r.prog.skipped++;
            if (strcmp(st, "ok"))
                r.prog.failed++;
        }
        free(st);
        if (skip)
            continue;
        while (r.running >= r.nslots && !stop_signal)
            reap(&r);
        if (!stop_signal && (rc = start(&r, t, &err)) < 0)
            vg_say(stderr, "vigil batch: %s", err.msg);
    }
    while (r.running && !stop_signal)
        reap(&r);
    if (stop_signal) {
        fputc('\n', stderr); /* off the progress bar's line */
        vg_say(stderr, "vigil batch: %s: stopping the runs under way", strsignal(stop_signal));
        stop_all(&r);
    }
    vg_progress_end(&r.prog);
    free(r.slots);
    int code = finish(o, ts, stop_signal || rc < 0, r.task_error);
    return code;
}
