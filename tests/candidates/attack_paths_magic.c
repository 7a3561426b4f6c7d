/* attack_paths_magic.c: reach a file the policy denies through /proc's
 * magic links, from several threads at once.
 *
 *   attack_paths_magic read  SECRETDIR NAME ROUNDS
 *   attack_paths_magic write KEEPFILE ROUNDS
 *   attack_paths_magic unresolvable SECRETDIR NAME ROUNDS
 *
 * SECRETDIR is a directory below the cwd whose files the policy denies for
 * reading (NAME is one of them); KEEPFILE a file in the cwd it denies for
 * writing.  Every spelling below names the same file as the kernel sees
 * it.  Each attempt prints "SPELLING: ok" (and, for a read, the bytes it
 * got) or "SPELLING: errno N"; the test checks that the bytes never show
 * and that every attempt was refused and recorded.  "unresolvable" tries
 * links that name no file in the sandbox (a pipe, a socket, a deleted
 * file, a namespace, a pid that does not exist) and two plain /proc files
 * that must keep working (they come last). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attack_paths_threads.h"

#define THREADS 4
#define MAXS 24

static char spellings[MAXS][PATH_MAX];
static int nspell;
static int writing, rounds;
static int ncontrols;        /* trailing spellings that must work */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(spellings[nspell++], PATH_MAX, fmt, ap);
    va_end(ap);
}

/* rel: the target relative to the cwd ("secret/token.txt", "keep.txt"). */
static void make_spellings(const char *rel)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        exit(2);
    const char *base = strrchr(cwd, '/') + 1;   /* the cwd's own name */
    int dfd = open(".", O_RDONLY | O_DIRECTORY); /* the cwd, allowed */
    int pid = getpid(), tid = (int)syscall(SYS_gettid);
    /* A later symlink: $TMP/via -> the cwd (creating it is allowed). */
    char via[64];
    snprintf(via, sizeof via, "/tmp/via-%d", pid);
    if (symlink(cwd, via) < 0 && errno != EEXIST)
        perror("symlink");
    add("/proc/self/root%s/%s", cwd, rel);
    add("/proc/self/cwd/%s", rel);
    add("/proc/thread-self/cwd/%s", rel);
    add("/proc/%d/cwd/%s", pid, rel);
    add("/proc/%d/task/%d/cwd/%s", pid, tid, rel);
    add("/proc/%d/root%s/%s", pid, cwd, rel);
    add("/proc/self/fd/%d/%s", dfd, rel);
    add("/dev/fd/%d/%s", dfd, rel);
    add("/proc/self/cwd/../%s/%s", base, rel);           /* .. after a magic link */
    add("/proc/self/fd/%d/../%s/%s", dfd, base, rel);
    add("/proc/self/../self/cwd/%s", rel);               /* .. inside /proc */
    add("/proc/self/root/proc/self/cwd/%s", rel);
    add("/proc/self/root%s/%s", via, rel);               /* a symlink after it */
    add("/proc/self/cwd/../../../../../..%s/%s", via, rel);
}

/* Magic links to objects that have no name in the sandbox view. */
static void make_unresolvable(const char *rel)
{
    char cwd[PATH_MAX];
    int pfd[2], sv[2];
    if (!getcwd(cwd, sizeof cwd) || pipe(pfd) < 0 ||
        socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        exit(2);
    char tmpl[] = "/tmp/gone.XXXXXX";
    int gone = mkstemp(tmpl);
    if (gone < 0 || unlink(tmpl) < 0)
        exit(2);
    add("/proc/self/fd/%d", pfd[0]);
    add("/proc/self/fd/%d", sv[0]);
    add("/proc/self/fd/%d", gone);
    add("/proc/self/ns/net");
    add("/proc/self/fd/%d/../..%s/%s", pfd[0], cwd, rel);
    add("/proc/99999/root%s/%s", cwd, rel);
    add("/proc/self/fd/999/%s", rel);
    add("/proc/self/status");                            /* controls */
    add("/proc/cpuinfo");
    ncontrols = 2;
}

static void attempt(const char *p)
{
    /* O_NONBLOCK: opening a pipe must not wait for a writer. */
    int fd = open(p, (writing ? O_WRONLY | O_APPEND : O_RDONLY) | O_NONBLOCK);
    char got[256] = "";
    int err = errno;
    if (fd >= 0) {
        if (writing) {
            if (write(fd, "PWNED\n", 6) < 0)
                err = errno;
        } else {
            ssize_t n = read(fd, got, sizeof got - 1);
            got[n > 0 ? n : 0] = '\0';
            got[strcspn(got, "\n")] = '\0';   /* one line is enough */
        }
        close(fd);
    }
    pthread_mutex_lock(&out_lock);
    if (fd >= 0)
        printf("%s: ok %s\n", p, got);
    else
        printf("%s: errno %d\n", p, err);
    pthread_mutex_unlock(&out_lock);
}

static void *worker(void *arg)
{
    long k = (long)arg;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < nspell; i++)
            attempt(spellings[(i + k) % nspell]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    writing = strcmp(argv[1], "write") == 0;
    bool unresolvable = strcmp(argv[1], "unresolvable") == 0;
    char rel[PATH_MAX];
    if (writing) {
        snprintf(rel, sizeof rel, "%s", argv[2]);
        rounds = atoi(argv[3]);
    } else {
        if (argc < 5)
            return 2;
        snprintf(rel, sizeof rel, "%s/%s", argv[2], argv[3]);
        rounds = atoi(argv[4]);
    }
    if (unresolvable)
        make_unresolvable(rel);
    else
        make_spellings(rel);
    run_threads(THREADS, worker);
    printf("done %d spellings, %d controls\n", nspell, ncontrols);
    return 0;
}
