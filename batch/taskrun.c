/* taskrun.c: a task's `vigil run` of this binary, started cold (its whole
 * command line) or prepared (`vigil run --hold FD`, everything but the
 * command, docs/RUN.md "Prepared runs: --hold") and later handed the
 * request.  Both see the same options, work dir, streams and signals, so
 * that a task's result is the same either way.  Every run gets
 * PR_SET_PDEATHSIG: if the batch dies, even by SIGKILL, its runs die, a
 * held one's socket closes too, and their sandboxes go with them. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "batch/batch_int.h"
#include "util/json.h"

#define HOLD_READY "ready\n"
#define READY_MAX 64        /* more than "ready\n": anything else is read whole, and refused */
#define NFDS 3              /* the request's fds: the candidate's stdin, stdout, stderr */

/* The words of a task's `vigil run` besides its flags and command: vigil
 * run -q -o LOG --result R --task-id ID --workdir W (11), --hold FD, -p FILE,
 * --image DIGEST, --host-uid UID, "--" and the final NULL. */
#define RUN_ARGV_FIXED 21

static const char *const *command(const struct vg_batch_task *t)
{
    return t->argv ? (const char *const *)t->argv : t->lang->argv;
}

/* The `vigil run` command line of a task (NULL-terminated, malloc'd);
 * hold >= 0: the prepared sandbox's, without what its request gives;
 * host_uid: its candidate's (0: vigil's default). */
static char **run_argv(const struct vg_batch_opts *o, const struct vg_batch_task *t, int hold,
                       uid_t host_uid)
{
    char *dir = vg_batch_task_dir(o->out, t);
    unsigned argc = 0;
    for (const char *const *a = command(t); *a; a++)
        argc++;
    char **v = vg_xcalloc(RUN_ARGV_FIXED + t->nflags + argc, sizeof *v);
    unsigned n = 0;
    v[n++] = vg_xstrdup(o->vigil);
    v[n++] = vg_xstrdup("run");
    if (hold >= 0) {
        v[n++] = vg_xstrdup("--hold");
        v[n++] = vg_xasprintf("%d", hold);
    }
    v[n++] = vg_xstrdup("-q");
    if (hold < 0) {
        v[n++] = vg_xstrdup("-o");
        v[n++] = vg_xasprintf("%s/run.msgpack", dir);
        v[n++] = vg_xstrdup("--result");
        v[n++] = vg_xasprintf("%s/result.json", dir);
        v[n++] = vg_xstrdup("--task-id");
        v[n++] = vg_xstrdup(t->id);
    }
    v[n++] = vg_xstrdup("--workdir");
    v[n++] = vg_xasprintf("%s/work", dir);
    if (t->policy_file) { /* absolute: the run works in its own directory */
        v[n++] = vg_xstrdup("-p");
        v[n++] = vg_xstrdup(t->policy_file);
    }
    if (host_uid) {
        v[n++] = vg_xstrdup("--host-uid");
        v[n++] = vg_xasprintf("%u", (unsigned)host_uid);
    }
    if (t->image_digest) { /* the digest found when the batch started, not a name */
        v[n++] = vg_xstrdup("--image");
        v[n++] = vg_xstrdup(t->image_digest);
    }
    for (unsigned i = 0; i < t->nflags; i++)
        v[n++] = vg_xstrdup(t->flags[i]);
    if (hold < 0) {
        v[n++] = vg_xstrdup("--");
        for (const char *const *a = command(t); *a; a++)
            v[n++] = vg_xstrdup(*a);
    }
    free(dir);
    return v;
}

static void free_argv(char **v)
{
    for (char **a = v; *a; a++)
        free(*a);
    free(v);
}

/* The files a run's streams are: its stdin, /dev/null for the
 * candidate's stdout (its tail is in the result), vigil.stderr. */
struct streams {
    int in, out, err;
};

static int open_streams(const struct vg_batch_opts *o, const struct vg_batch_task *t,
                        bool want_stdin, struct streams *s, struct vg_err *err)
{
    char *in = want_stdin ? vg_attempt_stdin(o, t) : vg_xstrdup("/dev/null");
    char *said = vg_xasprintf("%s/tasks/%s/vigil.stderr", o->out, t->id);
    s->in = open(in, O_RDONLY | O_CLOEXEC);
    s->out = open("/dev/null", O_RDWR | O_CLOEXEC);
    /* made by vg_attempt_make: appended to, never created or followed */
    s->err = open(said, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    int rc = 0;
    if (s->in < 0 || s->out < 0 || s->err < 0) {
        vg_errf(err, "task %s: open %s: %s", t->id, s->in < 0 ? in : s->out < 0 ? "/dev/null"
                : said, strerror(errno));
        rc = -1;
    }
    free(in);
    free(said);
    return rc;
}

static void close_streams(struct streams *s)
{
    int *fds[] = {&s->in, &s->out, &s->err};
    for (size_t i = 0; i < VG_ARRAY_LEN(fds); i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
}

/* Forks argv with the streams as 0, 1, 2, in the task's work dir, dying
 * with the batch; keep (>= 0) is an fd it inherits.  With a host uid of
 * its own the candidate owns its work dir (the batch made it: attempt.c),
 * as it would be host nobody's. */
static pid_t fork_run(const struct vg_taskrun_env *e, const struct vg_batch_task *t, char **argv,
                      struct streams *s, int keep, uid_t host_uid, struct vg_err *err)
{
    char *work = vg_xasprintf("%s/tasks/%s/work", e->o->out, t->id);
    if (host_uid && lchown(work, host_uid, host_uid) < 0) {
        vg_errf(err, "task %s: chown %s: %s", t->id, work, strerror(errno));
        free(work);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != e->parent ||
            dup2(s->in, 0) < 0 || dup2(s->out, 1) < 0 || dup2(s->err, 2) < 0 ||
            chdir(work) < 0 || (keep >= 0 && fcntl(keep, F_SETFD, 0) < 0))
            _exit(VG_BATCH_INCOMPLETE);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        sigprocmask(SIG_SETMASK, &e->child_mask, NULL);
        execv(argv[0], argv);
        _exit(127);
    }
    free(work);
    if (pid < 0)
        vg_errf(err, "fork: %s", strerror(errno));
    return pid;
}

pid_t vg_taskrun_cold(const struct vg_taskrun_env *e, const struct vg_batch_task *t,
                    uid_t host_uid, struct vg_err *err)
{
    struct streams s = {-1, -1, -1};
    if (open_streams(e->o, t, true, &s, err) < 0) {
        close_streams(&s);
        return -1;
    }
    char **argv = run_argv(e->o, t, -1, host_uid);
    pid_t pid = fork_run(e, t, argv, &s, -1, host_uid, err);
    free_argv(argv);
    close_streams(&s);
    return pid;
}

pid_t vg_taskrun_held(const struct vg_taskrun_env *e, const struct vg_batch_task *t,
                      uid_t host_uid, int *sock, struct vg_err *err)
{
    int sv[2];
    /* both ends close-on-exec: only this run gets its end (fork_run
     * clears the flag in the child alone), so no other run keeps a
     * sandbox waiting after the batch is gone */
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        vg_errf(err, "socketpair: %s", strerror(errno));
        return -1;
    }
    struct streams s = {-1, -1, -1};
    pid_t pid = -1;
    if (open_streams(e->o, t, false, &s, err) == 0) {
        char **argv = run_argv(e->o, t, sv[1], host_uid);
        pid = fork_run(e, t, argv, &s, sv[1], host_uid, err);
        free_argv(argv);
    }
    close_streams(&s);
    close(sv[1]);
    if (pid < 0)
        close(sv[0]);
    else
        *sock = sv[0];
    return pid;
}

int vg_taskrun_ready(int sock, struct vg_err *err)
{
    char buf[READY_MAX + 1];
    ssize_t n = recv(sock, buf, READY_MAX, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n == (ssize_t)strlen(HOLD_READY) && !memcmp(buf, HOLD_READY, (size_t)n))
        return 1;
    if (n == 0)
        return -1; /* its vigil is ending: its exit status says why */
    if (n < 0)
        vg_errf(err, "its socket: %s", strerror(errno));
    else
        vg_errf(err, "it said something other than \"ready\"");
    return -2;
}

static void request_json(const struct vg_batch_opts *o, const struct vg_batch_task *t,
                         struct vg_buf *b)
{
    struct vg_json j;
    char *dir = vg_batch_task_dir(o->out, t);
    char *log = vg_xasprintf("%s/run.msgpack", dir), *res = vg_xasprintf("%s/result.json", dir);
    vg_json_init(&j, b, false);
    vg_json_obj_begin(&j);
    vg_json_key(&j, "argv");
    vg_json_arr_begin(&j);
    for (const char *const *a = command(t); *a; a++)
        vg_json_str(&j, *a);
    vg_json_arr_end(&j);
    vg_json_key(&j, "log");
    vg_json_str(&j, log);
    vg_json_key(&j, "result");
    vg_json_str(&j, res);
    vg_json_key(&j, "task_id");
    vg_json_str(&j, t->id);
    vg_json_obj_end(&j);
    free(log);
    free(res);
    free(dir);
}

static int send_with_fds(int sock, const struct vg_buf *b, const int fds[NFDS])
{
    char ctl[CMSG_SPACE(NFDS * sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = b->data, .iov_len = b->len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = sizeof ctl};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(NFDS * sizeof(int));
    memcpy(CMSG_DATA(c), fds, NFDS * sizeof(int));
    ssize_t n;
    while ((n = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)b->len ? 0 : -1;
}

int vg_taskrun_request(const struct vg_taskrun_env *e, const struct vg_batch_task *t, int sock,
                     struct vg_err *err)
{
    struct streams s = {-1, -1, -1};
    int rc = open_streams(e->o, t, true, &s, err);
    if (rc == 0) {
        struct vg_buf b = {0};
        request_json(e->o, t, &b);
        int fds[NFDS] = {s.in, s.out, s.err};
        rc = send_with_fds(sock, &b, fds);
        if (rc < 0)
            vg_errf(err, "the request could not be sent: %s", strerror(errno));
        vg_buf_free(&b);
    }
    close_streams(&s);
    return rc;
}
