/* notify_net.c: connect, bind, listen, sendto and sendmsg carried out by vigil,
 * on a pidfd_getfd copy of the caller's socket (the same open file: its
 * O_NONBLOCK, SO_* options and state are the candidate's own) with the
 * decided copy of the address, so the kernel never reads the address from
 * the candidate's memory again.  A send's payload is copied too, once and
 * bounded (MAX_SEND).  The result is the call's own: bytes sent, 0, or
 * -errno (EINPROGRESS of a non-blocking connect included).
 *
 * Calls with no address (a send on a connected socket) are not decided
 * and stay the kernel's.  A pathname AF_UNIX address is a file: vigil
 * opens it inside the sandbox root with no symlink followed, and the
 * kernel is given /proc/self/fd/N for it, which names that very inode.  A
 * unix bind creates its name, which the kernel stores as given: it is
 * left to the kernel (CONTINUE, listed in docs/SECURITY.md), as is
 * sendmmsg.  listen is carried out on every socket, bound ones included
 * (nothing to decide, nothing recorded): the copy is checked to be the
 * socket examined, so a bound socket swapped for an unbound one after the
 * look is not made to listen on a port vigil did not decide. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "tracer/decode_impl.h"
#include "tracer/notify/notify_int.h"

/* The most a carried-out send copies.  A larger send on a stream socket
 * sends this much (a short count, which stream sends may return); a
 * larger datagram fails EMSGSIZE (UDP's own limit is 64 KiB). */
#define MAX_SEND (1u << 20)
#define VG_IOV_MAX 1024u
#define VG_SCM_MAX_FD 253 /* the kernel's SCM_MAX_FD: fds one message may carry */

enum net_op { NET_CONNECT, NET_BIND, NET_LISTEN, NET_SENDTO, NET_SENDMSG };

static const struct {
    int nr;
    enum net_op op;
} rows[] = {
    {SYS_connect, NET_CONNECT},
    {SYS_bind, NET_BIND},
    {SYS_listen, NET_LISTEN},
    {SYS_sendto, NET_SENDTO},
    {SYS_sendmsg, NET_SENDMSG},
};

static int op_of(int nr)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(rows); i++)
        if (rows[i].nr == nr)
            return (int)rows[i].op;
    return -1;
}

bool vg_nt_net_takes(const struct vg_call *c)
{
    if (c->nr == SYS_listen)
        return !c->undecidable; /* see above */
    /* without an address nothing was decided: the kernel's (not recorded) */
    if (op_of(c->nr) < 0 || !c->has_sa)
        return false;
    return !(c->nr == SYS_bind && c->sa.ss_family == AF_UNIX); /* see above */
}

struct net_job {
    enum net_op op;
    const struct vg_call *c;
    int root_fd;
    int sock;                 /* the copy of the caller's socket */
    struct sockaddr_storage sa;
    socklen_t salen;
    char *buf;                /* the payload, len bytes */
    size_t len;
    int flags;                /* MSG_* */
    void *control;            /* sendmsg: its control data, fds translated */
    size_t controllen;
};

/* ---- in the thread acting as the candidate ---- */

/* A pathname unix address: the inode it names, opened inside the sandbox
 * (connect and send follow symlinks; the decided path has them resolved),
 * and the address rewritten to /proc/self/fd/N, which the kernel follows
 * to that inode and nowhere else.  *pfd gets the fd to close. */
static long unix_target(struct net_job *j, int *pfd)
{
    struct sockaddr_un *un = (struct sockaddr_un *)&j->sa;
    *pfd = -1;
    if (j->sa.ss_family != AF_UNIX || j->salen <= offsetof(struct sockaddr_un, sun_path) ||
        un->sun_path[0] == '\0')
        return 0; /* unnamed or abstract: no file (abstract names live in the socket's netns) */
    const char *path = j->c->check_path;
    if (!path || path[0] != '/')
        return -ENOENT;
    int fd = vg_nt_open_in_root(j->root_fd, path, 0);
    if (fd < 0)
        return fd;
    memset(un->sun_path, 0, sizeof un->sun_path);
    snprintf(un->sun_path, sizeof un->sun_path, "/proc/self/fd/%d", fd);
    j->salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(un->sun_path) + 1);
    *pfd = fd;
    return 0;
}

static long do_net(void *arg)
{
    struct net_job *j = arg;
    int pfd;
    long r = unix_target(j, &pfd);
    if (r < 0)
        return r;
    struct iovec iov = {.iov_base = j->buf, .iov_len = j->len};
    struct msghdr m = {.msg_name = &j->sa, .msg_namelen = j->salen, .msg_iov = &iov,
                       .msg_iovlen = 1, .msg_control = j->control,
                       .msg_controllen = j->controllen};
    switch (j->op) {
    case NET_CONNECT:
        r = connect(j->sock, (struct sockaddr *)&j->sa, j->salen);
        break;
    case NET_BIND:
        r = bind(j->sock, (struct sockaddr *)&j->sa, j->salen);
        break;
    case NET_LISTEN:
        r = listen(j->sock, (int)j->c->a[1]);
        break;
    case NET_SENDTO:
    case NET_SENDMSG:
        r = sendmsg(j->sock, &m, j->flags);
        break;
    }
    r = r < 0 ? -errno : r;
    if (pfd >= 0)
        close(pfd);
    return r;
}

/* ---- copying the arguments (the supervisor's side) ---- */

/* The caller's socket, checked to be the one the decision examined:
 * another thread may have put another socket at that number since. */
static int copy_socket(const struct vg_task *t, const struct vg_call *c, int fdnum)
{
    int pidfd = (int)syscall(SYS_pidfd_open, t->tgid, 0);
    int fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, fdnum, 0);
    if (pidfd >= 0)
        close(pidfd);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_ino != c->sock_ino || !S_ISSOCK(st.st_mode))) {
        close(fd);
        return -EBADF; /* not the socket decided any more */
    }
    return fd < 0 ? -EBADF : fd;
}

/* Bounded copy of len bytes of payload: the whole of it, or (stream
 * sockets) its first MAX_SEND bytes. */
static int payload_len(const struct vg_call *c, size_t want, size_t *len)
{
    *len = want;
    if (want <= MAX_SEND)
        return 0;
    if (c->sock_type != SOCK_STREAM)
        return -EMSGSIZE;
    *len = MAX_SEND;
    return 0;
}

static int copy_sendto(struct vg_tracee *tr, struct net_job *j)
{
    const struct vg_call *c = j->c;
    j->flags = (int)c->a[3];
    if (payload_len(c, (size_t)c->a[2], &j->len) < 0)
        return -EMSGSIZE;
    j->buf = j->len ? malloc(j->len) : NULL;
    if (j->len && !j->buf)
        return -ENOMEM;
    return j->len && vg_tracee_read(tr, c->a[1], j->buf, j->len) < 0 ? -EFAULT : 0;
}

/* Control data names fds of the caller (SCM_RIGHTS): each is replaced by
 * a copy in vigil, so that the peer gets the candidate's files and never
 * vigil's own.  Credentials (SCM_CREDENTIALS) would be checked against
 * vigil, not the candidate: refused (EPERM). */
static int translate_rights(const struct vg_task *t, struct net_job *j, int *fds, size_t *nfds)
{
    struct msghdr m = {.msg_control = j->control, .msg_controllen = j->controllen};
    int pidfd = (int)syscall(SYS_pidfd_open, t->tgid, 0);
    if (pidfd < 0)
        return -ESRCH;
    int r = 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h && !r; h = CMSG_NXTHDR(&m, h)) {
        if (h->cmsg_level != SOL_SOCKET)
            continue; /* IP_TTL, IP_PKTINFO...: plain data */
        if (h->cmsg_type != SCM_RIGHTS) {
            r = -EPERM;
            break;
        }
        size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n && !r; i++) {
            int *slot = (int *)(void *)CMSG_DATA(h) + i;
            int fd = (int)syscall(SYS_pidfd_getfd, pidfd, *slot, 0);
            if (fd < 0 || *nfds >= VG_SCM_MAX_FD) {
                if (fd >= 0)
                    close(fd);
                r = -EBADF;
                break;
            }
            fds[(*nfds)++] = *slot = fd;
        }
    }
    close(pidfd);
    return r;
}

/* sendmsg: the payload of every iovec (one buffer: a send's boundaries are
 * the message's, not the iovecs') and the control data.  The address is
 * the decided one, never read again. */
static int copy_sendmsg(struct vg_tracee *tr, struct net_job *j)
{
    const struct vg_call *c = j->c;
    struct msghdr m;
    j->flags = (int)c->a[2];
    if (vg_tracee_read(tr, c->a[1], &m, sizeof m) < 0)
        return -EFAULT;
    if (m.msg_iovlen > VG_IOV_MAX)
        return -EMSGSIZE;
    struct iovec iov[VG_IOV_MAX];
    if (m.msg_iovlen && vg_tracee_read(tr, (uint64_t)(uintptr_t)m.msg_iov, iov,
                                       m.msg_iovlen * sizeof *iov) < 0)
        return -EFAULT;
    size_t want = 0;
    for (size_t i = 0; i < m.msg_iovlen; i++)
        want += iov[i].iov_len > SSIZE_MAX - want ? SSIZE_MAX - want : iov[i].iov_len;
    if (payload_len(c, want, &j->len) < 0)
        return -EMSGSIZE;
    if (m.msg_controllen > MAX_SEND)
        return -ENOBUFS;
    j->buf = malloc(j->len + m.msg_controllen + 1);
    if (!j->buf)
        return -ENOMEM;
    size_t off = 0;
    for (size_t i = 0; i < m.msg_iovlen && off < j->len; i++) {
        size_t n = iov[i].iov_len < j->len - off ? iov[i].iov_len : j->len - off;
        if (n && vg_tracee_read(tr, (uint64_t)(uintptr_t)iov[i].iov_base, j->buf + off, n) < 0)
            return -EFAULT;
        off += n;
    }
    j->controllen = m.msg_controllen;
    j->control = m.msg_controllen ? j->buf + j->len : NULL;
    if (j->controllen && vg_tracee_read(tr, (uint64_t)(uintptr_t)m.msg_control, j->control,
                                        j->controllen) < 0)
        return -EFAULT;
    return 0;
}

static int prepare(struct nt *n, const struct vg_task *t, struct net_job *j, int *fds,
                   size_t *nfds)
{
    struct vg_tracee tr = {.tid = t->tid, .pid = t->tgid, .nspid = t->nspid, .nstid = t->nstid,
                           .root_fd = n->pt.root_fd, .cache = n->pt.canon, .pivoted = true};
    const struct vg_call *c = j->c;
    if (c->salen > sizeof j->sa)
        return -EINVAL;
    memcpy(&j->sa, &c->sa, c->salen);
    j->salen = c->salen;
    j->sock = copy_socket(t, c, (int)c->a[0]);
    if (j->sock < 0)
        return j->sock;
    int r = 0;
    if (j->op == NET_SENDTO)
        r = copy_sendto(&tr, j);
    else if (j->op == NET_SENDMSG && (r = copy_sendmsg(&tr, j)) == 0 && j->controllen)
        r = translate_rights(t, j, fds, nfds);
    return r;
}

long vg_nt_net(struct nt *n, struct vg_task *t, struct vg_call *c, struct vg_call_verdict *v)
{
    (void)v; /* decided once: nothing here can change what was decided */
    struct net_job j = {.op = (enum net_op)op_of(c->nr), .c = c, .root_fd = n->pt.root_fd,
                        .sock = -1};
    int fds[VG_SCM_MAX_FD];
    size_t nfds = 0;
    long r = prepare(n, t, &j, fds, &nfds);
    uint64_t id = n->req->id;
    if (r == 0 && ioctl(n->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
        r = -ESRCH; /* what was copied may not be the caller's */
    if (r == 0) {
        r = vg_nt_as_candidate(n, t, do_net, &j);
        /* the kernel signals the sender (vigil's thread, which ignores
         * it); the candidate asked for it */
        if (r == -EPIPE && (j.op == NET_SENDTO || j.op == NET_SENDMSG) && !(j.flags & MSG_NOSIGNAL))
            syscall(SYS_tgkill, t->tgid, t->tid, SIGPIPE);
    }
    for (size_t i = 0; i < nfds; i++)
        close(fds[i]);
    if (j.sock >= 0)
        close(j.sock);
    free(j.buf);
    return r;
}
