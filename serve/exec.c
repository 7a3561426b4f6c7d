/* exec.c: a run's `vigil run`.  Each run is its own vigil process (its
 * own supervisor: a run that goes wrong cannot take the daemon or another
 * run with it), started with the run's directory as its world: the
 * candidate's stdin from the request, its output into the run's stdout and
 * stderr files, its log and result beside them.  It gets SIGTERM if the
 * daemon dies (PR_SET_PDEATHSIG), and ends its sandbox as on a timeout. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "serve/boxdir.h"
#include "serve/pool.h"
#include "serve/request.h"
#include "serve/state.h"
#include "util/escape.h"
#include "util/jsonr.h"

#define RESULT_MAX (4u << 20)
#define MS_PER_S 1000.0

static int open_in(const struct vg_srun *r)
{
    char *p = vg_xasprintf("%s/%s", r->dir, VG_SREQ_STDIN);
    int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    free(p);
    return fd;
}

static int open_out(const struct vg_srun *r, const char *name)
{
    char *p = vg_xasprintf("%s/%s", r->dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    free(p);
    return fd;
}

/* VIGIL run --host-uid N OPTIONS...: the uid and the box are the run's
 * only once it starts; --workdir is the box's. */
static char **start_argv(const struct vg_srun *r)
{
    size_t n = 0;
    while (r->cmd[n])
        n++;
    char **v = vg_xcalloc(n + 3, sizeof *v);
    size_t k = 0;
    bool past = false; /* the candidate's own words, after "--" */
    for (size_t i = 0; i < n; i++) {
        bool work = !past && i > 0 && !strcmp(r->cmd[i - 1], "--workdir");
        past |= !strcmp(r->cmd[i], "--");
        v[k++] = work ? vg_boxdir_work(r->box) : r->cmd[i];
        if (i == 1 && r->host_uid) {
            v[k++] = "--host-uid";
            v[k++] = vg_xasprintf("%u", (unsigned)r->host_uid);
        }
    }
    return v;
}

/* In the child: the three streams, nothing else of the daemon's, and a
 * parent-death signal; then vigil run.  Never returns. */
static void child(const struct vg_srun *r, pid_t parent, int in, int out, int errfd)
{
    /* in its work dir, as a pooled sandbox's vigil is: the command's
     * relative names are the request's files */
    char *work = vg_boxdir_work(r->box);
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent || dup2(in, 0) < 0 ||
        dup2(out, 1) < 0 || dup2(errfd, 2) < 0 || chdir(work) < 0)
        _exit(VG_SERVE_EXIT_VIGIL);
    /* the daemon's listening sockets, log and connections are not the
     * run's business: none may leak into its vigil (and its candidate) */
    if (syscall(VG_NR_close_range, 3u, ~0u, 0u) < 0)
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    char **argv = start_argv(r);
    execv(argv[0], argv);
    _exit(VG_SERVE_EXIT_VIGIL);
}

int vg_exec_streams(const struct vg_srun *r, int fds[3])
{
    fds[0] = open_in(r);
    fds[1] = open_out(r, VG_SREQ_STDOUT);
    fds[2] = open_out(r, VG_SREQ_STDERR);
    return fds[0] < 0 || fds[1] < 0 || fds[2] < 0 ? -1 : 0;
}

/* A cold start: a vigil run of its own, in a box made now.  0, or -1
 * with err. */
static int start_cold(struct vg_serve *d, struct vg_srun *r, struct vg_err *err)
{
    r->box = vg_pool_box(d->pool, r->host_uid, err);
    if (!r->box || vg_boxdir_fill(r->box, r->dir, r->host_uid, err) < 0)
        return -1;
    int fds[3];
    pid_t parent = getpid(), pid = -1;
    if (vg_exec_streams(r, fds) == 0)
        pid = fork();
    if (pid == 0)
        child(r, parent, fds[0], fds[1], fds[2]);
    int saved = errno;
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (pid < 0)
        return vg_errf(err, "cannot start its vigil run: %s", strerror(saved)), -1;
    r->pid = pid;
    vg_serve_event(d, VG_SVC_ASSIGNED, r, &(struct vg_svc_event){.host_uid = r->host_uid});
    return 0;
}

int vg_exec_start(struct vg_serve *d, struct vg_srun *r, struct vg_err *err)
{
    int pooled = r->pool_fit && d->pool ? vg_pool_start(d->pool, r, err) : 0;
    if (pooled < 0 || (pooled == 0 && start_cold(d, r, err) < 0))
        return -1;
    r->state = VG_SR_RUNNING;
    r->started_ms = (int64_t)(vg_now_wall_ns() / 1000000);
    r->started_mono_ms = (int64_t)(vg_now_mono_ns() / 1000000);
    d->running++;
    struct vg_err e;
    if (vg_srun_save(d, r, false, &e) < 0)
        vg_say(stderr, "vigil serve: %s", e.msg);
    vg_serve_event(d, VG_SVC_STARTED, r, &(struct vg_svc_event){.pid = r->pid});
    return 0;
}

/* What the run's result says, if it wrote one. */
static bool read_result(struct vg_srun *r)
{
    char *p = vg_xasprintf("%s/%s", r->dir, VG_SREQ_RESULT);
    size_t len;
    struct vg_err err;
    char *text = access(p, F_OK) == 0 ? vg_read_file(p, RESULT_MAX, &len, &err) : NULL;
    free(p);
    /* a NUL the candidate printed (escaped in an output's tail) must not
     * make the whole result unreadable: only its status and numbers are read */
    struct vg_jv *v = text ? vg_jv_parse_flags(text, len, VG_JV_NUL_AS_FFFD, &err) : NULL;
    free(text);
    if (!v)
        return false;
    const char *status = vg_jv_str(v, "status");
    const struct vg_jv *code = vg_jv_get(v, "exit_code"), *cpu = vg_jv_get(v, "cpu_s"),
                       *wall = vg_jv_get(v, "wall_s");
    bool ok = status && code && code->type == VG_JNUM;
    if (ok) {
        snprintf(r->status, sizeof r->status, "%s", status);
        r->exit_code = atoi(code->s);
        r->cpu_s = cpu && cpu->type == VG_JNUM ? strtod(cpu->s, NULL) : 0;
        r->wall_s = wall && wall->type == VG_JNUM ? strtod(wall->s, NULL) : 0;
    }
    vg_jv_free(v);
    return ok;
}

void vg_exec_reaped(struct vg_serve *d, struct vg_srun *r, int wstatus, const struct rusage *ru)
{
    r->pid = 0;
    if (!read_result(r)) {
        snprintf(r->status, sizeof r->status, "error");
        r->exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
        snprintf(r->error, sizeof r->error, "its vigil run wrote no result (%s %d)",
                 WIFEXITED(wstatus) ? "exit" : "signal",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus));
        r->wall_s = (double)((int64_t)(vg_now_mono_ns() / 1000000) - r->started_mono_ms) / MS_PER_S;
        /* what its vigil and the processes it reaped used, as the kernel counted */
        r->cpu_s = (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
                   (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
    }
    vg_serve_ended(d, r, r->cancel_asked ? VG_SR_CANCELLED : VG_SR_FINISHED);
}

void vg_exec_cancel(struct vg_serve *d, struct vg_srun *r)
{
    r->cancel_asked = true;
    if (r->state == VG_SR_QUEUED && vg_sched_unqueue(d, r)) {
        snprintf(r->error, sizeof r->error, "cancelled before it started");
        vg_serve_ended(d, r, VG_SR_CANCELLED);
        return;
    }
    /* vigil run ends its sandbox on SIGTERM and writes its result */
    if (r->state == VG_SR_RUNNING && r->pid > 0)
        kill(r->pid, SIGTERM);
}

static void wake_waiters(struct vg_srun *r);

void vg_serve_ended(struct vg_serve *d, struct vg_srun *r, enum vg_srun_state s)
{
    struct vg_suser *u = vg_serve_user(d, r->uid, NULL);
    bool ran = r->state == VG_SR_RUNNING;
    r->state = s;
    r->ended_ms = (int64_t)(vg_now_wall_ns() / 1000000);
    if (ran) {
        d->running--;
        vg_sched_give_uid(d, r->host_uid);
    }
    if (r->box) {
        vg_boxdir_return(r->box, r->dir);
        free(r->box);
        r->box = NULL;
    }
    uint64_t cpu_ms = ran ? (uint64_t)ceil(r->cpu_s * MS_PER_S) : 0;
    uint64_t wall_ms = ran ? (uint64_t)ceil(r->wall_s * MS_PER_S) : 0;
    vg_usage_settle(&u->usage, r->id, cpu_ms, wall_ms);
    u->usage.stored += vg_srun_stored_bytes(r);
    struct vg_err err;
    if (vg_suser_save(d, u, false, &err) < 0 || vg_srun_save(d, r, false, &err) < 0)
        vg_say(stderr, "vigil serve: %s", err.msg);
    if (s == VG_SR_CANCELLED)
        vg_serve_event(d, VG_SVC_CANCELLED, r, &(struct vg_svc_event){.reason = r->error});
    vg_serve_event(d, VG_SVC_FINISHED, r,
                   &(struct vg_svc_event){.exit_code = r->exit_code, .status = r->status,
                                          .cpu_s = r->cpu_s, .wall_s = r->wall_s});
    if (ran)
        vg_serve_event(d, VG_SVC_DESTROYED, r, NULL);
    wake_waiters(r);
    vg_serve_kick(d);
}

void vg_http_resume(void *conn); /* serve/http.c */

static void wake_waiters(struct vg_srun *r)
{
    for (struct vg_swaiter *w = r->waiters; w; w = w->next)
        if (!w->resumed) {
            w->resumed = true;
            vg_http_resume(w->conn);
        }
}
