/* selfhash.c: see selfhash.h. */
#include "run/selfhash.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read size: large enough that the calls cost nothing beside hashing. */
#define READ_CHUNK (256u * 1024)

/* The thread makes system calls and hashes, nothing else: it takes no
 * lock of libc (no malloc, no stdio), so the sandbox's fork can happen
 * while it runs. */
static void *hash_self(void *arg)
{
    struct vg_selfhash *h = arg;
    struct vg_err err;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    h->ok = vg_fastsha_fd(fd, "/proc/self/exe", h->buf, READ_CHUNK, h->sum, &err) == 0;
    close(fd);
    return NULL;
}

void vg_selfhash_start(struct vg_selfhash *h)
{
    memset(h, 0, sizeof *h);
    h->buf = vg_xmalloc(READ_CHUNK);
    /* every signal blocked in the thread: vigil's own handling (SIGCHLD,
     * SIGINT, ...) must never land on it */
    sigset_t all, old;
    sigfillset(&all);
    if (pthread_sigmask(SIG_SETMASK, &all, &old) != 0)
        return;
    h->started = pthread_create(&h->thread, NULL, hash_self, h) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

const char *vg_selfhash_wait(struct vg_selfhash *h)
{
    if (h->started && !h->joined) {
        pthread_join(h->thread, NULL);
        h->joined = true;
        if (h->ok)
            vg_hex(h->sum, VG_SHA256_LEN, h->hex);
    }
    if (!h->started || h->joined) {
        free(h->buf);
        h->buf = NULL;
    }
    return h->joined && h->ok ? h->hex : NULL;
}
