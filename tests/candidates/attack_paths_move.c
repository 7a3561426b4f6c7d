/* attack_paths_move.c: take files out of a deny by renaming a directory
 * above them, renaming them somewhere more permissive, swapping trees with
 * RENAME_EXCHANGE, or giving them a second name with a hard link; several
 * threads try at once, ROUNDS times each.
 *
 *   attack_paths_move ROUNDS
 *
 * Run in a workdir holding data/private/token.txt, whose tree the policy
 * denies for reading and writing (everything else in the workdir is
 * allowed).  Each step prints what it did and whether it worked; after a
 * rename or link that worked it reads (and appends to) the file under its
 * new name and prints what it read. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attack_paths_threads.h"

#define THREADS 3
#define VG_RENAME_EXCHANGE 2

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int rounds;

static void say(const char *what, int r, int err)
{
    pthread_mutex_lock(&out_lock);
    if (r == 0)
        printf("%s: ok\n", what);
    else
        printf("%s: errno %d\n", what, err);
    pthread_mutex_unlock(&out_lock);
}

/* Read and append to a file under a name it should not have. */
static void use(const char *path)
{
    char got[256] = "";
    int fd = open(path, O_RDWR | O_APPEND);
    if (fd < 0)
        return;
    ssize_t n = read(fd, got, sizeof got - 1);
    got[n > 0 ? n : 0] = '\0';
    if (write(fd, "PWNED\n", 6) < 0)
        perror("write");
    close(fd);
    pthread_mutex_lock(&out_lock);
    printf("read %s: %s\n", path, got);
    pthread_mutex_unlock(&out_lock);
}

static void try_rename(const char *from, const char *to, unsigned flags, const char *then)
{
    char what[PATH_MAX];
    snprintf(what, sizeof what, "rename%s %s %s", flags ? "-exchange" : "", from, to);
    int r = renameat2(AT_FDCWD, from, AT_FDCWD, to, flags);
    say(what, r, errno);
    if (r == 0) {
        use(then);
        /* put it back so that the other attempts meet the same tree */
        if (renameat2(AT_FDCWD, to, AT_FDCWD, from, flags) < 0)
            perror("rename back");
    }
}

static void try_link(int dirfd, const char *from, const char *to, int flags, const char *label)
{
    int r = linkat(dirfd, from, AT_FDCWD, to, flags);
    say(label, r, errno);
    if (r == 0) {
        use(to);
        unlink(to);
    }
}

static void *worker(void *arg)
{
    long k = (long)arg;
    char name[64], proc[PATH_MAX];
    int data = open("data", O_RDONLY | O_DIRECTORY);
    snprintf(proc, sizeof proc, "/proc/self/fd/%d/private/token.txt", data);
    for (int r = 0; r < rounds; r++) {
        snprintf(name, sizeof name, "moved-%ld", k);
        char then[PATH_MAX];
        snprintf(then, sizeof then, "%s/private/token.txt", name);
        try_rename("data", name, 0, then);                       /* a dir above the deny */
        snprintf(then, sizeof then, "%s/token.txt", name);
        try_rename("data/private", name, 0, then);               /* the denied dir itself */
        try_rename("data/private/token.txt", name, 0, name);     /* the file */
        snprintf(name, sizeof name, "other-%ld", k);
        mkdir(name, 0755);
        snprintf(then, sizeof then, "%s/private/token.txt", name);
        try_rename("data", name, VG_RENAME_EXCHANGE, then);      /* swap trees */
        snprintf(name, sizeof name, "linked-%ld", k);
        try_link(AT_FDCWD, "data/private/token.txt", name, 0, "link data/private/token.txt");
        try_link(data, "private/token.txt", name, 0, "linkat dirfd private/token.txt");
        try_link(AT_FDCWD, proc, name, AT_SYMLINK_FOLLOW, "linkat /proc/self/fd/N/private/token.txt");
    }
    close(data);
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atoi(argv[1]) : 1;
    run_threads(THREADS, worker);
    /* Fine moves still work: a directory with nothing special below it. */
    mkdir("plain", 0755);
    say("rename plain plain2", rename("plain", "plain2"), errno);
    printf("done\n");
    return 0;
}
