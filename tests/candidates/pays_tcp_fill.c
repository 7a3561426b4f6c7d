/* pays_tcp_fill.c CONNS SECONDS: pin kernel memory in TCP buffers without
 * paying for it in user memory.  A listener on the sandbox's 127.0.0.1;
 * up to CONNS connections to it, each end filled (non-blocking writes
 * until the kernel says EAGAIN) and never read.  Prints "held BYTES
 * conns N" (what the writes queued), then holds it all SECONDS so that
 * the memory can be measured from outside, and exits 0. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK 65536

static char buf[CHUNK];

/* Write until the kernel takes no more; the bytes it took. */
static long long fill(int fd)
{
    long long sum = 0;
    if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
        return 0;
    for (;;) {
        ssize_t n = write(fd, buf, sizeof buf);
        if (n <= 0)
            return sum;
        sum += n;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CONNS SECONDS\n", argv[0]);
        return 2;
    }
    int conns = atoi(argv[1]), hold = atoi(argv[2]);
    memset(buf, 'x', sizeof buf);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &len) < 0 || listen(lfd, 64) < 0) {
        printf("listener errno=%d\n", errno);
        return 1;
    }
    long long held = 0;
    int made = 0;
    for (; made < conns; made++) {
        int c = socket(AF_INET, SOCK_STREAM, 0);
        if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof sa) < 0)
            break;
        int s = accept(lfd, NULL, NULL);
        if (s < 0)
            break;
        held += fill(c) + fill(s);
    }
    printf("held %lld conns %d\n", held, made);
    fflush(stdout);
    sleep((unsigned)hold);
    return 0;
}
