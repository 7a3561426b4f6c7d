/* spread_openers: THREADS threads each, for SECONDS, open and close a
 * file and then compute for 300 us of their own CPU time, and count their
 * rounds.  On two CPUs two such threads make about twice the rounds of
 * one, unless something keeps putting them on the same CPU (the notify
 * engine narrows each caller to the CPU vigil's thread is on while it
 * installs the file: that must be the caller's own CPU).
 * argv: THREADS SECONDS.  Prints "rounds=N". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define WORK_NS 300000L

static atomic_long rounds;
static atomic_bool done;

static long now_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void *worker(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        int fd = open("/etc/hostname", O_RDONLY);
        if (fd >= 0)
            close(fd);
        long until = now_ns(CLOCK_THREAD_CPUTIME_ID) + WORK_NS;
        while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until)
            ;
        atomic_fetch_add(&rounds, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2;
    int secs = argc > 2 ? atoi(argv[2]) : 2;
    pthread_t th[8];
    if (n < 1 || n > 8)
        return 2;
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, worker, NULL) != 0)
            return 1;
    sleep((unsigned)secs);
    atomic_store(&done, true);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    printf("rounds=%ld\n", atomic_load(&rounds));
    return 0;
}
