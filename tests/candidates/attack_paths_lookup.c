/* attack_paths_lookup.c: learn about a file the policy denies for reading
 * without opening it: its symlink's target, its extended attributes, its
 * metadata, from several threads at once.
 *
 *   attack_paths_lookup DIR ROUNDS
 *
 * DIR (below the cwd, denied for reading) holds token.txt, with an
 * extended attribute user.tok, and a symlink "link" whose target text is
 * the secret.  Prints "CALL: ok VALUE" or "CALL: errno N" per attempt. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "attack_paths_threads.h"

#define THREADS 3

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *dir;
static int rounds;

static void say(const char *what, const char *path, long r, const char *value)
{
    int err = errno;
    pthread_mutex_lock(&out_lock);
    if (r >= 0)
        printf("%s %s: ok %s\n", what, path, value ? value : "");
    else
        printf("%s %s: errno %d\n", what, path, err);
    pthread_mutex_unlock(&out_lock);
}

/* One call that fills buf with what it learnt: a link target, an
 * attribute's value or the list of names. */
struct probe {
    const char *what;
    ssize_t (*call)(const char *path, int fd, char *buf, size_t n);
    bool on_fd;              /* through a write-only fd instead of the path */
    bool on_link;            /* on the symlink rather than token.txt */
};

static ssize_t p_readlink(const char *p, int fd, char *b, size_t n) { (void)fd; return readlink(p, b, n); }
static ssize_t p_readlinkat(const char *p, int fd, char *b, size_t n) { (void)fd; return readlinkat(AT_FDCWD, p, b, n); }
static ssize_t p_getxattr(const char *p, int fd, char *b, size_t n) { (void)fd; return getxattr(p, "user.tok", b, n); }
static ssize_t p_lgetxattr(const char *p, int fd, char *b, size_t n) { (void)fd; return lgetxattr(p, "user.tok", b, n); }
static ssize_t p_listxattr(const char *p, int fd, char *b, size_t n) { (void)fd; return listxattr(p, b, n); }
static ssize_t p_llistxattr(const char *p, int fd, char *b, size_t n) { (void)fd; return llistxattr(p, b, n); }
static ssize_t p_fgetxattr(const char *p, int fd, char *b, size_t n) { (void)p; return fgetxattr(fd, "user.tok", b, n); }
static ssize_t p_flistxattr(const char *p, int fd, char *b, size_t n) { (void)p; return flistxattr(fd, b, n); }

static const struct probe probes[] = {
    {"readlink", p_readlink, false, true},   {"readlinkat", p_readlinkat, false, true},
    {"getxattr", p_getxattr, false, false},  {"lgetxattr", p_lgetxattr, false, false},
    {"listxattr", p_listxattr, false, false}, {"llistxattr", p_llistxattr, false, false},
    {"fgetxattr", p_fgetxattr, true, false}, {"flistxattr", p_flistxattr, true, false},
};

static void attempts(void)
{
    char file[PATH_MAX], link[PATH_MAX], buf[256];
    snprintf(file, sizeof file, "%s/token.txt", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    /* A write-only fd is allowed: its xattrs are still reads. */
    int fd = open(file, O_WRONLY | O_APPEND);
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        const struct probe *pr = &probes[i];
        if (pr->on_fd && fd < 0)
            continue;
        memset(buf, 0, sizeof buf);
        const char *path = pr->on_link ? link : file;
        say(pr->what, path, pr->call(path, fd, buf, sizeof buf - 1), buf);
    }
    if (fd >= 0)
        close(fd);
    struct stat st;
    say("stat", file, stat(file, &st), NULL);
    say("lstat", file, lstat(file, &st), NULL);
    struct statx stx;
    say("statx", file, statx(AT_FDCWD, file, 0, STATX_SIZE, &stx), NULL);
    say("access", file, access(file, F_OK), NULL);
    say("faccessat2", file, syscall(SYS_faccessat2, AT_FDCWD, file, F_OK, 0), NULL);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int r = 0; r < rounds; r++)
        attempts();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    dir = argv[1];
    rounds = atoi(argv[2]);
    run_threads(THREADS, worker);
    /* What is allowed still works: fstat on an open fd and listing the cwd. */
    struct stat st;
    say("fstat", "stdout", fstat(1, &st), NULL);
    DIR *d = opendir(".");
    say("opendir", ".", d ? 0 : -1, NULL);
    if (d && readdir(d))
        say("readdir", ".", 0, NULL);
    if (d)
        closedir(d);
    printf("done\n");
    return 0;
}
