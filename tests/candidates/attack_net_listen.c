/* attack_net_listen.c unbound|bound SECONDS: a TCP server on 127.0.0.1.
 * "unbound" calls listen() on a socket that was never bound (the kernel
 * picks a port itself, on every address); "bound" binds 127.0.0.1:0 first.
 * Prints "listen ret=R errno=E port=P" at once, then serves connections for
 * SECONDS (a second thread accepts), and prints "accepted N". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int lfd;
static int serve_ms;
static int accepted;

static void *server(void *arg)
{
    (void)arg;
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    while (poll(&p, 1, serve_ms) > 0) {
        int c = accept(lfd, NULL, NULL);
        if (c < 0)
            break;
        (void)!write(c, "served\n", 7);
        close(c);
        accepted++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s unbound|bound SECONDS\n", argv[0]);
        return 2;
    }
    serve_ms = atoi(argv[2]) * 1000;
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0) {
        perror("socket");
        return 1;
    }
    if (!strcmp(argv[1], "bound")) {
        struct sockaddr_in sa = {.sin_family = AF_INET};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0)
            printf("bind errno=%d\n", errno);
    }
    int r = listen(lfd, 8);
    int err = r < 0 ? errno : 0;
    struct sockaddr_in me;
    socklen_t len = sizeof me;
    memset(&me, 0, sizeof me);
    getsockname(lfd, (struct sockaddr *)&me, &len);
    printf("listen ret=%d errno=%d port=%d\n", r, err, ntohs(me.sin_port));
    fflush(stdout);
    pthread_t th;
    if (r == 0 && pthread_create(&th, NULL, server, NULL) == 0)
        pthread_join(th, NULL);
    printf("accepted %d\n", accepted);
    return 0;
}
