/* hold.c: the socket side of a prepared run, `vigil run --hold FD`
 * (docs/RUN.md, "Prepared runs: --hold").  The sandbox is built before the
 * command is known (run.c); here the socket is checked, "ready" said, the
 * one request waited for (EOF or SIGTERM instead end the held sandbox
 * unused), and read: its JSON into the run's options, its three fds for
 * the candidate's streams.  A request that is refused is refused before
 * anything of the command exists, in one line naming what is wrong. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "run/run_int.h"
#include "util/jsonr.h"

/* The request's size limit: below a unix socket's default send buffer
 * (net.core.wmem_default, 208 KiB), so a daemon needs no tuning to send
 * up to it.  The command and environment go in it; files go in --workdir. */
#define VG_HOLD_MSG_MAX (128 * 1024)
static const char ready_msg[] = "ready\n";
static const char *const known_keys[] = {"argv", "env", "log", "result", "task_id"};
#define KNOWN_KEYS_TEXT "argv env log result task_id"

int vg_hold_check(struct run *r)
{
    int fd = (int)r->o->hold_fd, domain = 0, type = 0;
    socklen_t len = sizeof domain;
    errno = 0; /* an open fd of the wrong kind sets none */
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
        (len = sizeof type, getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0) ||
        domain != AF_UNIX || type != SOCK_SEQPACKET) {
        vg_errf(&r->err, "--hold %d: not an AF_UNIX SOCK_SEQPACKET socket%s%s", fd,
                errno == EBADF ? ": " : "", errno == EBADF ? strerror(errno) : "");
        return -1;
    }
    /* Neither pasta nor the candidate may inherit it. */
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        vg_errf(&r->err, "--hold %d: %s", fd, strerror(errno));
        return -1;
    }
    return 0;
}

/* Until the request is there (0), or SIGTERM/SIGINT/SIGHUP came, or the
 * sandbox's pid 1 died (-1: a held sandbox whose pid 1 was killed would
 * otherwise take a request and fail it; now its vigil goes, and its
 * socket's EOF tells the daemon or batch to run the task cold).  The
 * signals are blocked (run.c), so a signalfd reads them. */
static int wait_request(struct run *r, int fd, pid_t init_pid)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (sfd < 0) {
        vg_errf(&r->err, "--hold: signalfd: %s", strerror(errno));
        return -1;
    }
    int pidfd = (int)syscall(VG_NR_pidfd_open, init_pid, 0);
    if (pidfd < 0) {
        vg_errf(&r->err, "--hold: pidfd_open of pid 1: %s", strerror(errno));
        close(sfd);
        return -1;
    }
    struct pollfd pf[3] = {{.fd = fd, .events = POLLIN}, {.fd = sfd, .events = POLLIN},
                           {.fd = pidfd, .events = POLLIN}};
    int n;
    while ((n = poll(pf, 3, -1)) < 0 && errno == EINTR)
        ;
    struct signalfd_siginfo si = {0};
    int rc = 0;
    if (n < 0) {
        vg_errf(&r->err, "--hold: poll: %s", strerror(errno));
        rc = -1;
    } else if (pf[1].revents && read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
        vg_errf(&r->err, "--hold: %s while holding: the prepared sandbox is destroyed unused",
                strsignal((int)si.ssi_signo));
        rc = -1;
    } else if (pf[2].revents && !pf[0].revents) {
        vg_errf(&r->err, "--hold: the sandbox's pid 1 ended while holding: the prepared "
                         "sandbox is destroyed unused");
        rc = -1;
    }
    close(pidfd);
    close(sfd);
    return rc;
}

static void close_fds(int *fds, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* The fds an SCM_RIGHTS message carried into fds (at most max); how many,
 * counting those beyond max (closed at once). */
static unsigned take_fds(struct msghdr *m, int *fds, unsigned max)
{
    unsigned n = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        unsigned k = (unsigned)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (unsigned i = 0; i < k; i++, n++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (n < max)
                fds[n] = fd;
            else
                close(fd);
        }
    }
    return n;
}

/* One message: its bytes into buf (*len) and its fds (the first
 * VG_HOLD_NFDS into r->held.fds, how many in *nfds_out). */
static int receive(struct run *r, int fd, char *buf, size_t *len, unsigned *nfds_out)
{
    /* room for one fd more than wanted, to see that there were more */
    char ctl[CMSG_SPACE((VG_HOLD_NFDS + 1) * sizeof(int))];
    struct iovec iov = {.iov_base = buf, .iov_len = VG_HOLD_MSG_MAX};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = sizeof ctl};
    ssize_t n;
    while ((n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    int got[VG_HOLD_NFDS] = {-1, -1, -1};
    unsigned nfds = n >= 0 ? take_fds(&m, got, VG_HOLD_NFDS) : 0;
    if (n <= 0 && !nfds) /* an empty message with fds is a request, and a bad one */
        vg_errf(&r->err, "--hold %d: %s before a request came: the prepared sandbox is "
                "destroyed unused", fd, n == 0 ? "the socket was closed" : strerror(errno));
    else if (m.msg_flags & MSG_TRUNC)
        vg_errf(&r->err, "--hold: the request is larger than %d bytes", VG_HOLD_MSG_MAX);
    else if (n == 0)
        vg_errf(&r->err, "--hold: the request is empty: it must be a JSON object");
    else {
        memcpy(r->held.fds, got, sizeof got);
        *len = (size_t)n;
        *nfds_out = (m.msg_flags & MSG_CTRUNC) ? VG_HOLD_NFDS + 1 : nfds;
        return 0;
    }
    close_fds(got, VG_HOLD_NFDS);
    return -1;
}

/* Checked once "result" is read, so that its error record goes there. */
static int check_nfds(struct run *r, unsigned nfds)
{
    if (nfds == VG_HOLD_NFDS)
        return 0;
    vg_errf(&r->err, "--hold: the request carries %u fds: it must carry exactly %d (stdin, "
            "stdout, stderr) as SCM_RIGHTS", nfds, VG_HOLD_NFDS);
    return -1;
}

static int bad_key(struct run *r, const char *key, const char *what)
{
    vg_errf(&r->err, "--hold: the request's \"%s\" %s", key, what);
    return -1;
}

static int check_keys(struct run *r, const struct vg_jv *v)
{
    for (size_t i = 0; i < v->n; i++) {
        bool known = false;
        for (size_t k = 0; k < VG_ARRAY_LEN(known_keys) && !known; k++)
            known = !strcmp(v->keys[i], known_keys[k]);
        if (!known)
            return bad_key(r, v->keys[i], "is not a key of it (" KNOWN_KEYS_TEXT ")");
        for (size_t k = 0; k < i; k++)
            if (!strcmp(v->keys[i], v->keys[k]))
                return bad_key(r, v->keys[i], "is given twice");
    }
    return 0;
}

/* A string member (NULL when absent) that must be an absolute path. */
static int path_member(struct run *r, const struct vg_jv *v, const char *key, char **out)
{
    const struct vg_jv *m = vg_jv_get(v, key);
    if (!m)
        return 0;
    if (m->type != VG_JSTR || m->s[0] != '/')
        return bad_key(r, key, "must be an absolute path");
    *out = vg_xstrdup(m->s);
    return 0;
}

/* A list of strings (argv, env) into a NULL-terminated copy. */
static int strings_member(struct run *r, const struct vg_jv *v, const char *key, char ***out,
                          unsigned *n)
{
    const struct vg_jv *m = vg_jv_get(v, key);
    *n = 0;
    if (!m)
        return 0;
    bool ok = m->type == VG_JARR;
    for (size_t i = 0; ok && i < m->n; i++)
        ok = m->items[i].type == VG_JSTR;
    if (!ok)
        return bad_key(r, key, "must be a list of strings");
    *out = vg_xcalloc(m->n + 1, sizeof **out);
    for (size_t i = 0; i < m->n; i++)
        (*out)[i] = vg_xstrdup(m->items[i].s);
    *n = (unsigned)m->n;
    return 0;
}

static int check_env(struct run *r)
{
    for (unsigned i = 0; i < r->held.nenv; i++) {
        const char *e = r->held.env[i];
        if (!e[0] || e[0] == '=')
            return bad_key(r, "env", "entries are NAME=VALUE or NAME, as --env's");
    }
    return 0;
}

/* The request's JSON: "result" first, so that a request refused for
 * anything else still gets its error record there. */
static int parse(struct run *r, const char *text, size_t len, unsigned nfds)
{
    struct vg_err jerr;
    struct vg_jv *v = vg_jv_parse(text, len, &jerr);
    if (!v) {
        vg_errf(&r->err, "--hold: the request is not JSON: %s", jerr.msg);
        return -1;
    }
    struct vg_held *h = &r->held;
    int rc = -1;
    if (v->type != VG_JOBJ) {
        vg_errf(&r->err, "--hold: the request must be a JSON object");
        goto out;
    }
    if (path_member(r, v, "result", &h->result) < 0)
        goto out;
    if (h->result)
        r->o->result_path = h->result;
    const struct vg_jv *task = vg_jv_get(v, "task_id");
    if (check_nfds(r, nfds) < 0 || check_keys(r, v) < 0 ||
        path_member(r, v, "log", &h->log) < 0 ||
        strings_member(r, v, "argv", &h->argv, &h->argc) < 0 ||
        strings_member(r, v, "env", &h->env, &h->nenv) < 0 || check_env(r) < 0)
        goto out;
    if (task && task->type != VG_JSTR) {
        bad_key(r, "task_id", "must be a string");
        goto out;
    }
    if (!h->argc) {
        vg_errf(&r->err, "--hold: the request has no \"argv\" (a non-empty list of strings)");
        goto out;
    }
    h->task_id = task ? vg_xstrdup(task->s) : NULL;
    rc = 0;
out:
    vg_jv_free(v);
    return rc;
}

/* The request as the run's options: as if they had been given with the
 * command (-o, --result, --task-id, --env last, -- ARGV). */
static void apply(struct run *r)
{
    struct vg_held *h = &r->held;
    r->o->argv = h->argv;
    r->o->argc = (int)h->argc;
    if (h->log)
        r->o->log_path = h->log;
    if (h->task_id)
        r->o->task_id = h->task_id;
    r->plan.argv = h->argv;
    for (unsigned i = 0; i < h->nenv; i++) {
        char *eq = strchr(h->env[i], '=');
        char *name = eq ? vg_xstrndup(h->env[i], (size_t)(eq - h->env[i])) : NULL;
        const char *value = eq ? eq + 1 : getenv(h->env[i]);
        if (value)
            vg_plan_set_env(&r->plan, name ? name : h->env[i], value);
        free(name);
    }
}

int vg_hold_request(struct run *r, pid_t init_pid)
{
    int fd = (int)r->o->hold_fd;
    if (send(fd, ready_msg, sizeof ready_msg - 1, MSG_NOSIGNAL) < 0) {
        vg_errf(&r->err, "--hold %d: cannot say ready: %s", fd, strerror(errno));
        return -1;
    }
    char *buf = vg_xmalloc(VG_HOLD_MSG_MAX);
    size_t len = 0;
    unsigned nfds = 0;
    int rc = wait_request(r, fd, init_pid) < 0 || receive(r, fd, buf, &len, &nfds) < 0 ||
             parse(r, buf, len, nfds) < 0 ? -1 : 0;
    free(buf);
    if (rc == 0)
        apply(r);
    return rc;
}

void vg_hold_free(struct vg_held *h)
{
    close_fds(h->fds, VG_HOLD_NFDS);
    for (unsigned i = 0; i < h->argc; i++)
        free(h->argv[i]);
    free(h->argv);
    for (unsigned i = 0; i < h->nenv; i++)
        free(h->env[i]);
    free(h->env);
    free(h->log);
    free(h->result);
    free(h->task_id);
}
