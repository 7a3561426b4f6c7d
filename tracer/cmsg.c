/* cmsg.c: see cmsg.h. */
#include "tracer/cmsg.h"

#include <errno.h>
#include <netinet/in.h>
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

/* Control messages that change where a datagram goes (a routing header
 * puts its first hop in the destination field, an IPv4 source route sends
 * the packet to its first hop) or carry options no rule is about: the
 * decided destination would not be where the packet goes. */
static const struct {
    int level, type;
    const char *why;
} refused[] = {
    {IPPROTO_IPV6, IPV6_RTHDR, "refused: control message IPV6_RTHDR (a routing header "
                               "sends the packet to another address than the decided one)"},
    {IPPROTO_IPV6, IPV6_2292RTHDR, "refused: control message IPV6_2292RTHDR (a routing header "
                                   "sends the packet to another address than the decided one)"},
    {IPPROTO_IPV6, IPV6_RTHDRDSTOPTS, "refused: control message IPV6_RTHDRDSTOPTS (IPv6 options)"},
    {IPPROTO_IPV6, IPV6_DSTOPTS, "refused: control message IPV6_DSTOPTS (IPv6 options)"},
    {IPPROTO_IPV6, IPV6_2292DSTOPTS, "refused: control message IPV6_2292DSTOPTS (IPv6 options)"},
    {IPPROTO_IPV6, IPV6_HOPOPTS, "refused: control message IPV6_HOPOPTS (IPv6 options)"},
    {IPPROTO_IPV6, IPV6_2292HOPOPTS, "refused: control message IPV6_2292HOPOPTS (IPv6 options)"},
    {IPPROTO_IPV6, IPV6_2292PKTOPTIONS, "refused: control message IPV6_2292PKTOPTIONS "
                                        "(IPv6 options)"},
    {IPPROTO_IP, IP_RETOPTS, "refused: control message IP_RETOPTS (IPv4 options: a source "
                             "route sends the packet to another address than the decided one)"},
    {IPPROTO_IP, IP_OPTIONS, "refused: control message IP_OPTIONS (IPv4 options: a source "
                             "route sends the packet to another address than the decided one)"},
};

int vg_cmsg_refused(const void *control, size_t len, const char **why)
{
    /* The kernel's walk (for_each_cmsghdr with CMSG_OK, net/core/scm.c,
     * net/ipv4/ip_sockglue.c): a header that does not fit what is left
     * fails the whole send, so refusing it here refuses nothing the kernel
     * would have sent. */
    const unsigned char *p = control;
    size_t off = 0;
    *why = NULL;
    while (len - off >= sizeof(struct cmsghdr)) {
        struct cmsghdr h;
        memcpy(&h, p + off, sizeof h);
        if (h.cmsg_len < sizeof h || h.cmsg_len > len - off) {
            *why = "refused: a malformed control message";
            return -EINVAL;
        }
        for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
            if (refused[i].level == h.cmsg_level && refused[i].type == h.cmsg_type) {
                *why = refused[i].why;
                return -EPERM;
            }
        size_t step = CMSG_ALIGN(h.cmsg_len);
        if (step > len - off)
            break;
        off += step;
    }
    return 0;
}
