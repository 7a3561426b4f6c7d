/* fifo_alarm_threads: the main thread of a two-thread process opens a
 * FIFO nobody writes, with alarm(1) and a SIGALRM handler without
 * SA_RESTART around it; the other thread sleeps, not blocking SIGALRM.
 * alarm's signal is for the whole process, and the kernel hands it to the
 * main thread first: the open must fail with EINTR after about a second
 * (prints "eintr MS"), as without vigil, rather than wait for a writer. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void on_alarm(int sig)
{
    (void)sig;
}

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        sleep(1);
    return NULL;
}

static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(int argc, char **argv)
{
    const char *fifo = argc > 1 ? argv[1] : "/tmp/fifo";
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    pthread_t th;
    if (sigaction(SIGALRM, &sa, NULL) < 0 || mkfifo(fifo, 0600) < 0 ||
        pthread_create(&th, NULL, sleeper, NULL) != 0) {
        perror("setup");
        return 1;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    alarm(1);
    int fd = open(fifo, O_RDONLY);
    if (fd >= 0 || errno != EINTR) {
        printf("open %d %s %ld\n", fd, strerror(errno), ms_since(&t0));
        return 1;
    }
    printf("eintr %ld\n", ms_since(&t0));
    return 0;
}
