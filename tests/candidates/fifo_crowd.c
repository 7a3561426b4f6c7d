/* fifo_crowd.c N FILE: N threads block in the open of a FIFO each (no
 * writer yet); once all are in it, the main thread opens and reads FILE
 * and prints it, then opens each FIFO's write end, which lets every
 * reader through; prints "through K" with how many readers opened. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024
#define NAME_MAX_LEN 32
#define SETTLE_NS 200000000L /* a moment for the last ones to be in their open */

static atomic_int entering, through;

static void fifo_name(char *buf, size_t n, long i)
{
    snprintf(buf, n, "fifo-%ld", i);
}

static void *reader(void *arg)
{
    char name[NAME_MAX_LEN];
    fifo_name(name, sizeof name, (long)arg);
    atomic_fetch_add(&entering, 1);
    int fd = open(name, O_RDONLY);
    if (fd >= 0) {
        atomic_fetch_add(&through, 1);
        close(fd);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 2 ? strtol(argv[1], NULL, 10) : 0;
    if (n <= 0 || n > MAX_THREADS)
        return 2;
    static pthread_t th[MAX_THREADS];
    char name[NAME_MAX_LEN];
    for (long i = 0; i < n; i++) {
        fifo_name(name, sizeof name, i);
        if (mkfifo(name, 0600) < 0 && errno != EEXIST)
            return 3;
    }
    for (long i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, reader, (void *)i) != 0)
            return 4;
    while (atomic_load(&entering) < n)
        sched_yield();
    struct timespec settle = {0, SETTLE_NS};
    nanosleep(&settle, NULL);
    /* every reader waits in its open now: this open must still be served */
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        perror(argv[2]);
        return 5;
    }
    char line[256];
    while (fgets(line, sizeof line, f))
        fputs(line, stdout);
    fclose(f);
    fflush(stdout);
    for (long i = 0; i < n; i++) {
        fifo_name(name, sizeof name, i);
        int fd = open(name, O_WRONLY);
        if (fd >= 0)
            close(fd);
    }
    for (long i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    printf("through %d\n", atomic_load(&through));
    return 0;
}
