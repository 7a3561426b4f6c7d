/* as_candidate.c: a supervisor thread that acts as the candidate, for the
 * calls vigil carries out for it (notify_fs.c, notify_net.c).  What vigil
 * does for the candidate, the candidate must have been able to do itself:
 * the thread takes, for itself only, the candidate's uid, gid and groups
 * (raw setresuid/setresgid/setgroups: glibc's wrappers would change every
 * thread of vigil), loses every capability with them, has a umask of its
 * own (unshare(CLONE_FS)) and the candidate's own Landlock ruleset: the
 * identity and ruleset the opener thread takes (opener.h, vg_ident_take).  It never changes back; it lives
 * until the run ends.  Paths it acts on are resolved inside the sandbox's
 * root fd (RESOLVE_IN_ROOT), never in vigil's own view.
 *
 * One job at a time, synchronous for the caller.  The engine's lock is
 * dropped while a job that may block runs (a connect or a send, which may
 * wait for ever): it must not stop the life of processes (or the end of
 * the run) from being handled.  File calls keep it, so that nothing of
 * theirs happens once the run is ending (an exec check's kill). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer/notify/notify_int.h"

/* VG_NT_WAKE_SIG (notify_int.h) interrupts a job blocked in the kernel
 * when the run ends (the candidate is gone, its connect or send may wait
 * forever); the engine installs its handler. */
#define WAKE_SIG VG_NT_WAKE_SIG

struct vg_nt_cand {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int root_fd;
    const struct vg_ident *id; /* the opener's: read at hand-over */
    int ruleset;               /* the candidate's Landlock ruleset, or -1 */
    enum { ST_STARTING, ST_IDLE, ST_BUSY, ST_DONE, ST_FAILED } st;
    bool stop;
    long (*fn)(void *);
    void *arg;
    long ret;
    char why[640];
};

const char *vg_nt_status_field(pid_t tid, const char *key, char *buf, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : read(fd, buf, n - 1);
    if (fd >= 0)
        close(fd);
    if (got <= 0)
        return NULL;
    buf[got] = 0;
    const char *p = strstr(buf, key);
    return p ? p + strlen(key) : NULL;
}

int vg_nt_caller_umask(pid_t tid, mode_t *mask)
{
    char buf[VG_NT_STATUS_MAX];
    const char *u = vg_nt_status_field(tid, "\nUmask:", buf, sizeof buf);
    if (!u)
        return -1;
    *mask = (mode_t)strtoul(u, NULL, 8);
    return 0;
}

static int become_candidate(struct vg_nt_cand *c)
{
    return vg_ident_take(c->id, c->ruleset, c->why, sizeof c->why);
}

static void *cand_main(void *arg)
{
    struct vg_nt_cand *c = arg;
    sigset_t wake;
    sigemptyset(&wake);
    sigaddset(&wake, WAKE_SIG);
    pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
    int ok = become_candidate(c);
    pthread_mutex_lock(&c->mu);
    c->st = ok == 0 ? ST_IDLE : ST_FAILED;
    pthread_cond_broadcast(&c->cv);
    while (c->st != ST_FAILED) {
        while (c->st != ST_BUSY && !c->stop)
            pthread_cond_wait(&c->cv, &c->mu);
        if (c->stop)
            break;
        pthread_mutex_unlock(&c->mu);
        long r = c->fn(c->arg);
        pthread_mutex_lock(&c->mu);
        c->ret = r;
        c->st = ST_DONE;
        pthread_cond_broadcast(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* The thread, made at the first call vigil carries out (the sandbox root
 * and the candidate's ids are known from then on). */
static struct vg_nt_cand *start(struct nt *n, const struct vg_task *t)
{
    struct vg_nt_cand *c = vg_xcalloc(1, sizeof *c);
    (void)t;
    c->root_fd = n->sup.root_fd;
    c->id = &n->opener.id;
    c->ruleset = n->opener.ruleset;
    if (!n->opener.started) {
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (pthread_create(&c->th, NULL, cand_main, c) != 0) {
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
        free(c);
        return NULL;
    }
    pthread_mutex_lock(&c->mu);
    while (c->st == ST_STARTING)
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    return c;
}

long vg_nt_as_candidate(struct nt *n, const struct vg_task *t, long (*fn)(void *), void *arg,
                        bool may_block)
{
    if (!n->cand) {
        n->cand = start(n, t);
        if (!n->cand) {
            vg_nt_fail(n, "notify engine: cannot start the thread that acts as the candidate", 0);
            return -EIO;
        }
    }
    struct vg_nt_cand *c = n->cand;
    pthread_mutex_lock(&c->mu);
    if (c->st == ST_FAILED) {
        pthread_mutex_unlock(&c->mu);
        vg_nt_fail(n, c->why, t->nspid); /* fail closed: nothing is carried out without it */
        return -EIO;
    }
    c->fn = fn;
    c->arg = arg;
    c->st = ST_BUSY;
    pthread_cond_broadcast(&c->cv);
    if (may_block)
        pthread_mutex_unlock(&n->lock);
    while (c->st == ST_BUSY)
        pthread_cond_wait(&c->cv, &c->mu);
    long r = c->ret;
    c->st = ST_IDLE;
    pthread_mutex_unlock(&c->mu);
    if (may_block)
        pthread_mutex_lock(&n->lock);
    return r;
}

void vg_nt_cand_interrupt(struct nt *n)
{
    if (n->cand)
        pthread_kill(n->cand->th, WAKE_SIG);
}

void vg_nt_cand_free(struct nt *n)
{
    struct vg_nt_cand *c = n->cand;
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->th, NULL);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
    n->cand = NULL;
}
