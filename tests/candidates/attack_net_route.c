/* attack_net_route.c TOKEN STEP...: UDP sends that try to end somewhere
 * else than the address they name, one line per step:
 *   rthdr-sockopt:A6:PORT:VIA6   setsockopt(IPV6_RTHDR) with a segment routing
 *                                header through VIA6, then sendto A6
 *   rthdr-cmsg:A6:PORT:VIA6      sendmsg to A6 with a type 2 routing header
 *                                through VIA6 as a control message (the only
 *                                type the kernel takes there, with IPV6_MIP6)
 *   rthdr-conn:A6:PORT:VIA6      the same on a socket connected to A6 (no address)
 *   lsrr-cmsg:A4:PORT:VIA4       sendmsg to A4 with IP_RETOPTS: a loose source
 *                                route through VIA4
 *   lsrr-conn:A4:PORT:VIA4       the same on a connected socket
 *   ttl-conn:ADDR:PORT           a connected socket's send with a harmless
 *                                control message (IP_TTL / IPV6_HOPLIMIT)
 *   udp:ADDR:PORT                a plain sendto (SO_BROADCAST set; a link-local
 *                                IPv6 address gets the first non-loopback
 *                                interface as its scope)
 * A6 and VIA6 are written with '-' for ':' (fd00--2).  Each step prints
 * "STEP opt=R/E ret=R errno=E": opt is the setsockopt's result (0/0 when
 * there is none), ret the send's. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RH2_LEN 24           /* a type 2 routing header: 8 bytes and one address */
#define RH2_TYPE 2
#define SRH_LEN 40           /* a segment routing header: 8 bytes and two segments */
#define SRH_TYPE 4
#define HARMLESS_TTL 32
#define MAX_IFINDEX 64       /* the sandbox has lo and pasta's device */
#define LSRR_LEN 8           /* type, length, pointer, one address, end of options */
#define LSRR_OPTLEN 7
/* 1 s for the last datagrams to leave through pasta: 0.3 s lost all three
 * IPv6 ones once under test-image beside another make test (load 6-10) */
#define DRAIN_NS 999999999L
#define LSRR_FIRST_PTR 4

static const char *token;

struct dest {
    struct sockaddr_storage sa;
    socklen_t len;
};

/* ADDR:PORT of a step ('-' for ':' in IPv6 text). */
static int parse(char *addr, const char *port, struct dest *d)
{
    for (char *p = addr; *p; p++)
        if (*p == '-')
            *p = ':';
    memset(d, 0, sizeof *d);
    struct sockaddr_in *in = (struct sockaddr_in *)&d->sa;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&d->sa;
    if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons((unsigned short)atoi(port));
        d->len = sizeof *in;
        return 0;
    }
    if (inet_pton(AF_INET6, addr, &in6->sin6_addr) != 1)
        return -1;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((unsigned short)atoi(port));
    if (IN6_IS_ADDR_MC_LINKLOCAL(&in6->sin6_addr) || IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr)) {
        /* if_indextoname asks an ioctl (the sandbox has no netlink) */
        char ifname[IF_NAMESIZE];
        for (unsigned i = 1; i <= MAX_IFINDEX && !in6->sin6_scope_id; i++)
            if (if_indextoname(i, ifname) && strcmp(ifname, "lo"))
                in6->sin6_scope_id = i;
    }
    d->len = sizeof *in6;
    return 0;
}

static void rh2(unsigned char *rh, const struct in6_addr *via)
{
    memset(rh, 0, RH2_LEN);
    rh[1] = RH2_LEN / 8 - 1;    /* hdrlen, in 8 bytes past the first 8 */
    rh[2] = RH2_TYPE;
    rh[3] = 1;                  /* segments left */
    memcpy(rh + 8, via, sizeof *via);
}

/* A segment routing header (type 4): segments [dest, via], one left, so
 * the kernel puts via in the destination field and dest in segment 0. */
static void srh(unsigned char *h, const struct in6_addr *dest, const struct in6_addr *via)
{
    memset(h, 0, SRH_LEN);
    h[1] = SRH_LEN / 8 - 1;     /* hdrlen */
    h[2] = SRH_TYPE;
    h[3] = 1;                   /* segments left */
    h[4] = 1;                   /* the last entry (first segment) */
    memcpy(h + 8, dest, sizeof *dest);
    memcpy(h + 8 + sizeof *dest, via, sizeof *via);
}

static void lsrr(unsigned char *o, const struct in_addr *via)
{
    memset(o, 0, LSRR_LEN);
    o[0] = IPOPT_LSRR;
    o[1] = LSRR_OPTLEN;
    o[2] = LSRR_FIRST_PTR;
    memcpy(o + 3, via, sizeof *via);
}

static void step(char *spec)
{
    char *name = strtok(spec, ":"), *addr = strtok(NULL, ":"), *port = strtok(NULL, ":");
    char *via = strtok(NULL, ":");
    struct dest d, v = {0};
    if (!name || !addr || !port || parse(addr, port, &d) < 0 || (via && parse(via, "0", &v) < 0)) {
        printf("%s bad\n", name ? name : "?");
        return;
    }
    int fd = socket(d.sa.ss_family, SOCK_DGRAM, 0), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof one);
    union {
        char buf[CMSG_SPACE(RH2_LEN)];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct cmsghdr *c = (struct cmsghdr *)u.buf;
    struct iovec iov = {.iov_base = (void *)token, .iov_len = strlen(token)};
    struct msghdr m = {.msg_name = &d.sa, .msg_namelen = d.len, .msg_iov = &iov, .msg_iovlen = 1};
    int opt = 0, opt_errno = 0;
    bool conn = strstr(name, "-conn") != NULL;
    if (!strncmp(name, "rthdr", 5)) {
        unsigned char rh[RH2_LEN], sr[SRH_LEN];
        rh2(rh, &((struct sockaddr_in6 *)&v.sa)->sin6_addr);
        srh(sr, &((struct sockaddr_in6 *)&d.sa)->sin6_addr,
            &((struct sockaddr_in6 *)&v.sa)->sin6_addr);
        if (!strcmp(name, "rthdr-sockopt")) {
            opt = setsockopt(fd, IPPROTO_IPV6, IPV6_RTHDR, sr, sizeof sr);
            opt_errno = opt < 0 ? errno : 0;
        } else {
            c->cmsg_level = IPPROTO_IPV6;
            c->cmsg_type = IPV6_RTHDR;
            c->cmsg_len = CMSG_LEN(RH2_LEN);
            memcpy(CMSG_DATA(c), rh, RH2_LEN);
            m.msg_control = u.buf;
            m.msg_controllen = CMSG_SPACE(RH2_LEN);
        }
    } else if (!strcmp(name, "ttl-conn")) {
        int ttl = HARMLESS_TTL;
        bool six = d.sa.ss_family == AF_INET6;
        c->cmsg_level = six ? IPPROTO_IPV6 : IPPROTO_IP;
        c->cmsg_type = six ? IPV6_HOPLIMIT : IP_TTL;
        c->cmsg_len = CMSG_LEN(sizeof ttl);
        memcpy(CMSG_DATA(c), &ttl, sizeof ttl);
        m.msg_control = u.buf;
        m.msg_controllen = CMSG_SPACE(sizeof ttl);
    } else if (!strncmp(name, "lsrr", 4)) {
        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_RETOPTS;
        c->cmsg_len = CMSG_LEN(LSRR_LEN);
        lsrr(CMSG_DATA(c), &((struct sockaddr_in *)&v.sa)->sin_addr);
        m.msg_control = u.buf;
        m.msg_controllen = CMSG_SPACE(LSRR_LEN);
    }
    if (conn) {
        if (connect(fd, (struct sockaddr *)&d.sa, d.len) < 0) {
            printf("%s connect errno=%d\n", name, errno);
            close(fd);
            return;
        }
        m.msg_name = NULL;
        m.msg_namelen = 0;
    }
    ssize_t r = strcmp(name, "udp") && strcmp(name, "rthdr-sockopt")
                    ? sendmsg(fd, &m, 0)
                    : sendto(fd, token, strlen(token), 0, (struct sockaddr *)&d.sa, d.len);
    printf("%s opt=%d/%d ret=%zd errno=%d\n", name, opt, opt_errno, r, r < 0 ? errno : 0);
    fflush(stdout);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: attack_net_route TOKEN STEP...\n");
        return 2;
    }
    token = argv[1];
    for (int i = 2; i < argc; i++)
        step(argv[i]);
    /* pasta ends with the run: a datagram still queued to it when this
     * process exits can be lost (docs/RUN.md), so the last ones get a
     * moment to leave before the test counts what arrived */
    const struct timespec drain = {0, DRAIN_NS};
    nanosleep(&drain, NULL);
    return 0;
}
