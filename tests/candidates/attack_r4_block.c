/* attack_r4_block.c: many threads open FIFOs nobody will ever write, so
 * each open blocks in vigil's crews (tracer/notify/notify_rx.c: up to 64
 * notification threads); then the main thread either exits at once (the
 * run must end now, blocked calls and all) or opens a plain file, says
 * whether it got it, and waits (the run must end by its timeout).
 * argv[1]: blocking threads; argv[2]: "wait" or "die".  Prints
 * "plain: OK|ERRNO" once the plain open returned. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SETTLE_NS 500000000L /* for the blocking opens to be in */

static void *block(void *arg)
{
    const char *path = arg;
    int fd = open(path, O_RDONLY); /* no writer: blocks for ever */
    printf("unblocked: %s %d\n", path, fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int n = atoi(argv[1]);
    for (int i = 0; i < n; i++) {
        char *path = malloc(64);
        if (!path)
            return 2;
        snprintf(path, 64, "/tmp/work/fifo%d", i);
        pthread_t th;
        if (mkfifo(path, 0600) < 0 || pthread_create(&th, NULL, block, path))
            return 2;
    }
    struct timespec settle = {0, SETTLE_NS};
    nanosleep(&settle, NULL);
    if (!strcmp(argv[2], "die"))
        _exit(0);
    int fd = open("/etc/passwd", O_RDONLY);
    printf("plain: %s\n", fd >= 0 ? "OK" : strerrorname_np(errno));
    fflush(stdout);
    pause();
    return 0;
}
