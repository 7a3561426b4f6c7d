/* notify_proc_flip.c OP DIR SECONDS: a reading call on a /proc path while
 * a second thread flips the path buffer between that /proc path and a
 * denied file, DIR/keep/..., as fast as it can.  The policy allows /proc
 * and denies reading DIR/keep: a supervisor that decides on the /proc
 * path and lets the kernel read the path again hands out what is denied.
 *   readlink   /proc/self/fd/N (N: DIR/open/f)   <->  DIR/keep/l, a symlink
 *   getxattr   /proc/self/status                 <->  DIR/keep/f, user.vigil
 *   lgetxattr  /proc/self/fd/N                   <->  DIR/keep/f, user.vigil
 *   listxattr  /proc/self/status                 <->  DIR/keep/f, user.<name>
 * (the test put a token in the link's text, the xattr's value, the
 * xattr's name).  Every answer that is not the /proc path's is printed,
 * the first few of them:
 *   read TEXT
 * and then
 *   flip op=OP tries=N ok=K refused=D other=O
 * ok: the /proc path's answer (for the xattr calls: ENOTSUP or ENODATA,
 * procfs keeps none), refused: EACCES. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "notify_flip.h"

#define SHOWN_MAX 5 /* unexpected answers printed */

static char path[4096];
static char allowed[4096], denied[4096];
static char expected[4096]; /* readlink's answer on the /proc path */
static const char *op;
static int shown;

static void *flipper(void *arg)
{
    (void)arg;
    while (!atomic_load(&flip_done)) {
        strcpy(path, denied);
        strcpy(path, allowed);
    }
    return NULL;
}

static void show(const char *buf, ssize_t n)
{
    if (shown++ >= SHOWN_MAX)
        return;
    char text[4096];
    size_t k = 0;
    for (ssize_t i = 0; i < n && k < sizeof text - 1; i++)
        text[k++] = buf[i] ? buf[i] : ' '; /* listxattr's names are NUL-separated */
    text[k] = 0;
    printf("read %s\n", text);
}

static ssize_t call(char *buf, size_t n)
{
    if (!strcmp(op, "readlink"))
        return readlink(path, buf, n);
    if (!strcmp(op, "getxattr"))
        return getxattr(path, "user.vigil", buf, n);
    if (!strcmp(op, "lgetxattr"))
        return lgetxattr(path, "user.vigil", buf, n);
    return listxattr(path, buf, n);
}

static enum flip_result attempt(void)
{
    char buf[4096];
    ssize_t n = call(buf, sizeof buf);
    if (n < 0)
        return errno == EACCES ? FLIP_REFUSED
             : (errno == ENOTSUP || errno == ENODATA) ? FLIP_OK : FLIP_OTHER;
    bool proc_answer = !strcmp(op, "readlink")
        ? (size_t)n == strlen(expected) && !memcmp(buf, expected, (size_t)n)
        : n == 0; /* no xattr on procfs */
    if (!proc_answer)
        show(buf, n);
    return proc_answer ? FLIP_OK : FLIP_OTHER;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    op = argv[1];
    const char *dir = argv[2];
    char f[4096];
    snprintf(f, sizeof f, "%s/open/f", dir);
    int fd = open(f, O_RDONLY);
    if (fd < 0) {
        perror("open");
        return 1;
    }
    snprintf(expected, sizeof expected, "%s", f);
    bool on_fd = !strcmp(op, "readlink") || !strcmp(op, "lgetxattr");
    if (on_fd)
        snprintf(allowed, sizeof allowed, "/proc/self/fd/%d", fd);
    else
        snprintf(allowed, sizeof allowed, "/proc/self/status");
    snprintf(denied, sizeof denied, "%s/keep/%s", dir, !strcmp(op, "readlink") ? "l" : "f");
    strcpy(path, allowed);
    struct flip_tally t = flip_run(flipper, attempt, atof(argv[3]));
    printf("flip op=%s tries=%ld ok=%ld refused=%ld other=%ld\n", op, t.tries, t.ok, t.refused,
           t.other);
    return 0;
}
