/* notify_net.c: connect, bind, listen, sendto, sendmsg and sendmmsg
 * carried out by vigil, on a pidfd_getfd copy of the caller's socket
 * checked to be the socket the decision examined (the same open file: its
 * O_NONBLOCK, SO_* options and state are the candidate's own), with the
 * decided copy of each address, so the kernel never reads an address from
 * the candidate's memory again.  A send's payload and control data are
 * copied too, once and bounded (notify_msg.h).  The result is the call's
 * own: bytes or messages sent, 0, or -errno (EINPROGRESS of a non-blocking
 * connect included).
 *
 * Sends with no address (on a connected socket) are not decided; a
 * sendto's (a NULL register) stays the kernel's, a sendmsg's (memory) is
 * carried out with no name.  A pathname AF_UNIX address is a file: vigil opens it
 * inside the sandbox root with no symlink followed, and the kernel is
 * given /proc/self/fd/N for it, which names that very inode.  A unix bind
 * creates its name, which the kernel stores as given: it is left to the
 * kernel (CONTINUE, listed in docs/SECURITY.md).  listen is carried out on
 * every socket, bound ones included (nothing to decide, nothing recorded):
 * a bound socket swapped for an unbound one after the look is not made to
 * listen on a port vigil did not decide. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "tracer/mem.h"
#include "tracer/decode_impl.h"
#include "tracer/notify/notify_int.h"
#include "tracer/notify/notify_msg.h"

#define VG_IOV_MAX 1024u /* the kernel's UIO_MAXIOV: iovecs and sendmmsg messages */

/* The ops of this carrier (the syscall table's carry column says which
 * call is which). */
static bool is_net_op(enum vg_carry op)
{
    return vg_carrier_of(op) == VG_CARRIER_NET;
}

bool vg_nt_net_knows(enum vg_carry op)
{
    switch (op) {
    case VG_CARRY_CONNECT:
    case VG_CARRY_BIND:
    case VG_CARRY_LISTEN:
    case VG_CARRY_SENDTO:
    case VG_CARRY_SENDMSG:
    case VG_CARRY_SENDMMSG:
        return is_net_op(op);
    default:
        return false;
    }
}

bool vg_nt_net_takes(const struct vg_call *c)
{
    enum vg_carry op = c->ent ? c->ent->carry : VG_CARRY_CONT;
    if (!vg_nt_net_knows(op))
        return false;
    if (op == VG_CARRY_LISTEN)
        return !c->undecidable; /* see above */
    /* without an address nothing was decided, and a sendto's NULL address
     * (a register) stays so: the kernel's (not recorded).  A msghdr's is
     * memory: the kernel would read it again, and a datagram socket would
     * send where a flipped msg_name says (a stream socket ignores it, but
     * another thread can dup2 a datagram socket onto its number
     * meanwhile).  So these are carried out, with no name, on the socket
     * examined. */
    if (!c->has_sa)
        return !c->undecidable &&
               (op == VG_CARRY_SENDMSG || (op == VG_CARRY_SENDMMSG && c->nmsgs));
    return !(op == VG_CARRY_BIND && c->sa.ss_family == AF_UNIX); /* see above */
}

struct net_job {
    enum vg_carry op;
    const struct vg_call *c;
    int root_fd;
    int sock;                 /* the copy of the caller's socket */
    int flags;                /* MSG_* */
    struct vg_nt_msgs ms;     /* connect, bind: one, with the address only */
    unsigned *sent;           /* sendmmsg: each message's msg_len, as the kernel fills it */
};

/* ---- in the thread acting as the candidate ---- */

/* A pathname unix address: the inode it names, opened inside the sandbox
 * (connect and send follow symlinks; the decided path has them resolved),
 * and the address rewritten to /proc/self/fd/N, which the kernel follows
 * to that inode and nowhere else.  *pfd gets the fd to close. */
static long unix_target(int root_fd, struct vg_nt_msg *m, int *pfd)
{
    *pfd = -1;
    if (!m->unix_path)
        return 0; /* not a file: inet, unnamed or abstract (abstract names live in the
                   * socket's own netns) */
    if (m->unix_path[0] != '/')
        return -ENOENT;
    int fd = vg_nt_open_in_root(root_fd, m->unix_path, 0);
    if (fd < 0)
        return fd;
    struct sockaddr_un *un = (struct sockaddr_un *)&m->sa;
    memset(un->sun_path, 0, sizeof un->sun_path);
    snprintf(un->sun_path, sizeof un->sun_path, "/proc/self/fd/%d", fd);
    m->salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(un->sun_path) + 1);
    *pfd = fd;
    return 0;
}

/* The sends: every message with its decided destination. */
static long send_all(struct net_job *j, int *pfds)
{
    struct mmsghdr *mm = calloc(j->ms.n ? j->ms.n : 1, sizeof *mm);
    if (!mm)
        return -ENOMEM;
    long r = 0;
    for (unsigned i = 0; i < j->ms.n && r == 0; i++) {
        struct vg_nt_msg *m = &j->ms.m[i];
        r = unix_target(j->root_fd, m, &pfds[i]);
        mm[i].msg_hdr = (struct msghdr){.msg_name = m->salen ? &m->sa : NULL,
                                        .msg_namelen = m->salen, .msg_iov = &m->iov,
                                        .msg_iovlen = 1, .msg_control = m->control,
                                        .msg_controllen = m->controllen};
    }
    if (r == 0 && j->op == VG_CARRY_SENDMMSG) {
        r = sendmmsg(j->sock, mm, j->ms.n, j->flags);
        for (long i = 0; i < r && j->sent; i++)
            j->sent[i] = mm[i].msg_len;
    } else if (r == 0)
        r = sendmsg(j->sock, &mm[0].msg_hdr, j->flags);
    r = r < 0 ? -errno : r;
    free(mm);
    return r;
}

static long do_net(void *arg)
{
    struct net_job *j = arg;
    int *pfds = malloc((j->ms.n ? j->ms.n : 1) * sizeof *pfds);
    if (!pfds)
        return -ENOMEM;
    for (unsigned i = 0; i < (j->ms.n ? j->ms.n : 1); i++)
        pfds[i] = -1;
    struct vg_nt_msg *m = j->ms.m;
    long r = 0;
    switch (j->op) {
    case VG_CARRY_CONNECT:
        r = unix_target(j->root_fd, m, &pfds[0]);
        if (r == 0)
            r = connect(j->sock, (struct sockaddr *)&m->sa, m->salen) < 0 ? -errno : 0;
        break;
    case VG_CARRY_BIND:
        r = bind(j->sock, (struct sockaddr *)&m->sa, m->salen) < 0 ? -errno : 0;
        break;
    case VG_CARRY_LISTEN:
        r = listen(j->sock, (int)j->c->a[1]) < 0 ? -errno : 0;
        break;
    case VG_CARRY_SENDTO:
    case VG_CARRY_SENDMSG:
    case VG_CARRY_SENDMMSG:
        r = send_all(j, pfds);
        break;
    default:
        r = -ENOSYS; /* vg_nt_net_takes takes no other op */
        break;
    }
    for (unsigned i = 0; i < (j->ms.n ? j->ms.n : 1); i++)
        if (pfds[i] >= 0)
            close(pfds[i]);
    free(pfds);
    return r;
}

/* ---- copying the arguments (the supervisor's side) ---- */

/* The caller's socket, checked to be the one the decision examined:
 * another thread may have put another socket at that number since. */
static int copy_socket(const struct vg_task *t, const struct vg_call *c, int fdnum)
{
    int fd = vg_thread_getfd(t->tid, t->tgid, fdnum); /* the caller's own table */
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_ino != c->sock_ino || !S_ISSOCK(st.st_mode))) {
        close(fd);
        return -EBADF; /* not the socket decided any more */
    }
    return fd < 0 ? -EBADF : fd;
}

/* A new message, its destination the call's decided one. */
static struct vg_nt_msg *add_msg(struct net_job *j)
{
    struct vg_nt_msg *m = &j->ms.m[j->ms.n++];
    vg_nt_msg_dest(m, &j->c->sa, j->c->salen, j->c->check_path);
    return m;
}

static int copy_sendto(struct vg_tracee *tr, struct net_job *j)
{
    const struct vg_call *c = j->c;
    j->flags = (int)c->a[3];
    struct iovec iov = {(void *)(uintptr_t)c->a[1], (size_t)c->a[2]};
    int r = vg_nt_msg_copy(tr, &j->ms, add_msg(j), &iov, 1, 0, 0);
    return r == 1 ? -EMSGSIZE : r;
}

/* One struct msghdr of the candidate's (copied): its iovecs and control
 * data; its name is never read again (the decided one is used). */
static int copy_msghdr(struct vg_tracee *tr, struct net_job *j, const struct msghdr *h,
                       struct vg_nt_msg *m)
{
    struct iovec iov[VG_IOV_MAX];
    if (h->msg_iovlen > VG_IOV_MAX)
        return -EMSGSIZE;
    if (h->msg_iovlen &&
        vg_tracee_read(tr, (uint64_t)(uintptr_t)h->msg_iov, iov, h->msg_iovlen * sizeof *iov) < 0)
        return -EFAULT;
    return vg_nt_msg_copy(tr, &j->ms, m, iov, h->msg_iovlen,
                          (uint64_t)(uintptr_t)h->msg_control, h->msg_controllen);
}

static int copy_sendmsg(struct vg_tracee *tr, struct net_job *j)
{
    struct msghdr h;
    j->flags = (int)j->c->a[2];
    if (vg_tracee_read(tr, j->c->a[1], &h, sizeof h) < 0)
        return -EFAULT;
    int r = copy_msghdr(tr, j, &h, add_msg(j));
    return r == 1 ? -EMSGSIZE : r;
}

/* sendmmsg: the messages the decoder judged (nmsgs), each to the
 * destination decided for it; the array is read again for the payloads
 * only.  The messages past the payload bound are not sent (sendmmsg may
 * send fewer than asked and says how many). */
static int copy_sendmmsg(struct vg_tracee *tr, struct net_job *j)
{
    const struct vg_call *c = j->c;
    j->flags = (int)c->a[3];
    if (c->nmsgs == 0 || c->nmsgs > VG_IOV_MAX)
        return -EINVAL;
    j->sent = calloc(c->nmsgs, sizeof *j->sent);
    if (!j->sent)
        return -ENOMEM;
    struct mmsghdr *mm = malloc(c->nmsgs * sizeof *mm);
    struct vg_nt_msg *more = realloc(j->ms.m, c->nmsgs * sizeof *more);
    if (!mm || !more) {
        free(mm);
        if (more)
            j->ms.m = more;
        return -ENOMEM;
    }
    j->ms.m = more;
    memset(more, 0, c->nmsgs * sizeof *more);
    int r = vg_tracee_read(tr, c->a[1], mm, c->nmsgs * sizeof *mm) < 0 ? -EFAULT : 0;
    for (uint32_t i = 0; i < c->nmsgs && r == 0; i++) {
        struct vg_nt_msg *m = &j->ms.m[j->ms.n++];
        uint32_t d = c->msg_dest[i];
        if (d != VG_NO_DEST)
            vg_nt_msg_dest(m, &c->dest_sa[d].sa, c->dest_sa[d].len, c->dests[d].addr);
        r = copy_msghdr(tr, j, &mm[i].msg_hdr, m);
        if (r == 1) {
            j->ms.n--; /* does not fit: sent no more */
            r = j->ms.n ? 0 : -EMSGSIZE;
            break;
        }
    }
    free(mm);
    return r;
}

static int prepare(struct nt *n, const struct vg_task *t, struct net_job *j)
{
    struct vg_tracee tr = {.tid = t->tid, .pid = t->tgid, .nspid = t->nspid, .nstid = t->nstid,
                           .root_fd = n->sup.root_fd, .cache = n->sup.canon, .pivoted = true};
    const struct vg_call *c = j->c;
    if (c->salen > sizeof(struct sockaddr_storage))
        return -EINVAL;
    j->ms = (struct vg_nt_msgs){.pid = t->tgid, .tid = t->tid, .sock_type = c->sock_type,
                                .budget = VG_NT_MAX_SEND};
    j->ms.m = calloc(1, sizeof *j->ms.m);
    if (!j->ms.m)
        return -ENOMEM;
    j->sock = copy_socket(t, c, (int)c->a[0]);
    if (j->sock < 0)
        return j->sock;
    switch (j->op) {
    case VG_CARRY_SENDTO:
        return copy_sendto(&tr, j);
    case VG_CARRY_SENDMSG:
        return copy_sendmsg(&tr, j);
    case VG_CARRY_SENDMMSG:
        return copy_sendmmsg(&tr, j);
    default:
        add_msg(j); /* connect, bind: the address only */
        return 0;
    }
}

/* sendmmsg: the kernel writes each sent message's length into the
 * caller's array (glibc's resolver checks them), so the carried call does
 * too; an array gone by then is EFAULT, as the kernel would say. */
static long give_lens(const struct vg_task *t, const struct vg_call *c, const struct net_job *j,
                      long r)
{
    for (long i = 0; i < r; i++) {
        struct iovec local = {&j->sent[i], sizeof j->sent[i]};
        uintptr_t at = (uintptr_t)c->a[1] + (uintptr_t)i * sizeof(struct mmsghdr) +
                       offsetof(struct mmsghdr, msg_len);
        struct iovec remote = {(void *)at, sizeof j->sent[i]};
        if (process_vm_writev(t->tgid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof j->sent[i])
            return -EFAULT;
    }
    return r;
}

long vg_nt_net(struct nt *n, struct nt_rx *rx, struct vg_task *t, struct vg_call *c,
               struct vg_call_verdict *v)
{
    (void)v; /* decided once: nothing here can change what was decided */
    struct net_job j = {.op = c->ent->carry, .c = c, .root_fd = n->sup.root_fd,
                        .sock = -1};
    long r = prepare(n, t, &j);
    uint64_t id = rx->req->id;
    if (r == 0 && ioctl(n->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
        r = -ESRCH; /* what was copied may not be the caller's */
    if (r == 0) {
        r = vg_nt_as_candidate(n, rx, t, do_net, &j, j.op != VG_CARRY_BIND && j.op != VG_CARRY_LISTEN);
        /* the kernel signals the sender (vigil's thread, which ignores
         * it); the candidate asked for it */
        bool sends = j.op == VG_CARRY_SENDTO || j.op == VG_CARRY_SENDMSG || j.op == VG_CARRY_SENDMMSG;
        if (r == -EPIPE && sends && !(j.flags & MSG_NOSIGNAL) && !rx->caller_left)
            syscall(VG_NR_tgkill, t->tgid, t->tid, SIGPIPE);
    }
    if (r > 0 && j.op == VG_CARRY_SENDMMSG)
        r = give_lens(t, c, &j, r);
    free(j.sent);
    if (j.sock >= 0)
        close(j.sock);
    vg_nt_msgs_free(&j.ms);
    return r;
}
