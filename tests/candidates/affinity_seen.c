/* affinity_seen: does a candidate ever see fewer CPUs than it has?  The
 * notify engine keeps a caller on vigil's CPU while it installs an opened
 * file (tracer/notify/cpu_pin.c) and must give the CPUs back before the
 * caller runs again.  THREADS threads each open a file ROUNDS times and
 * read their own allowed CPUs right after each open; a last thread sets
 * its CPUs to the first of them and checks, after more opens, that they
 * are still what it set (vigil must not put back an older set).
 * argv: THREADS ROUNDS.  Prints "cpus=N narrowed=N kept=yes|no". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int rounds, full;
static atomic_long narrowed;

static void open_once(void)
{
    int fd = open("/etc/hostname", O_RDONLY);
    if (fd >= 0)
        close(fd);
}

static void *reader(void *arg)
{
    (void)arg;
    cpu_set_t s;
    for (int i = 0; i < rounds; i++) {
        open_once();
        if (sched_getaffinity(0, sizeof s, &s) == 0 && CPU_COUNT(&s) != full)
            atomic_fetch_add(&narrowed, 1);
    }
    return NULL;
}

/* Its own choice of CPUs survives its opens. */
static void *chooser(void *arg)
{
    const cpu_set_t *all = arg;
    cpu_set_t one, now;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, all)) {
            CPU_SET(c, &one);
            break;
        }
    if (sched_setaffinity(0, sizeof one, &one) < 0)
        return (void *)"setaffinity";
    for (int i = 0; i < rounds; i++)
        open_once();
    if (sched_getaffinity(0, sizeof now, &now) < 0 || !CPU_EQUAL(&now, &one))
        return (void *)"no";
    return (void *)"yes";
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int threads = atoi(argv[1]);
    rounds = atoi(argv[2]);
    cpu_set_t all;
    if (threads < 1 || threads > 16 || sched_getaffinity(0, sizeof all, &all) < 0)
        return 2;
    full = CPU_COUNT(&all);
    pthread_t th[17];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&th[i], NULL, reader, NULL) != 0)
            return 2;
    if (pthread_create(&th[threads], NULL, chooser, &all) != 0)
        return 2;
    void *kept = NULL;
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    pthread_join(th[threads], &kept);
    printf("cpus=%d narrowed=%ld kept=%s\n", full, atomic_load(&narrowed), (const char *)kept);
    return 0;
}
