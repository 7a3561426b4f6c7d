/* pool.c: the warm pool (pool.h).  A slot is a box (serve/boxdir.h: its
 * `work` is the held sandbox's --workdir), a host uid of the range, and a
 * `vigil run --hold 3` with the other end of a SOCK_SEQPACKET socketpair.
 * A run takes a ready slot by moving its request's files into the box's
 * work directory and sending the command, the log and result paths and
 * the three streams.  From then on the slot's vigil and box are the
 * run's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "launcher/scratch.h"
#include "serve/boxdir.h"
#include "serve/pool.h"
#include "util/escape.h"
#include "util/json.h"

#define HOLD_FD 3
#define READY "ready\n"
#define SLOT_MAX 256

enum slot_state { SLOT_FREE, SLOT_PREPARING, SLOT_READY, SLOT_DYING };

struct slot {
    enum slot_state state;
    char name[24];          /* the box's name, as the service log says */
    char *dir;              /* STATE/pool/p12 */
    pid_t pid;
    int sock;               /* our end */
    uid_t uid;
};

struct vg_pool {
    struct vg_serve *d;
    char *dir;
    struct slot slots[SLOT_MAX];
    unsigned n;             /* --pool */
    uint64_t cpu_ms, wall_ms; /* what every slot is prepared with */
    uint64_t quiet_until_ns;  /* after a slot failed to prepare: no new one before */
};

/* A preparation that fails (a broken pool policy, no memory) is tried
 * again after this, not at every turn of the loop. */
#define RETRY_NS (5ull * 1000 * 1000 * 1000)

/* The defaults a prepared run has: a request with other grants is cold. */
static uint64_t default_wall(void)
{
    return vg_limit_row(VG_LIM_TIME)->def;
}

struct vg_pool *vg_pool_new(struct vg_serve *d, struct vg_err *err)
{
    struct vg_pool *p = vg_xcalloc(1, sizeof *p);
    p->d = d;
    p->n = d->o->pool < SLOT_MAX ? d->o->pool : SLOT_MAX;
    p->wall_ms = p->cpu_ms = default_wall();
    p->dir = vg_xasprintf("%s/pool", d->o->state);
    for (unsigned i = 0; i < SLOT_MAX; i++)
        p->slots[i].sock = -1;
    /* the pool's directory is the daemon's own: a killed daemon's slots
     * (their vigils died with it) are removed with it */
    if (access(p->dir, F_OK) == 0 && vg_scratch_remove(p->dir) < 0) {
        vg_errf(err, "%s: cannot remove the last daemon's pool", p->dir);
        vg_pool_free(p);
        return NULL;
    }
    if (mkdir(p->dir, 0700) < 0) {
        vg_errf(err, "%s: %s", p->dir, strerror(errno));
        vg_pool_free(p);
        return NULL;
    }
    return p;
}

bool vg_pool_fits(const struct vg_serve *d, const struct vg_sreq *q, uint64_t cpu_ms,
                  uint64_t wall_ms)
{
    if (!d->o->pool || q->policy_text || q->image || q->dry_run)
        return false;
    const char *want = q->policy ? q->policy : "default";
    if (strcmp(want, d->o->pool_policy))
        return false;
    for (int l = 0; l < VG_LIM_COUNT; l++)
        if (q->limit[l])
            return false;
    return cpu_ms == default_wall() && wall_ms == default_wall();
}

/* `vigil run --hold 3 ...` of a slot; in the child, never returns. */
static void slot_child(const struct vg_pool *p, const struct slot *s, int theirs, pid_t parent)
{
    char *work = vg_xasprintf("%s/%s", s->dir, VG_SREQ_WORK);
    char *err = vg_xasprintf("%s/vigil.stderr", s->dir);
    char uid[16], wall[32], cpu[32];
    snprintf(uid, sizeof uid, "%u", (unsigned)s->uid);
    snprintf(wall, sizeof wall, "%" PRIu64 "ms", p->wall_ms);
    snprintf(cpu, sizeof cpu, "%" PRIu64 "ms", p->cpu_ms);
    int cputotal = vg_limit_from_name("cputotal");
    char *argv[24];
    unsigned n = 0;
    argv[n++] = (char *)p->d->o->vigil;
    argv[n++] = "run";
    argv[n++] = "--hold";
    argv[n++] = "3";
    argv[n++] = "-q";
    if (s->uid) {
        argv[n++] = "--host-uid";
        argv[n++] = uid;
    }
    argv[n++] = "-p";
    argv[n++] = (char *)p->d->o->pool_policy;
    argv[n++] = "--workdir";
    argv[n++] = work;
    argv[n++] = "--timeout";
    argv[n++] = wall;
    if (cputotal >= 0) {
        argv[n++] = "--cpu-total";
        argv[n++] = cpu;
    }
    argv[n] = NULL;
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    int efd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent || null < 0 || efd < 0 ||
        dup2(theirs, HOLD_FD) != HOLD_FD || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
        dup2(efd, 2) < 0 || chdir(work) < 0)
        _exit(VG_SERVE_EXIT_VIGIL);
    if (syscall(VG_NR_close_range, HOLD_FD + 1u, ~0u, 0u) < 0)
        for (int fd = HOLD_FD + 1; fd < 1024; fd++)
            close(fd);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    execv(argv[0], argv);
    _exit(VG_SERVE_EXIT_VIGIL);
}

char *vg_pool_box(struct vg_pool *p, uid_t uid, struct vg_err *err)
{
    return vg_boxdir_new(p->dir, uid, err);
}

static int prepare(struct vg_pool *p, struct slot *s)
{
    uid_t uid = vg_sched_take_uid(p->d);
    if (uid == VG_UIDS_NONE)
        return -1; /* every uid is a run's: no slot now */
    int sv[2];
    struct vg_err err;
    s->dir = vg_boxdir_new(p->dir, uid, &err);
    if (!s->dir || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        vg_say(stderr, "vigil serve: pool: %s", s->dir ? strerror(errno) : err.msg);
        vg_sched_give_uid(p->d, uid);
        if (s->dir)
            vg_scratch_remove(s->dir);
        free(s->dir);
        s->dir = NULL;
        return -1;
    }
    snprintf(s->name, sizeof s->name, "%s", strrchr(s->dir, '/') + 1);
    s->uid = uid;
    pid_t parent = getpid(), pid = fork();
    if (pid == 0)
        slot_child(p, s, sv[1], parent);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        vg_sched_give_uid(p->d, uid);
        vg_scratch_remove(s->dir);
        free(s->dir);
        s->dir = NULL;
        return -1;
    }
    s->pid = pid;
    s->sock = sv[0];
    s->state = SLOT_PREPARING;
    return 0;
}

static void forget(struct vg_pool *p, struct slot *s)
{
    if (s->sock >= 0)
        close(s->sock);
    if (s->dir)
        vg_scratch_remove(s->dir);
    free(s->dir);
    vg_sched_give_uid(p->d, s->uid);
    memset(s, 0, sizeof *s);
    s->sock = -1;
}

static unsigned count(const struct vg_pool *p, enum slot_state st)
{
    unsigned n = 0;
    for (unsigned i = 0; i < SLOT_MAX; i++)
        n += p->slots[i].state == st;
    return n;
}

void vg_pool_tick(struct vg_pool *p)
{
    for (unsigned i = 0; i < SLOT_MAX; i++) {
        struct slot *s = &p->slots[i];
        char buf[16];
        if (s->state != SLOT_PREPARING)
            continue;
        ssize_t n = recv(s->sock, buf, sizeof buf, MSG_DONTWAIT);
        if (n == (ssize_t)strlen(READY) && !memcmp(buf, READY, (size_t)n)) {
            s->state = SLOT_READY;
            vg_serve_event(p->d, VG_SVC_PREPARED, NULL,
                           &(struct vg_svc_event){.uid = -1, .slot = s->name,
                                                  .host_uid = s->uid});
        } else if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            /* EOF or junk: its preparation failed; its exit is reaped */
            close(s->sock);
            s->sock = -1;
            s->state = SLOT_DYING;
            p->quiet_until_ns = vg_now_mono_ns() + RETRY_NS;
        }
    }
    while (!p->d->stopping && vg_now_mono_ns() >= p->quiet_until_ns &&
           count(p, SLOT_PREPARING) + count(p, SLOT_READY) < p->n) {
        struct slot *s = NULL;
        for (unsigned i = 0; i < SLOT_MAX && !s; i++)
            if (p->slots[i].state == SLOT_FREE)
                s = &p->slots[i];
        if (!s || prepare(p, s) < 0)
            return;
    }
}

/* The request: the command and its env from the run's command line. */
static char *request_json(const struct vg_srun *r)
{
    struct vg_buf b = {0};
    struct vg_json j;
    vg_json_init(&j, &b, false);
    vg_json_obj_begin(&j);
    size_t dash = 0;
    while (r->cmd[dash] && strcmp(r->cmd[dash], "--"))
        dash++;
    vg_json_key(&j, "argv");
    vg_json_arr_begin(&j);
    for (size_t i = dash + 1; r->cmd[dash] && r->cmd[i]; i++)
        vg_json_str(&j, r->cmd[i]);
    vg_json_arr_end(&j);
    vg_json_key(&j, "env");
    vg_json_arr_begin(&j);
    for (size_t i = 0; i + 1 < dash; i++)
        if (!strcmp(r->cmd[i], "--env"))
            vg_json_str(&j, r->cmd[i + 1]);
    vg_json_arr_end(&j);
    char *log = vg_xasprintf("%s/%s", r->dir, VG_SREQ_LOG);
    char *res = vg_xasprintf("%s/%s", r->dir, VG_SREQ_RESULT);
    vg_json_key(&j, "log"), vg_json_str(&j, log);
    vg_json_key(&j, "result"), vg_json_str(&j, res);
    vg_json_key(&j, "task_id"), vg_json_str(&j, r->task_id ? r->task_id : r->id);
    vg_json_obj_end(&j);
    free(log);
    free(res);
    return b.data;
}

static int send_request(const struct slot *s, const struct vg_srun *r, const int fds[3],
                        struct vg_err *err)
{
    char *body = request_json(r);
    struct iovec iov = {.iov_base = body, .iov_len = strlen(body)};
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(3 * sizeof(int));
    memcpy(CMSG_DATA(c), fds, 3 * sizeof(int));
    ssize_t n = sendmsg(s->sock, &m, MSG_NOSIGNAL);
    free(body);
    if (n != (ssize_t)iov.iov_len)
        return vg_errf(err, "pool slot %s: sending the request: %s", s->name,
                       n < 0 ? strerror(errno) : "short"), -1;
    return 0;
}

int vg_exec_streams(const struct vg_srun *r, int fds[3]); /* serve/exec.c */

int vg_pool_start(struct vg_pool *p, struct vg_srun *r, struct vg_err *err)
{
    struct slot *s = NULL;
    for (unsigned i = 0; i < SLOT_MAX && !s; i++)
        if (p->slots[i].state == SLOT_READY)
            s = &p->slots[i];
    if (!s)
        return 0;
    int fds[3] = {-1, -1, -1};
    /* the request's files into the prepared work dir (the sandbox's bind) */
    int rc = vg_boxdir_fill(s->dir, r->dir, s->uid, err);
    uid_t cold = r->host_uid; /* the one the scheduler took: the slot has its own */
    r->host_uid = s->uid;
    if (rc == 0 && vg_exec_streams(r, fds) < 0)
        rc = (vg_errf(err, "the run's streams: %s", strerror(errno)), -1);
    if (rc == 0)
        rc = send_request(s, r, fds, err);
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (rc < 0) {
        r->host_uid = cold;
        kill(s->pid, SIGTERM);
        close(s->sock);
        s->sock = -1;
        s->state = SLOT_DYING;
        return -1;
    }
    /* the slot's vigil is the run's now: its uid goes back when it ends */
    vg_sched_give_uid(p->d, cold);
    r->pid = s->pid;
    r->pooled = true;
    vg_serve_event(p->d, VG_SVC_ASSIGNED, r,
                   &(struct vg_svc_event){.slot = s->name, .host_uid = s->uid});
    close(s->sock);
    r->box = s->dir; /* the run's now: its work comes back at its end */
    memset(s, 0, sizeof *s);
    s->sock = -1;
    return 1;
}

bool vg_pool_reaped(struct vg_pool *p, pid_t pid)
{
    for (unsigned i = 0; i < SLOT_MAX; i++) {
        struct slot *s = &p->slots[i];
        if (s->state == SLOT_FREE || s->pid != pid)
            continue;
        if (s->state == SLOT_PREPARING) {
            vg_say(stderr, "vigil serve: pool slot %s: its vigil exited before it was ready "
                           "(%s/vigil.stderr says why); trying again in %llu s", s->name, s->dir,
                   RETRY_NS / 1000000000ull);
            p->quiet_until_ns = vg_now_mono_ns() + RETRY_NS;
        }
        vg_serve_event(p->d, VG_SVC_DESTROYED, NULL,
                       &(struct vg_svc_event){.uid = -1, .slot = s->name});
        forget(p, s);
        return true;
    }
    return false;
}

void vg_pool_drain(struct vg_pool *p)
{
    for (unsigned i = 0; i < SLOT_MAX; i++) {
        struct slot *s = &p->slots[i];
        if (s->state == SLOT_FREE)
            continue;
        if (s->sock >= 0)
            close(s->sock); /* EOF: the held vigil destroys its sandbox */
        s->sock = -1;
        s->state = SLOT_DYING;
    }
}

unsigned vg_pool_live(const struct vg_pool *p)
{
    return SLOT_MAX - count(p, SLOT_FREE);
}

void vg_pool_free(struct vg_pool *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < SLOT_MAX; i++)
        if (p->slots[i].state != SLOT_FREE)
            forget(p, &p->slots[i]);
    free(p->dir);
    free(p);
}
