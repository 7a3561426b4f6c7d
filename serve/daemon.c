/* daemon.c: vg_serve, the daemon's life: set up as a list of steps run
 * in order (each says why), then one loop that reaps runs, starts queued
 * ones, times out waiters, and on SIGTERM/SIGINT stops: no new requests,
 * running runs cancelled (their vigil ends the sandbox and writes the
 * result), queued ones left queued on disk for the next start. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "serve/http.h"
#include "serve/listen.h"
#include "serve/pool.h"
#include "serve/state.h"
#include "util/escape.h"

#define TICK_MS 100
#define LOCK_FILE "serve.lock"
/* Connections and runs' files at once: the HTTP limit and some room. */
#define WANT_NOFILE (VG_HTTP_MAX_CONN + 1024)

struct daemon {
    struct vg_serve d;
    struct vg_listener ls[VG_SERVE_MAX_LISTEN];
    struct vg_http *http[VG_SERVE_MAX_LISTEN];
    unsigned nls;
    int lock_fd, sig_fd;
    sigset_t old_mask;
};

static int mkdir_own(const char *p, struct vg_err *err)
{
    if (mkdir(p, 0700) < 0 && errno != EEXIST)
        return vg_errf(err, "%s: %s", p, strerror(errno)), -1;
    struct stat st;
    if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return vg_errf(err, "%s: not a directory of this user's", p), -1;
    return 0;
}

/* The state directory and its parts, this user's own and private: runs'
 * data of every user is in there. */
static int step_state(struct daemon *m, struct vg_err *err)
{
    struct vg_serve *d = &m->d;
    d->runs_dir = vg_xasprintf("%s/runs", d->o->state);
    d->users_dir = vg_xasprintf("%s/users", d->o->state);
    d->svc_dir = vg_xasprintf("%s/service", d->o->state);
    return mkdir_own(d->o->state, err) < 0 || mkdir_own(d->runs_dir, err) < 0 ||
                   mkdir_own(d->users_dir, err) < 0
               ? -1
               : 0;
}

/* One daemon per state directory: two would start the same queued runs. */
static int step_lock(struct daemon *m, struct vg_err *err)
{
    char *p = vg_xasprintf("%s/%s", m->d.o->state, LOCK_FILE);
    m->lock_fd = open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    int rc = m->lock_fd < 0 || flock(m->lock_fd, LOCK_EX | LOCK_NB) < 0 ? -1 : 0;
    if (rc < 0)
        vg_errf(err, "%s: %s", p,
                errno == EWOULDBLOCK ? "another vigil serve uses this state directory"
                                     : strerror(errno));
    free(p);
    return rc;
}

static int step_config(struct daemon *m, struct vg_err *err)
{
    struct vg_serve *d = &m->d;
    for (int k = 0; k < VG_Q_COUNT; k++)
        if (!vg_quota_parse(&d->conf.defaults, (enum vg_quota_kind)k, d->o->quota[k], err))
            return -1;
    return vg_serve_conf_load(&d->conf, d->o->config, err);
}

/* As root, each running candidate gets a host uid of its own from the
 * range (two runs cannot touch each other even through a kernel-layer
 * mistake); an unprivileged daemon's candidates are all its own uid. */
static int step_uids(struct daemon *m, struct vg_err *err)
{
    struct vg_serve *d = &m->d;
    d->workers = d->o->workers;
    if (!d->workers) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        d->workers = n > 0 ? (unsigned)n : 1;
    }
    if (geteuid() != 0)
        return 0;
    if (vg_uid_range_parse(&d->uids, d->o->uid_range, "--uid-range", err) < 0)
        return -1;
    if (vg_uid_range_size(&d->uids) < d->workers)
        d->workers = (unsigned)vg_uid_range_size(&d->uids);
    return 0;
}

static int step_log(struct daemon *m, struct vg_err *err)
{
    m->d.log = vg_svclog_open(m->d.svc_dir, err);
    return m->d.log ? 0 : -1;
}

/* Signals are read from a signalfd by the loop, never handled at random
 * points; the HTTP threads inherit the mask, so none of them takes one. */
static int step_signals(struct daemon *m, struct vg_err *err)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGCHLD);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGHUP);
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-answer is an error, not death */
    if (pthread_sigmask(SIG_BLOCK, &s, &m->old_mask) != 0 ||
        (m->sig_fd = signalfd(-1, &s, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
        (m->d.kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        return vg_errf(err, "signals: %s", strerror(errno)), -1;
    return 0;
}

static int step_recover(struct daemon *m, struct vg_err *err)
{
    return vg_serve_recover(&m->d, err);
}

/* The warm pool and the boxes of runs, after recovery (which takes the
 * killed daemon's runs' work back from their boxes). */
static int step_pool(struct daemon *m, struct vg_err *err)
{
    m->d.pool = vg_pool_new(&m->d, err);
    return m->d.pool ? 0 : -1;
}

static int step_listen(struct daemon *m, struct vg_err *err)
{
    int n = vg_listen_systemd(m->ls, VG_SERVE_MAX_LISTEN, err);
    if (n < 0)
        return -1;
    m->nls = (unsigned)n;
    for (unsigned i = 0; !n && i < m->d.o->nlisten; i++) {
        if (vg_listen_open(m->d.o->listen[i], &m->ls[m->nls], err) < 0)
            return -1;
        m->nls++;
    }
    bool tokens = false;
    for (size_t i = 0; i < m->d.conf.nusers; i++)
        tokens |= m->d.conf.users[i].has_token;
    /* every listener is checked before any serves: a daemon that is to
     * exit must not have answered anyone first */
    for (unsigned i = 0; i < m->nls; i++)
        if (m->ls[i].tcp && !tokens)
            return vg_errf(err, "%s: TCP takes only token users, and the config has none",
                           m->ls[i].name), -1;
    for (unsigned i = 0; i < m->nls; i++) {
        m->http[i] = vg_http_start(&m->d, m->ls[i].fd, m->ls[i].tcp, err);
        if (!m->http[i])
            return -1;
        m->ls[i].fd = -1; /* libmicrohttpd's now */
    }
    return 0;
}

static int step_limits(struct daemon *m, struct vg_err *err)
{
    (void)m, (void)err;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < WANT_NOFILE) {
        rl.rlim_cur = rl.rlim_max < WANT_NOFILE ? rl.rlim_max : WANT_NOFILE;
        setrlimit(RLIMIT_NOFILE, &rl); /* best effort: fewer connections otherwise */
    }
    return 0;
}

static const struct step {
    const char *what;
    int (*run)(struct daemon *m, struct vg_err *err);
} steps[] = {
    {"state directory", step_state}, {"lock", step_lock},       {"config", step_config},
    {"uids", step_uids},             {"limits", step_limits},   {"signals", step_signals},
    {"service log", step_log},       {"recovery", step_recover}, {"pool", step_pool},
    {"listen", step_listen},
};

static void reap(struct vg_serve *d)
{
    int ws;
    struct rusage ru;
    for (pid_t pid; (pid = wait4(-1, &ws, WNOHANG, &ru)) > 0;) {
        if (d->pool && vg_pool_reaped(d->pool, pid))
            continue;
        for (size_t i = 0; i < d->nruns; i++)
            if (d->runs[i]->state == VG_SR_RUNNING && d->runs[i]->pid == pid) {
                vg_exec_reaped(d, d->runs[i], ws, &ru);
                break;
            }
    }
}

static void wake_due(struct vg_serve *d, bool all)
{
    int64_t now = (int64_t)(vg_now_mono_ns() / 1000000);
    for (size_t i = 0; i < d->nruns; i++)
        for (struct vg_swaiter *w = d->runs[i]->waiters; w; w = w->next)
            if (!w->resumed && (all || w->deadline_ms <= now)) {
                w->resumed = true;
                vg_http_resume(w->conn);
            }
}

/* Reads what woke the loop; true when it is time to stop. */
static bool take_signals(struct daemon *m)
{
    struct signalfd_siginfo si;
    bool stop = false;
    while (read(m->sig_fd, &si, sizeof si) == (ssize_t)sizeof si)
        stop |= si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT;
    uint64_t n;
    if (read(m->d.kick_fd, &n, sizeof n) < 0) {
        /* EAGAIN: nobody kicked */
    }
    return stop;
}

static void begin_stop(struct daemon *m, const char *why)
{
    struct vg_serve *d = &m->d;
    d->stopping = true;
    for (unsigned i = 0; i < m->nls; i++)
        if (m->http[i])
            vg_http_quiesce(m->http[i]);
    if (d->pool)
        vg_pool_drain(d->pool);
    for (size_t i = 0; i < d->nruns; i++)
        if (d->runs[i]->state == VG_SR_RUNNING) {
            snprintf(d->runs[i]->error, sizeof d->runs[i]->error, "the daemon stopped: %s", why);
            vg_exec_cancel(d, d->runs[i]);
        }
}

static void loop(struct daemon *m)
{
    struct vg_serve *d = &m->d;
    bool stopping = false;
    for (;;) {
        struct pollfd p[2] = {{.fd = m->sig_fd, .events = POLLIN},
                              {.fd = d->kick_fd, .events = POLLIN}};
        poll(p, 2, TICK_MS);
        bool stop = take_signals(m);
        pthread_mutex_lock(&d->lock);
        reap(d);
        if ((stop || d->stopping) && !stopping) {
            stopping = true;
            begin_stop(m, stop ? "SIGTERM" : "its service log failed");
        }
        if (d->pool)
            vg_pool_tick(d->pool);
        if (!stopping)
            vg_sched_run_ready(d);
        bool idle = d->running == 0 && (!d->pool || vg_pool_live(d->pool) == 0);
        wake_due(d, stopping && idle);
        bool done = stopping && idle;
        pthread_mutex_unlock(&d->lock);
        if (done)
            return;
    }
}

static void teardown(struct daemon *m)
{
    struct vg_serve *d = &m->d;
    for (unsigned i = 0; i < m->nls; i++) {
        vg_http_stop(m->http[i]);
        vg_listen_close(&m->ls[i]);
    }
    if (d->log) {
        vg_serve_event(d, VG_SVC_STOP, NULL, &(struct vg_svc_event){.uid = -1,
                                                                    .reason = "stopped"});
        vg_svclog_close(d->log);
    }
    vg_pool_free(d->pool);
    for (size_t i = 0; i < d->nruns; i++)
        vg_srun_free(d->runs[i]);
    free(d->runs);
    for (size_t i = 0; i < d->nusers; i++) {
        free(d->users[i]->name);
        vg_usage_free(&d->users[i]->usage);
        free(d->users[i]);
    }
    free(d->users);
    vg_uid_range_free(&d->uids);
    vg_serve_conf_free(&d->conf);
    free(d->runs_dir);
    free(d->users_dir);
    free(d->svc_dir);
    if (m->sig_fd >= 0)
        close(m->sig_fd);
    if (d->kick_fd >= 0)
        close(d->kick_fd);
    if (m->lock_fd >= 0)
        close(m->lock_fd);
    pthread_mutex_destroy(&d->lock);
    pthread_sigmask(SIG_SETMASK, &m->old_mask, NULL);
}

static void start_event(struct daemon *m)
{
    struct vg_buf b = {0};
    vg_buf_printf(&b, "vigil %s, %u workers, listening on", VG_VERSION, m->d.workers);
    for (unsigned i = 0; i < m->nls; i++)
        vg_buf_printf(&b, "%s %s", i ? "," : "", m->ls[i].name);
    vg_serve_event(&m->d, VG_SVC_START, NULL, &(struct vg_svc_event){.uid = -1, .reason = b.data});
    vg_say(stderr, "vigil serve: %s", b.data);
    vg_buf_free(&b);
}

int vg_serve(const struct vg_serve_opts *o, struct vg_err *err)
{
    struct daemon *m = vg_xcalloc(1, sizeof *m);
    m->d.o = o;
    m->lock_fd = m->sig_fd = m->d.kick_fd = -1;
    for (unsigned i = 0; i < VG_SERVE_MAX_LISTEN; i++)
        m->ls[i].fd = -1;
    pthread_mutex_init(&m->d.lock, NULL);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof steps / sizeof steps[0]; i++)
        rc = steps[i].run(m, err);
    if (rc == 0) {
        start_event(m);
        pthread_mutex_lock(&m->d.lock);
        vg_serve_kick(&m->d);
        pthread_mutex_unlock(&m->d.lock);
        loop(m);
    }
    teardown(m);
    free(m);
    return rc;
}
