/* notify_msg.c: copying the messages of a carried-out send (notify_msg.h). */
#include "tracer/notify/notify_msg.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "tracer/mem.h"
#include "core/cmsg.h"
#include "util/util.h"

static int keep_fd(struct vg_nt_msgs *ms, int fd)
{
    if (ms->nfds == ms->fdcap) {
        size_t cap = ms->fdcap ? 2 * ms->fdcap : 16;
        int *more = realloc(ms->fds, cap * sizeof *more);
        if (!more)
            return -ENOMEM;
        ms->fds = more;
        ms->fdcap = cap;
    }
    ms->fds[ms->nfds++] = fd;
    return 0;
}

/* Control data names fds of the caller (SCM_RIGHTS): each is replaced by
 * a copy in vigil, so that the peer gets the candidate's files and never
 * vigil's own.  Credentials (SCM_CREDENTIALS) would be checked against
 * vigil's thread, not the candidate: refused (EPERM). */
static int translate_rights(struct vg_nt_msgs *ms, void *control, size_t len)
{
    struct msghdr m = {.msg_control = control, .msg_controllen = len};
    int pidfd = vg_thread_pidfd(ms->tid, ms->pid); /* the caller's own table */
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
        unsigned char *data = CMSG_DATA(h);
        for (size_t i = 0; i < n && !r; i++) {
            int theirs, ours;
            memcpy(&theirs, data + i * sizeof theirs, sizeof theirs);
            ours = (int)syscall(VG_NR_pidfd_getfd, pidfd, theirs, 0);
            if (ours < 0)
                r = -EBADF;
            else if ((r = keep_fd(ms, ours)) < 0)
                close(ours);
            else
                memcpy(data + i * sizeof ours, &ours, sizeof ours);
        }
    }
    close(pidfd);
    return r;
}

/* How much of want bytes of payload the budget takes: all, a cut (stream
 * sockets), or nothing (1: the message does not fit). */
static int take_budget(struct vg_nt_msgs *ms, size_t want, size_t *len)
{
    *len = want;
    if (want <= ms->budget) {
        ms->budget -= want;
        return 0;
    }
    if (ms->sock_type != SOCK_STREAM || ms->budget == 0)
        return 1;
    *len = ms->budget;
    ms->budget = 0;
    return 0;
}

int vg_nt_msg_copy(struct vg_tracee *tr, struct vg_nt_msgs *ms, struct vg_nt_msg *out,
                   const struct iovec *iov, size_t iovlen, uint64_t control, size_t controllen)
{
    size_t want = 0, len;
    for (size_t i = 0; i < iovlen; i++)
        want += iov[i].iov_len < SIZE_MAX / 2 - want ? iov[i].iov_len : SIZE_MAX / 2 - want;
    if (controllen > VG_NT_MAX_SEND)
        return -ENOBUFS;
    if (take_budget(ms, want, &len))
        return 1;
    char *buf = malloc(len + controllen + 1);
    if (!buf)
        return -ENOMEM;
    out->iov = (struct iovec){buf, len};
    out->control = controllen ? buf + len : NULL;
    out->controllen = controllen;
    for (size_t i = 0, off = 0; i < iovlen && off < len; i++) {
        size_t n = iov[i].iov_len < len - off ? iov[i].iov_len : len - off;
        if (n && vg_tracee_read(tr, (uint64_t)(uintptr_t)iov[i].iov_base, buf + off, n) < 0)
            return -EFAULT;
        off += n;
    }
    if (controllen && vg_tracee_read(tr, control, out->control, controllen) < 0)
        return -EFAULT;
    if (!controllen)
        return 0;
    /* The decoder judged the candidate's control data; this copy is what
     * is sent, and another thread may have rewritten it since: judged
     * again (a routing header or source route would send the packet
     * elsewhere than the decided destination). */
    const char *why;
    int r = vg_cmsg_refused(out->control, controllen, &why);
    return r < 0 ? r : translate_rights(ms, out->control, controllen);
}

void vg_nt_msg_dest(struct vg_nt_msg *m, const struct sockaddr_storage *sa, socklen_t len,
                    const char *path)
{
    memcpy(&m->sa, sa, len < sizeof m->sa ? len : sizeof m->sa);
    m->salen = len;
    const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
    bool named = sa->ss_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) &&
                 un->sun_path[0] != '\0';
    m->unix_path = named ? path : NULL;
}

void vg_nt_msgs_free(struct vg_nt_msgs *ms)
{
    for (unsigned i = 0; i < ms->n; i++)
        free(ms->m[i].iov.iov_base);
    free(ms->m);
    for (size_t i = 0; i < ms->nfds; i++)
        close(ms->fds[i]);
    free(ms->fds);
    memset(ms, 0, sizeof *ms);
}
