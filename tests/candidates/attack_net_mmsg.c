/* attack_net_mmsg.c OKPORT DENIEDPORT TOKEN ATTEMPTS [ADDR]: sendmmsg on one
 * UDP socket to ADDR (default 127.0.0.1), with the denied destination hidden behind allowed
 * ones.  First a control call whose every message goes to OKPORT; then
 * ATTEMPTS calls of 8 messages, the first to OKPORT and the others to
 * DENIEDPORT; then one call of 1024 messages (the kernel's UIO_MAXIOV cap)
 * where only the last goes to DENIEDPORT.  Prints one line per kind:
 *   control ret=R errno=E / mixed sent=S refused=F errno=E / tail ret=R errno=E */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define DRAIN_NS 300000000L  /* 0.3 s for the last datagrams to leave through pasta */

#define MIXED_VLEN 8
#define TAIL_VLEN 1024

static struct sockaddr_in ok_sa, denied_sa;
static struct mmsghdr msgs[TAIL_VLEN];
static struct iovec iov;

static int target(struct sockaddr_in *sa, int port, const char *addr)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((unsigned short)port);
    return inet_pton(AF_INET, addr, &sa->sin_addr) == 1 ? 0 : -1;
}

/* Messages [0, n): all to ok_sa except those from first_denied on. */
static void fill(unsigned n, unsigned first_denied)
{
    memset(msgs, 0, sizeof msgs);
    for (unsigned i = 0; i < n; i++) {
        msgs[i].msg_hdr.msg_name = i >= first_denied ? &denied_sa : &ok_sa;
        msgs[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
        msgs[i].msg_hdr.msg_iov = &iov;
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
}

int main(int argc, char **argv)
{
    const char *addr = argc == 6 ? argv[5] : "127.0.0.1";
    if ((argc != 5 && argc != 6) || target(&ok_sa, atoi(argv[1]), addr) < 0 ||
        target(&denied_sa, atoi(argv[2]), addr) < 0) {
        fprintf(stderr, "usage: %s OKPORT DENIEDPORT TOKEN ATTEMPTS [ADDR]\n", argv[0]);
        return 2;
    }
    iov.iov_base = argv[3];
    iov.iov_len = strlen(argv[3]);
    int attempts = atoi(argv[4]);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        perror("socket");
        return 1;
    }
    fill(MIXED_VLEN, MIXED_VLEN);
    int r = sendmmsg(fd, msgs, MIXED_VLEN, 0);
    printf("control ret=%d errno=%d\n", r, r < 0 ? errno : 0);

    int sent = 0, refused = 0, last_errno = 0;
    fill(MIXED_VLEN, 1);
    for (int i = 0; i < attempts; i++) {
        r = sendmmsg(fd, msgs, MIXED_VLEN, 0);
        if (r < 0) {
            refused++;
            last_errno = errno;
        } else {
            sent += r;
        }
    }
    printf("mixed sent=%d refused=%d errno=%d\n", sent, refused, last_errno);

    fill(TAIL_VLEN, TAIL_VLEN - 1);
    r = sendmmsg(fd, msgs, TAIL_VLEN, 0);
    printf("tail ret=%d errno=%d\n", r, r < 0 ? errno : 0);
    /* datagrams still queued to pasta when the last process exits can be
     * lost (docs/RUN.md): the last ones get a moment to leave before the
     * test counts what arrived */
    const struct timespec drain = {0, DRAIN_NS};
    nanosleep(&drain, NULL);
    return 0;
}
