/* notify_fs_flip.c OP DIR SECONDS: a file call (OP: unlink, rename,
 * mkdir, symlink, chmod, readlink) on DIR/open/X while a second thread flips
 * the path buffer between DIR/open/X and DIR/keep/X as fast as it can.
 * The policy lets the candidate change DIR/open and nothing in DIR/keep:
 * a supervisor that lets the kernel read the path again after deciding
 * changes DIR/keep some of the time.  After each successful call the
 * candidate undoes what it did in DIR/open.  readlink prints, once, any
 * link text it read that is not DIR/open/f's ("decoy"):
 *   read TEXT
 * Prints
 *   flip op=OP tries=N ok=K refused=D other=O
 * SECONDS 0: no second thread; the call once on DIR/open/X, once on
 * DIR/keep/X, each printed as
 *   once path=P ret=R errno=E
 * (what the candidate saw, to compare with the log's outcome). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "notify_flip.h"

#define NAME_LEN 4 /* "open" and "keep" */

static char path[4096];
static size_t at; /* offset of "open" in path */
static char dir[4000];
static const char *op;

static void *flipper(void *arg)
{
    (void)arg;
    while (!atomic_load(&flip_done)) {
        memcpy(path + at, "keep", NAME_LEN);
        memcpy(path + at, "open", NAME_LEN);
    }
    return NULL;
}

static void in_open(char *buf, size_t n, const char *leaf)
{
    snprintf(buf, n, "%s/open/%s", dir, leaf);
}

/* The call on path, and what undoes it in DIR/open when it worked. */
static int call(const char *op)
{
    char a[4096], b[4096];
    if (!strcmp(op, "unlink")) {
        in_open(a, sizeof a, "f");
        close(open(a, O_WRONLY | O_CREAT, 0644));
        return unlink(path);
    }
    if (!strcmp(op, "rename")) {
        in_open(a, sizeof a, "moved");
        in_open(b, sizeof b, "f");
        int r = rename(path, a);
        if (r == 0 && rename(a, b) < 0)
            return -2;
        return r;
    }
    if (!strcmp(op, "mkdir")) {
        int r = mkdir(path, 0755);
        in_open(a, sizeof a, "f");
        if (r == 0 && rmdir(a) < 0)
            return -2;
        return r;
    }
    if (!strcmp(op, "symlink")) {
        int r = symlink("target", path);
        in_open(a, sizeof a, "f");
        if (r == 0 && unlink(a) < 0)
            return -2;
        return r;
    }
    if (!strcmp(op, "readlink")) {
        static bool told;
        ssize_t n = readlink(path, a, sizeof a - 1);
        if (n > 0 && (a[n] = 0, strcmp(a, "decoy")) && !told) {
            printf("read %s\n", a);
            told = true;
        }
        return n < 0 ? -1 : 0;
    }
    if (!strcmp(op, "chmod")) {
        int r = chmod(path, 0600);
        in_open(a, sizeof a, "f");
        if (r == 0 && chmod(a, 0644) < 0)
            return -2;
        return r;
    }
    fprintf(stderr, "unknown op %s\n", op);
    exit(2);
}

static enum flip_result attempt(void)
{
    int r = call(op);
    if (r == 0)
        return FLIP_OK;
    return r == -1 && (errno == EACCES || errno == EPERM) ? FLIP_REFUSED : FLIP_OTHER;
}

static void once(const char *which)
{
    memcpy(path + at, which, NAME_LEN);
    errno = 0;
    int r = call(op);
    printf("once path=%s ret=%d errno=%d\n", path, r, r < 0 ? errno : 0);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s OP DIR SECONDS\n", argv[0]);
        return 2;
    }
    op = argv[1];
    snprintf(dir, sizeof dir, "%s", argv[2]);
    double secs = atof(argv[3]);
    /* mkdir and symlink create "f": the undo removes DIR/open/f */
    snprintf(path, sizeof path, "%s/open/f", dir);
    at = strlen(dir) + 1;
    if (secs <= 0) {
        once("open");
        once("keep");
        return 0;
    }
    struct flip_tally t = flip_run(flipper, attempt, secs);
    printf("flip op=%s tries=%ld ok=%ld refused=%ld other=%ld\n", op, t.tries, t.ok, t.refused,
           t.other);
    return 0;
}
