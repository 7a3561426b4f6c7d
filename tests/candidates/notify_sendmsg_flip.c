/* notify_sendmsg_flip.c OKADDR OKPORT BADADDR BADPORT TOKEN SECONDS: a UDP
 * socket connected to OKADDR:OKPORT sends TOKEN with sendmsg and no
 * address (to its peer) while a second thread flips the msghdr's msg_name
 * between none and BADADDR:BADPORT as fast as it can.  The policy allows
 * only the first: a supervisor that lets the kernel read a msghdr it
 * decided had no address reaches the second some of the time.  Prints
 *   flip mode=sendmsg tries=N ok=K refused=D other=O */
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

static struct sockaddr_in ok_sa, bad_sa;
static struct iovec iov;
static struct msghdr hdr;
static int udp;

static void *flipper(void *arg)
{
    (void)arg;
    while (!atomic_load(&flip_done)) {
        hdr.msg_name = &bad_sa;
        hdr.msg_namelen = sizeof bad_sa;
        hdr.msg_name = NULL;
        hdr.msg_namelen = 0;
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

static enum flip_result attempt(void)
{
    if (sendmsg(udp, &hdr, 0) >= 0)
        return FLIP_OK;
    return errno == EACCES ? FLIP_REFUSED : FLIP_OTHER;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: %s OKADDR OKPORT BADADDR BADPORT TOKEN SECONDS\n", argv[0]);
        return 2;
    }
    make(&ok_sa, argv[1], argv[2]);
    make(&bad_sa, argv[3], argv[4]);
    iov = (struct iovec){argv[5], strlen(argv[5])};
    hdr = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1};
    udp = socket(AF_INET, SOCK_DGRAM, 0);
    if (udp < 0 || connect(udp, (struct sockaddr *)&ok_sa, sizeof ok_sa) < 0) {
        perror("connect");
        return 1;
    }
    struct flip_tally t = flip_run(flipper, attempt, atof(argv[6]));
    printf("flip mode=sendmsg tries=%ld ok=%ld refused=%ld other=%ld\n", t.tries, t.ok, t.refused,
           t.other);
    return 0;
}
