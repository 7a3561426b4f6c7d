/* opener_child.c: the opener's loop, inside the sandbox (see opener.h).
 * It runs nothing but this: no stdio, no allocation. */
#include "tracer/notify/opener.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int do_open(const struct vg_open_req *q, struct vg_open_rep *r)
{
    struct open_how how = {.flags = (q->flags | O_CLOEXEC), .mode = q->mode};
    if (q->how == VG_OPEN_EXACT) {
        how.resolve = RESOLVE_NO_SYMLINKS;
    } else {
        /* what a magic link leads to is only known once it is open */
        how.flags &= ~(uint64_t)(O_CREAT | O_TRUNC);
        how.mode = 0;
    }
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, q->path, &how, sizeof how);
    if (fd < 0)
        return -errno;
    if (q->how == VG_OPEN_PROC) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, r->real, sizeof r->real - 1);
        r->real[n > 0 ? n : 0] = 0;
    }
    return fd;
}

static int reply(int sock, const struct vg_open_rep *r, int fd)
{
    size_t len = offsetof(struct vg_open_rep, real) + strlen(r->real) + 1;
    struct iovec iov = {.iov_base = (void *)r, .iov_len = len};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        m.msg_control = u.buf;
        m.msg_controllen = sizeof u.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    return sendmsg(sock, &m, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

_Noreturn void vg_opener_serve(int sock)
{
    struct vg_open_req q;
    struct vg_open_rep r;
    umask(0); /* the supervisor applies the caller's */
    for (;;) {
        ssize_t n = recv(sock, &q, sizeof q, 0);
        if (n <= 0)
            _exit(n < 0);
        if ((size_t)n <= offsetof(struct vg_open_req, path) || q.path[n - 1 - offsetof(struct vg_open_req, path)]) {
            _exit(2); /* not a request of ours */
        }
        r.real[0] = 0;
        int fd = do_open(&q, &r);
        r.err = fd < 0 ? -fd : 0;
        int rc = reply(sock, &r, fd);
        if (fd >= 0)
            close(fd);
        if (rc < 0)
            _exit(1);
    }
}
