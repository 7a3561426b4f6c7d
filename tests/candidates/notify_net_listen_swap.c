/* notify_net_listen_swap.c SECONDS: listen() on fd N while a second
 * thread swaps what N is (dup2) between a socket bound to 127.0.0.1 and
 * one never bound.  The policy allows the bound one's bind and nothing
 * else: listen on the unbound one would bind it to a port of the kernel's
 * choosing on every address, which the policy refuses.  A supervisor
 * that decides on the socket it looked at and lets the kernel look again
 * makes the unbound one listen some of the time.  Prints
 *   swap tries=N won=W   (W: the unbound socket was found listening) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "notify_flip.h"

#define SLOT 100 /* the fd number the calls name */

static int bound_fd;
static _Atomic int unbound_fd;
static long won;

static void *flipper(void *arg)
{
    (void)arg;
    while (!atomic_load(&flip_done)) {
        dup2(bound_fd, SLOT);
        dup2(atomic_load(&unbound_fd), SLOT);
    }
    return NULL;
}

static int port_of(int fd)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    return getsockname(fd, (struct sockaddr *)&sa, &len) < 0 ? -1 : ntohs(sa.sin_port);
}

static enum flip_result attempt(void)
{
    int r = listen(SLOT, 1);
    int e = errno;
    int fd = atomic_load(&unbound_fd);
    if (port_of(fd) != 0) { /* it listens: a port vigil never decided */
        won++;
        atomic_store(&unbound_fd, socket(AF_INET, SOCK_STREAM, 0));
        close(fd);
    }
    errno = e;
    return r == 0 ? FLIP_OK : errno == EACCES ? FLIP_REFUSED : FLIP_OTHER;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SECONDS\n", argv[0]);
        return 2;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bound_fd = socket(AF_INET, SOCK_STREAM, 0);
    atomic_store(&unbound_fd, socket(AF_INET, SOCK_STREAM, 0));
    if (bound_fd < 0 || bind(bound_fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        dup2(bound_fd, SLOT) < 0) {
        perror("setup");
        return 1;
    }
    struct flip_tally t = flip_run(flipper, attempt, atof(argv[1]));
    printf("swap tries=%ld won=%ld ok=%ld refused=%ld other=%ld\n", t.tries, won, t.ok, t.refused,
           t.other);
    return 0;
}
