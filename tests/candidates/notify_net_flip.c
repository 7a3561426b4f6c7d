/* notify_net_flip.c MODE OKADDR OKPORT BADADDR BADPORT TOKEN SECONDS:
 * MODE connect (TCP: connect, send TOKEN, close), sendto (UDP: TOKEN as
 * one datagram) or sendmmsg (UDP: two datagrams in one call) to OKADDR:OKPORT, while a second thread flips the
 * sockaddr between OKADDR:OKPORT and BADADDR:BADPORT as fast as it can.
 * The policy allows only the first: a supervisor that lets the kernel read
 * the address again after deciding reaches the second some of the time.
 * Prints
 *   flip mode=M tries=N ok=K refused=D other=O
 * SECONDS 0: no second thread; the call once to each address, printed as
 *   once port=P ret=R errno=E
 * (what the candidate saw, to compare with the log's outcome). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "notify_flip.h"

static struct sockaddr_in sa, ok_sa, bad_sa;
static const char *token;
static bool tcp, mmsg;
static int udp;

static void *flipper(void *arg)
{
    (void)arg;
    while (!atomic_load(&flip_done)) {
        memcpy(&sa, &bad_sa, sizeof sa);
        memcpy(&sa, &ok_sa, sizeof sa);
    }
    return NULL;
}

static void make(struct sockaddr_in *s, const char *addr, const char *port)
{
    memset(s, 0, sizeof *s);
    s->sin_family = AF_INET;
    s->sin_port = htons((unsigned short)atoi(port));
    if (inet_pton(AF_INET, addr, &s->sin_addr) != 1) {
        fprintf(stderr, "bad address %s\n", addr);
        exit(2);
    }
}

/* One try: 0 when it reached its address, -1 with errno. */
static int send_two(void)
{
    struct iovec iov = {(void *)token, strlen(token)};
    struct mmsghdr mm[2];
    for (int i = 0; i < 2; i++)
        mm[i].msg_hdr = (struct msghdr){.msg_name = &sa, .msg_namelen = sizeof sa,
                                        .msg_iov = &iov, .msg_iovlen = 1};
    int r = sendmmsg(udp, mm, 2, 0);
    return r < 0 ? -1 : r;
}

static int call(void)
{
    if (mmsg)
        return send_two() == 2 ? 0 : -1;
    if (!tcp)
        return sendto(udp, token, strlen(token), 0, (struct sockaddr *)&sa, sizeof sa) < 0 ? -1 : 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    int r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    int e = errno;
    if (r == 0 && send(fd, token, strlen(token), MSG_NOSIGNAL) < 0)
        r = -1, e = errno;
    close(fd);
    errno = e;
    return r;
}

static enum flip_result attempt(void)
{
    if (call() == 0)
        return FLIP_OK;
    return errno == EACCES || errno == ECONNREFUSED ? FLIP_REFUSED : FLIP_OTHER;
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: %s MODE OKADDR OKPORT BADADDR BADPORT TOKEN SECONDS\n", argv[0]);
        return 2;
    }
    tcp = !strcmp(argv[1], "connect");
    mmsg = !strcmp(argv[1], "sendmmsg");
    make(&ok_sa, argv[2], argv[3]);
    make(&bad_sa, argv[4], argv[5]);
    token = argv[6];
    double secs = atof(argv[7]);
    udp = socket(AF_INET, SOCK_DGRAM, 0);
    if (udp < 0)
        return 1;
    if (secs <= 0) {
        const struct sockaddr_in *both[] = {&ok_sa, &bad_sa};
        for (int i = 0; i < 2; i++) {
            memcpy(&sa, both[i], sizeof sa);
            errno = 0;
            int r = tcp    ? connect(socket(AF_INET, SOCK_STREAM, 0), (struct sockaddr *)&sa, sizeof sa)
                    : mmsg ? send_two()
                           : (int)sendto(udp, token, strlen(token), 0, (struct sockaddr *)&sa, sizeof sa);
            printf("once port=%d ret=%d errno=%d\n", ntohs(sa.sin_port), r, r < 0 ? errno : 0);
        }
        return 0;
    }
    memcpy(&sa, &ok_sa, sizeof sa);
    struct flip_tally t = flip_run(flipper, attempt, secs);
    printf("flip mode=%s tries=%ld ok=%ld refused=%ld other=%ld\n", argv[1], t.tries, t.ok,
           t.refused, t.other);
    return 0;
}
