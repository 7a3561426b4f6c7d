/* runner.c: runs a shard's missing tasks, N at a time, each as its own
 * `vigil run` of this binary (taskrun.c), in its own directory (attempt.c).
 *
 * A batch knows its tasks in advance, so while N run it prepares the
 * sandboxes of the next K (--prepare, default N): `vigil run --hold`
 * with exactly the options the task's cold run would get, built and
 * waiting.  A slot that frees goes to the first task whose sandbox is
 * ready, which then only gets its request: the cgroup move's RCU wait,
 * the namespaces, mounts, filters and the engine's probe are paid while
 * other candidates run.  A preparation that fails, or a request the held
 * sandbox refuses before the candidate starts, is said on stderr and in
 * the task's vigil.stderr, and the task runs cold: the cold run is what
 * a task's result means.
 *
 * The batch's signals (SIGINT, SIGTERM, SIGHUP, SIGCHLD) are blocked but
 * in ppoll, so none is lost between a look and the wait. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch/batch_int.h"
#include "util/escape.h"

#define INTERRUPTED "result.interrupted.json"
#define REFUSED_HELD "result.held.json"   /* a held sandbox's refusal, set aside for the cold run */
#define NS_PER_S 1e9
#define WHY_EXTRA 64   /* the words around an error's message in a job's why */

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

static void on_child(int sig)
{
    (void)sig; /* only to end ppoll */
}

enum job_state {
    JOB_FREE,
    JOB_PREPARING,   /* a held sandbox being built: waiting for its "ready" */
    JOB_READY,       /* built, waiting for a slot */
    JOB_FAILING,     /* its preparation failed: waiting for that vigil to end */
    JOB_COLD,        /* to run cold when a slot frees (no process yet) */
    JOB_RUNNING,     /* its candidate's run (held or cold) */
};

struct job {
    enum job_state state;
    const struct vg_batch_task *task;
    pid_t pid;
    int sock;                /* the batch's end of a held sandbox's socket; -1 */
    bool held;               /* the run under way is a held sandbox's */
    unsigned seq;            /* task order: slots go to the earliest */
    uint64_t start_ns;
    char why[sizeof(struct vg_err) + WHY_EXTRA]; /* why its preparation failed */
};

/* A --uid-range uid and the vigil that has it until it is reaped. */
struct uid_hold {
    pid_t pid;
    uid_t uid;
};

struct runner {
    const struct vg_batch_opts *o;
    struct uid_hold *holds;  /* the live vigils' uids (--uid-range) */
    unsigned nholds, cap_holds;
    struct vg_taskrun_env env;
    sigset_t wait_mask;      /* what ppoll lets in: the batch's signals */
    struct job *jobs;
    unsigned njobs, running, pending;
    struct vg_progress prog;
    unsigned cold_after_failure;
    bool task_error;
};

/* The tasks that run, in task-file order. */
struct queue {
    const struct vg_batch_task **t;
    unsigned n, next;
};

/* A uid for a vigil about to start: 0 without --uid-range, VG_UIDS_NONE
 * while every one is a live vigil's. */
static uid_t take_uid(struct runner *r)
{
    return r->o->uids ? vg_uid_range_take(r->o->uids) : 0;
}

/* The vigil started as pid (< 0: none started) has uid until it is reaped. */
static void hold_uid(struct runner *r, pid_t pid, uid_t uid)
{
    if (!uid)
        return;
    if (pid < 0) {
        vg_uid_range_give(r->o->uids, uid);
        return;
    }
    if (r->nholds == r->cap_holds) {
        r->cap_holds = r->cap_holds ? 2 * r->cap_holds : r->njobs;
        r->holds = vg_xrealloc(r->holds, r->cap_holds * sizeof *r->holds);
    }
    r->holds[r->nholds++] = (struct uid_hold){.pid = pid, .uid = uid};
}

/* pid was reaped: its uid is free (no process of it is left: vigil run
 * ends after its sandbox). */
static void give_uid(struct runner *r, pid_t pid)
{
    for (unsigned i = 0; i < r->nholds; i++)
        if (r->holds[i].pid == pid) {
            vg_uid_range_give(r->o->uids, r->holds[i].uid);
            r->holds[i] = r->holds[--r->nholds];
            return;
        }
}

static struct job *new_job(struct runner *r, const struct vg_batch_task *t, unsigned seq)
{
    for (unsigned i = 0; i < r->njobs; i++)
        if (r->jobs[i].state == JOB_FREE) {
            r->jobs[i] = (struct job){.task = t, .pid = -1, .sock = -1, .seq = seq};
            r->pending++;
            return &r->jobs[i];
        }
    return NULL; /* not reached: njobs is jobs + prepare */
}

static void close_sock(struct job *j)
{
    if (j->sock >= 0)
        close(j->sock);
    j->sock = -1;
}

static void end_job(struct runner *r, struct job *j)
{
    close_sock(j);
    if (j->state == JOB_RUNNING)
        r->running--;
    else
        r->pending--;
    j->state = JOB_FREE;
    r->prog.running = r->running;
}

/* Told once on stderr and in the task's vigil.stderr; the task runs cold. */
static void fall_back(struct runner *r, struct job *j, const char *why)
{
    char *line = vg_xasprintf("vigil batch: task %s: %s: it runs cold", j->task->id, why);
    vg_say(stderr, "%s%s", r->prog.bar ? "\n" : "", line);
    vg_attempt_note(r->o, j->task, line);
    free(line);
    r->cold_after_failure++;
    if (j->state == JOB_RUNNING) { /* a refused request: a slot is free again */
        r->running--;
        r->pending++;
    }
    close_sock(j);
    j->state = JOB_COLD;
    j->pid = -1;
    j->held = false;
}

/* A preparation that went wrong while its vigil still runs: its socket
 * closed, which destroys the held sandbox; the cold run waits for its end. */
static void prep_failed(struct job *j, const char *why)
{
    snprintf(j->why, sizeof j->why, "its prepared sandbox failed (%s)", why);
    close_sock(j);
    j->state = JOB_FAILING;
}

/* Makes the next task's attempt and its sandbox; 0, or -1 (the batch stops). */
static int prepare_next(struct runner *r, struct queue *q, bool held)
{
    struct vg_err err;
    const struct vg_batch_task *t = q->t[q->next];
    if (vg_attempt_make(r->o, t, &err) < 0) {
        vg_say(stderr, "vigil batch: %s", err.msg);
        return -1;
    }
    struct job *j = new_job(r, t, q->next++);
    if (!j) { /* not reached: running + pending never exceeds it */
        vg_say(stderr, "vigil batch: task %s: no slot for it", t->id);
        return -1;
    }
    j->state = JOB_COLD;
    uid_t uid = held ? take_uid(r) : VG_UIDS_NONE;
    if (uid == VG_UIDS_NONE) /* not held, or every uid is a live vigil's: cold later */
        return 0;
    j->pid = vg_taskrun_held(&r->env, t, uid, &j->sock, &err);
    hold_uid(r, j->pid, uid);
    if (j->pid < 0) {
        char *why = vg_xasprintf("its sandbox could not be prepared (%s)", err.msg);
        fall_back(r, j, why);
        free(why);
        return 0;
    }
    j->state = JOB_PREPARING;
    j->held = true;
    return 0;
}

static struct job *first_startable(struct runner *r)
{
    struct job *best = NULL;
    for (unsigned i = 0; i < r->njobs; i++) {
        struct job *j = &r->jobs[i];
        if ((j->state == JOB_READY || j->state == JOB_COLD) && (!best || j->seq < best->seq))
            best = j;
    }
    return best;
}

/* The job's candidate starts: its request, or its cold run.  0; 1: not
 * now (every uid is a live vigil's until one ends); -1: the batch stops. */
static int launch(struct runner *r, struct job *j)
{
    struct vg_err err;
    j->start_ns = vg_now_mono_ns();
    if (j->state == JOB_READY) {
        if (vg_taskrun_request(&r->env, j->task, j->sock, &err) < 0) {
            prep_failed(j, err.msg);
            return 0;
        }
        close_sock(j); /* not used again: the run goes on to its end */
    } else {
        uid_t uid = take_uid(r);
        if (uid == VG_UIDS_NONE)
            return 1;
        j->pid = vg_taskrun_cold(&r->env, j->task, uid, &err);
        hold_uid(r, j->pid, uid);
        if (j->pid < 0) {
            vg_say(stderr, "vigil batch: %s", err.msg);
            return -1;
        }
    }
    j->state = JOB_RUNNING;
    r->pending--;
    r->running++;
    r->prog.running = r->running;
    return 0;
}

/* Fills the free slots, then prepares ahead; 0, or -1 (the batch stops). */
static int schedule(struct runner *r, struct queue *q)
{
    unsigned ahead = r->o->prepare;
    while (r->running < r->o->jobs) {
        struct job *j = first_startable(r);
        if (!j && !ahead && q->next < q->n) {
            if (prepare_next(r, q, false) < 0)
                return -1;
            continue;
        }
        if (!j)
            break;
        int rc = launch(r, j);
        if (rc < 0)
            return -1;
        if (rc > 0)
            break;
    }
    while (ahead && r->pending < ahead && q->next < q->n)
        if (prepare_next(r, q, true) < 0)
            return -1;
    return 0;
}

static struct job *job_of(struct runner *r, pid_t pid)
{
    for (unsigned i = 0; i < r->njobs; i++)
        if (r->jobs[i].state != JOB_FREE && r->jobs[i].pid == pid)
            return &r->jobs[i];
    return NULL;
}

static void done(struct runner *r, struct job *j)
{
    char *st = NULL;
    vg_batch_task_state(r->o->out, j->task, &st);
    r->prog.done++;
    if (!st || strcmp(st, "ok"))
        r->prog.failed++;
    if (st && !strcmp(st, "error"))
        r->task_error = true;
    end_job(r, j);
    vg_progress_task(&r->prog, j->task, st, (double)(vg_now_mono_ns() - j->start_ns) / NS_PER_S);
    vg_attempt_settle(r->o, j->task);
    free(st);
}

static void describe_exit(char *buf, size_t cap, int status)
{
    if (WIFSIGNALED(status))
        snprintf(buf, cap, "vigil was killed by %s", strsignal(WTERMSIG(status)));
    else
        snprintf(buf, cap, "vigil exited %d before its request", WEXITSTATUS(status));
}

/* One of the batch's children ended. */
static void ended(struct runner *r, pid_t pid, int status)
{
    give_uid(r, pid);
    struct job *j = job_of(r, pid);
    if (!j)
        return;
    j->pid = -1;
    if (stop_signal) { /* it may have ended of the same signal: stop_all settles it */
        return;
    }
    if (j->state == JOB_RUNNING && j->held && !vg_attempt_has_log(r->o, j->task)) {
        /* the held sandbox refused the request before the candidate began */
        vg_attempt_set_aside(r->o, j->task, REFUSED_HELD);
        fall_back(r, j, "its prepared sandbox refused the request (see its vigil.stderr)");
    } else if (j->state == JOB_RUNNING) {
        done(r, j);
    } else if (j->state == JOB_FAILING && j->why[0]) {
        fall_back(r, j, j->why);
    } else {
        char how[128];
        describe_exit(how, sizeof how, status);
        snprintf(j->why, sizeof j->why, "its prepared sandbox failed (%s)", how);
        fall_back(r, j, j->why);
    }
}

static void reap(struct runner *r)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        ended(r, pid, status);
}

/* Waits for a signal or a prepared sandbox's word, and takes them in. */
static void wait_events(struct runner *r)
{
    struct pollfd *pf = vg_xcalloc(r->njobs, sizeof *pf);
    unsigned n = 0;
    for (unsigned i = 0; i < r->njobs; i++)
        if (r->jobs[i].state == JOB_PREPARING)
            pf[n++] = (struct pollfd){.fd = r->jobs[i].sock, .events = POLLIN};
    int got = ppoll(pf, n, NULL, &r->wait_mask);
    for (unsigned i = 0; got > 0 && i < r->njobs; i++) {
        struct job *j = &r->jobs[i];
        struct vg_err err;
        int said;
        if (j->state != JOB_PREPARING || (said = vg_taskrun_ready(j->sock, &err)) == 0)
            continue;
        if (said > 0)
            j->state = JOB_READY;
        else if (said == -1) { /* its exit, when reaped, says why */
            close_sock(j);
            j->state = JOB_FAILING;
        } else
            prep_failed(j, err.msg);
    }
    free(pf);
    reap(r);
}

/* SIGINT/SIGTERM/SIGHUP: every run and held sandbox is stopped (a held
 * one destroys itself unused), each task's directory settled. */
static void stop_all(struct runner *r)
{
    for (unsigned i = 0; i < r->njobs; i++)
        if (r->jobs[i].state != JOB_FREE && r->jobs[i].pid > 0)
            kill(r->jobs[i].pid, SIGTERM);
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0 && errno != EINTR)
            break; /* ECHILD: all are gone */
        if (pid > 0)
            give_uid(r, pid);
        struct job *j = pid > 0 ? job_of(r, pid) : NULL;
        if (j)
            j->pid = -1;
    }
    for (unsigned i = 0; i < r->njobs; i++) {
        struct job *j = &r->jobs[i];
        if (j->state == JOB_FREE)
            continue;
        if (j->state == JOB_RUNNING)
            vg_attempt_set_aside(r->o, j->task, INTERRUPTED);
        vg_attempt_settle(r->o, j->task);
        end_job(r, j);
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

/* The tasks of the shard that run (again), settling what a killed batch left. */
static void make_queue(const struct vg_batch_opts *o, const struct vg_batch_tasks *ts,
                       struct runner *r, struct queue *q)
{
    q->t = vg_xcalloc(ts->n ? ts->n : 1, sizeof *q->t);
    for (unsigned i = 0; i < ts->n; i++) {
        const struct vg_batch_task *t = &ts->t[i];
        if (o->nshards > 1 && vg_batch_shard(t, o->nshards) != o->shard)
            continue;
        r->prog.total++;
        vg_attempt_settle(o, t); /* what a killed batch left half-way */
        char *st = NULL;
        bool skip = !must_run(o, t, &st);
        if (skip) {
            r->prog.skipped++;
            if (strcmp(st, "ok"))
                r->prog.failed++;
        } else {
            q->t[q->n++] = t;
        }
        free(st);
    }
}

/* The batch's signals: handled, and blocked but while it waits. */
static void catch_signals(struct runner *r, sigset_t *old)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < VG_ARRAY_LEN(sigs); i++) {
        struct sigaction sa = {.sa_handler = sigs[i] == SIGCHLD ? on_child : on_stop};
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
        sigaddset(&block, sigs[i]);
    }
    sigprocmask(SIG_BLOCK, &block, old);
    r->wait_mask = *old;
    for (size_t i = 0; i < VG_ARRAY_LEN(sigs); i++)
        sigdelset(&r->wait_mask, sigs[i]);
    r->env.child_mask = *old;
}

int vg_batch_run(const struct vg_batch_opts *o, const struct vg_batch_tasks *ts)
{
    struct vg_err err;
    if (o->merge) {
        /* joins what shards made: nothing to create */
        if (!vg_attempt_is_batch_dir(o->out)) {
            vg_say(stderr, "vigil batch: --merge: %s is not a vigil batch directory", o->out);
            return VG_BATCH_CONFIG;
        }
        return merge(o, ts);
    }
    if (vg_attempt_claim_out(o->out, &err) < 0) {
        vg_say(stderr, "vigil batch: %s", err.msg);
        return VG_BATCH_CONFIG;
    }
    struct runner r = {.o = o, .njobs = o->jobs + o->prepare};
    r.env = (struct vg_taskrun_env){.o = o, .parent = getpid()};
    r.jobs = vg_xcalloc(r.njobs, sizeof *r.jobs);
    r.prog = (struct vg_progress){.bar = o->progress, .start_ns = vg_now_mono_ns()};
    sigset_t old;
    catch_signals(&r, &old);
    struct queue q = {0};
    make_queue(o, ts, &r, &q);
    int rc = 0;
    while (!stop_signal && rc == 0) {
        rc = schedule(&r, &q);
        if (rc < 0 || (!r.running && !r.pending && q.next >= q.n))
            break;
        wait_events(&r);
    }
    if (stop_signal) {
        fputc('\n', stderr); /* off the progress bar's line */
        vg_say(stderr, "vigil batch: %s: stopping the runs under way", strsignal(stop_signal));
    }
    stop_all(&r); /* after an error too: no prepared sandbox outlives the batch */
    vg_progress_end(&r.prog);
    if (r.cold_after_failure)
        vg_say(stderr, "vigil batch: %u tasks ran cold because their prepared sandbox failed "
               "(each one's vigil.stderr says why)", r.cold_after_failure);
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(r.jobs);
    free(r.holds);
    free(q.t);
    return finish(o, ts, stop_signal || rc < 0, r.task_error);
}
