/* attack_net_tfo.c PORT TOKEN [ADDR]: TCP fast open to ADDR:PORT (ADDR default
 * 127.0.0.1): sendto with
 * MSG_FASTOPEN on a fresh stream socket connects and sends in one call,
 * with no connect(2).  A second thread does the same on its own socket,
 * through sendmsg.  Prints "sendto ret=R errno=E" and "sendmsg ret=R errno=E". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

static struct sockaddr_in dest;
static const char *token;

static void *by_sendmsg(void *arg)
{
    char *line = arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct iovec iov = {.iov_base = (void *)token, .iov_len = strlen(token)};
    struct msghdr m = {.msg_name = &dest, .msg_namelen = sizeof dest, .msg_iov = &iov,
                       .msg_iovlen = 1};
    ssize_t r = fd < 0 ? -1 : sendmsg(fd, &m, MSG_FASTOPEN);
    snprintf(line, 64, "sendmsg ret=%zd errno=%d", r, r < 0 ? errno : 0);
    return NULL;
}

int main(int argc, char **argv)
{
    dest.sin_family = AF_INET;
    dest.sin_port = htons((unsigned short)(argc > 1 ? atoi(argv[1]) : 0));
    if ((argc != 3 && argc != 4) ||
        inet_pton(AF_INET, argc == 4 ? argv[3] : "127.0.0.1", &dest.sin_addr) != 1) {
        fprintf(stderr, "usage: %s PORT TOKEN [ADDR]\n", argv[0]);
        return 2;
    }
    token = argv[2];
    char line[64];
    pthread_t th;
    if (pthread_create(&th, NULL, by_sendmsg, line) != 0)
        return 1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ssize_t r = fd < 0 ? -1 : sendto(fd, token, strlen(token), MSG_FASTOPEN,
                                     (struct sockaddr *)&dest, sizeof dest);
    printf("sendto ret=%zd errno=%d\n", r, r < 0 ? errno : 0);
    pthread_join(th, NULL);
    printf("%s\n", line);
    sleep(1); /* let the listener read what was sent before the sockets close */
    return 0;
}
