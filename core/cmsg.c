/* cmsg.c: see cmsg.h.  Pure: it reads the bytes it is given. */
#include "core/cmsg.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

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
