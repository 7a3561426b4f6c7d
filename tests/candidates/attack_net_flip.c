/* attack_net_flip.c DENIEDPORT TOKEN TRIES SECONDS [ADDR]: sendto ADDR:DENIEDPORT
 * (ADDR default 127.0.0.1)
 * from a socket address alone in its page, while a second thread flips
 * that page between PROT_NONE and readable as fast as it can: a
 * supervisor that cannot read the address must not let the datagram go.
 * Stops after TRIES datagrams or SECONDS.  Prints
 *   flip tries=N sent=S efault=F refused=D other=O */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_NS 300000000L  /* 0.3 s for the last datagrams to leave through pasta */

static void *page;
static size_t page_size;
static atomic_bool done;

static void *flipper(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        if (mprotect(page, page_size, PROT_NONE) < 0 ||
            mprotect(page, page_size, PROT_READ | PROT_WRITE) < 0) {
            perror("mprotect");
            exit(1);
        }
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s DENIEDPORT TOKEN TRIES SECONDS [ADDR]\n", argv[0]);
        return 2;
    }
    const char *token = argv[2];
    long tries = atol(argv[3]);
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    page = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (page == MAP_FAILED || fd < 0) {
        perror("setup");
        return 1;
    }
    struct sockaddr_in *sa = page;
    sa->sin_family = AF_INET;
    sa->sin_port = htons((unsigned short)atoi(argv[1]));
    if (inet_pton(AF_INET, argc == 6 ? argv[5] : "127.0.0.1", &sa->sin_addr) != 1)
        return 2;

    pthread_t th;
    if (pthread_create(&th, NULL, flipper, NULL) != 0)
        return 1;
    long n = 0, sent = 0, efault = 0, refused = 0, other = 0;
    /* the race's seconds start here, not at exec: under ptrace on a loaded
     * machine (load 11) the set-up above once took them all, and the race
     * was never run */
    double until = now() + atof(argv[4]);
    for (; n < tries && now() < until; n++) {
        ssize_t r = sendto(fd, token, strlen(token), 0, (struct sockaddr *)sa, sizeof *sa);
        if (r >= 0)
            sent++;
        else if (errno == EFAULT)
            efault++;
        else if (errno == EACCES)
            refused++;
        else
            other++;
    }
    atomic_store(&done, true);
    pthread_join(th, NULL);
    printf("flip tries=%ld sent=%ld efault=%ld refused=%ld other=%ld\n", n, sent, efault, refused,
           other);
    /* datagrams still queued to pasta when the last process exits can be
     * lost (docs/RUN.md): the last ones get a moment to leave before the
     * test counts what arrived */
    const struct timespec drain = {0, DRAIN_NS};
    nanosleep(&drain, NULL);
    return 0;
}
