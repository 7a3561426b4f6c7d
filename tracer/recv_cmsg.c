/* recv_cmsg.c: see recv_cmsg.h. */
#include "tracer/recv_cmsg.h"

#include <string.h>
#include <sys/socket.h>

/* Room for the largest control message we take (struct ucred). */
#define CMSG_ROOM 32

ssize_t vg_recv_cmsg(int sock, void *buf, size_t n, int type, void *data, size_t dlen, bool *got)
{
    union {
        char buf[CMSG_SPACE(CMSG_ROOM)];
        struct cmsghdr align;
    } u;
    struct iovec iov = {.iov_base = buf, .iov_len = n};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    *got = false;
    if (dlen > CMSG_ROOM)
        return -1;
    ssize_t r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    if (r < 0 || (m.msg_flags & MSG_CTRUNC))
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == type && c->cmsg_len == CMSG_LEN(dlen)) {
        memcpy(data, CMSG_DATA(c), dlen);
        *got = true;
    }
    return r;
}
