/* fdpass.c: see fdpass.h. */
#include "util/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

ssize_t vg_fd_send(int sock, const void *buf, size_t len, int fd)
{
    char ctl[CMSG_SPACE(sizeof(int))] = {0};
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        m.msg_control = ctl;
        m.msg_controllen = sizeof ctl;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    return sendmsg(sock, &m, MSG_NOSIGNAL);
}

int vg_fd_recv(int sock, void *buf, size_t len)
{
    /* room for a second fd, to see (and close) one too many */
    char ctl[CMSG_SPACE(2 * sizeof(int))];
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = sizeof ctl};
    ssize_t n;
    do
        n = recvmsg(sock, &m, MSG_WAITALL | MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    int fds[2] = {-1, -1}, nfds = 0;
    for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++, nfds++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (nfds < 2)
                fds[nfds] = fd;
            else
                close(fd);
        }
    }
    if (n == (ssize_t)len && nfds == 1 && !(m.msg_flags & MSG_CTRUNC))
        return fds[0];
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    errno = EPROTO;
    return -1;
}
