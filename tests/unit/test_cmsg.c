/* test_cmsg.c: which control data of a send is refused
 * (core/cmsg.c): routing headers, IPv6 options and IPv4 options
 * wherever they sit in the buffer; harmless messages pass; a header the
 * kernel would fail the send on is refused too. */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "tests/unit/check.h"
#include "core/cmsg.h"

#define ROOM 256

struct ctl {
    union {
        unsigned char buf[ROOM];
        struct cmsghdr align;
    } u;
    size_t len;
};

/* Append one control message of n data bytes (zeros). */
static void put(struct ctl *c, int level, int type, size_t n)
{
    struct cmsghdr *h = (struct cmsghdr *)(c->u.buf + c->len);
    h->cmsg_level = level;
    h->cmsg_type = type;
    h->cmsg_len = CMSG_LEN(n);
    memset(CMSG_DATA(h), 0, n);
    c->len += CMSG_SPACE(n);
}

static int judge(const struct ctl *c, const char **why)
{
    return vg_cmsg_refused(c->u.buf, c->len, why);
}

static void test_refused(void)
{
    static const struct {
        int level, type;
        const char *name;
    } bad[] = {
        {IPPROTO_IPV6, IPV6_RTHDR, "IPV6_RTHDR"},
        {IPPROTO_IPV6, IPV6_2292RTHDR, "IPV6_2292RTHDR"},
        {IPPROTO_IPV6, IPV6_DSTOPTS, "IPV6_DSTOPTS"},
        {IPPROTO_IPV6, IPV6_RTHDRDSTOPTS, "IPV6_RTHDRDSTOPTS"},
        {IPPROTO_IPV6, IPV6_2292DSTOPTS, "IPV6_2292DSTOPTS"},
        {IPPROTO_IPV6, IPV6_HOPOPTS, "IPV6_HOPOPTS"},
        {IPPROTO_IPV6, IPV6_2292HOPOPTS, "IPV6_2292HOPOPTS"},
        {IPPROTO_IP, IP_RETOPTS, "IP_RETOPTS"},
        {IPPROTO_IP, IP_OPTIONS, "IP_OPTIONS"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ctl c = {.len = 0};
        const char *why = NULL;
        put(&c, IPPROTO_IP, IP_TTL, sizeof(int));   /* harmless first */
        put(&c, bad[i].level, bad[i].type, 24);
        CHECK(judge(&c, &why) == -EPERM && why && strstr(why, bad[i].name));
    }
}

static void test_harmless(void)
{
    struct ctl c = {.len = 0};
    const char *why = "unset";
    put(&c, IPPROTO_IP, IP_TTL, sizeof(int));
    put(&c, IPPROTO_IP, IP_PKTINFO, sizeof(struct in_pktinfo));
    put(&c, IPPROTO_IPV6, IPV6_PKTINFO, sizeof(struct in6_pktinfo));
    put(&c, IPPROTO_IPV6, IPV6_HOPLIMIT, sizeof(int));
    put(&c, SOL_SOCKET, SCM_RIGHTS, sizeof(int));
    CHECK(judge(&c, &why) == 0 && why == NULL);
    /* the same type numbers at another level are other options */
    struct ctl d = {.len = 0};
    put(&d, SOL_SOCKET, IPV6_RTHDR, sizeof(int));
    put(&d, IPPROTO_TCP, IP_OPTIONS, sizeof(int));
    CHECK(judge(&d, &why) == 0);
    /* bytes too few for a header at the end: the kernel stops there */
    d.len += sizeof(struct cmsghdr) - 1;
    CHECK(judge(&d, &why) == 0);
    CHECK(vg_cmsg_refused(NULL, 0, &why) == 0);
}

static void test_malformed(void)
{
    struct ctl c = {.len = 0};
    const char *why = NULL;
    put(&c, IPPROTO_IP, IP_TTL, sizeof(int));
    struct cmsghdr *h = (struct cmsghdr *)c.u.buf;
    h->cmsg_len = sizeof *h - 1;           /* shorter than its header */
    CHECK(judge(&c, &why) == -EINVAL && why);
    h->cmsg_len = c.len + 1;               /* longer than the buffer */
    CHECK(judge(&c, &why) == -EINVAL);
    /* a routing header behind a malformed one is never reached by the
     * kernel either (it fails the send) */
    struct ctl d = {.len = 0};
    put(&d, IPPROTO_IP, IP_TTL, sizeof(int));
    put(&d, IPPROTO_IPV6, IPV6_RTHDR, 24);
    ((struct cmsghdr *)(d.u.buf + CMSG_SPACE(sizeof(int))))->cmsg_len = ROOM;
    CHECK(judge(&d, &why) == -EINVAL);
}

int main(void)
{
    test_refused();
    test_harmless();
    test_malformed();
    return check_done();
}
