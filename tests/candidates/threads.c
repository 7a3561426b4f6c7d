/* threads.c N DIR: N threads, thread i opens DIR/thread-i.txt for writing
 * (creating it), writes its own tid into it and closes it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *dir;

static void *worker(void *arg)
{
    long i = (long)arg;
    char path[4096];
    snprintf(path, sizeof path, "%s/thread-%ld.txt", dir, i);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return (void *)1;
    }
    dprintf(fd, "%d\n", gettid());
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    dir = argc > 2 ? argv[2] : ".";
    pthread_t t[64];
    if (n < 1 || n > 64)
        return 2;
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 1;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad |= r != NULL;
    }
    printf("pid %d\n", getpid());
    return bad;
}
