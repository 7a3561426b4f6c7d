/* attack_r4_swap.c: a thread swaps /tmp/work/x between a regular file and
 * a FIFO (renameat2 RENAME_EXCHANGE, atomic) while others open it
 * O_RDONLY.  Nothing ever opens the FIFO for writing, so the candidate's
 * own open of it would wait for ever.  vigil looks at the path before it
 * opens through its io_uring, which opens as with O_NONBLOCK
 * (tracer/notify/uring.h): a FIFO swapped in after the look must not come
 * back at once (a read end with no writer), nor show O_NONBLOCK.  A pacer
 * thread signals each opener every few milliseconds (a handler without
 * SA_RESTART), so a blocked open ends with EINTR and the opener tries
 * again: that also has vigil interrupt calls blocked in its crews.
 * argv[1]: seconds.  Prints "reg=N fifo=M nonblock=K intr=I other=J"
 * (M: FIFOs that came back at once, K: of them with O_NONBLOCK). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OPENERS 4
#define PACE_NS 5000000L /* how often each opener is signalled */

static atomic_bool stop;
static atomic_long reg, fifo, nonblock, intr, other;
static pthread_t openers[OPENERS];

static void on_signal(int sig)
{
    (void)sig;
}

static void *pacer(void *arg)
{
    (void)arg;
    struct timespec d = {0, PACE_NS};
    while (!atomic_load(&stop)) {
        for (int i = 0; i < OPENERS; i++)
            pthread_kill(openers[i], SIGUSR1);
        nanosleep(&d, NULL);
    }
    return NULL;
}

static void *swapper(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        if (renameat2(AT_FDCWD, "/tmp/work/x", AT_FDCWD, "/tmp/work/y", RENAME_EXCHANGE) < 0)
            atomic_fetch_add(&other, 1);
    return NULL;
}

static void *opener(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        int fd = open("/tmp/work/x", O_RDONLY);
        struct stat st;
        if (fd < 0 && errno == EINTR) {
            atomic_fetch_add(&intr, 1);
            continue;
        }
        if (fd < 0 || fstat(fd, &st) < 0) {
            atomic_fetch_add(&other, 1);
            continue;
        }
        if (S_ISFIFO(st.st_mode)) {
            atomic_fetch_add(&fifo, 1);
            if (fcntl(fd, F_GETFL) & O_NONBLOCK)
                atomic_fetch_add(&nonblock, 1);
        } else
            atomic_fetch_add(&reg, 1);
        close(fd);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2;
    int fd = open("/tmp/work/x", O_CREAT | O_WRONLY, 0600);
    if (fd < 0 || close(fd) < 0 || mkfifo("/tmp/work/y", 0600) < 0)
        return 2;
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART */
    if (sigaction(SIGUSR1, &sa, NULL) < 0)
        return 2;
    pthread_t sw, pa;
    if (pthread_create(&sw, NULL, swapper, NULL))
        return 2;
    for (int i = 0; i < OPENERS; i++)
        if (pthread_create(&openers[i], NULL, opener, NULL))
            return 2;
    if (pthread_create(&pa, NULL, pacer, NULL))
        return 2;
    struct timespec d = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
    nanosleep(&d, NULL);
    atomic_store(&stop, true);
    pthread_join(sw, NULL);
    pthread_join(pa, NULL);
    printf("reg=%ld fifo=%ld nonblock=%ld intr=%ld other=%ld\n", atomic_load(&reg),
           atomic_load(&fifo), atomic_load(&nonblock), atomic_load(&intr), atomic_load(&other));
    fflush(stdout);
    _exit(0); /* the blocked openers with it */
}
