/* canon.c: canonical, sandbox-view paths.
 *
 * vg_canon walks the path one component at a time, keeping the resolved
 * prefix as text.  Whether a component is a symlink is asked with
 * readlinkat(root_fd, "<prefix>/<name>"): the prefix is made only of
 * components already known not to be symlinks and holds no "..", so the
 * kernel's walk from root_fd cannot leave the sandbox root (a symlink
 * swapped in by the candidate between two of our lookups could still
 * mislead this walk, but that race exists for the real call anyway: the
 * ptrace engine decides before the kernel resolves).  ".." is applied to
 * the text, which is right because every component before it has been
 * physically resolved, and it never climbs above "/".
 *
 * Components under /proc are not resolved: /proc/self, /proc/PID/cwd,
 * /proc/PID/fd/N are magic links whose targets depend on who reads them,
 * and the supervisor reading them through root_fd would see its own
 * process (or nothing), not the candidate's.  They are kept lexically, so
 * the policy judges "/proc/self/root/etc/shadow" as written. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/canon.h"
#include "tracer/canon_cache.h"
#include "util/util.h"

#define VG_MAX_LINKS 40

struct walk {
    char out[PATH_MAX];   /* resolved prefix: "" for "/", else "/a/b" */
    size_t len;
    bool lexical;         /* stop asking the filesystem */
    int links;
};

static int walk_push(struct walk *w, const char *c, size_t n)
{
    if (w->len + 1 + n >= sizeof(w->out)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    w->out[w->len++] = '/';
    memcpy(w->out + w->len, c, n);
    w->len += n;
    w->out[w->len] = '\0';
    return 0;
}

static void walk_pop(struct walk *w)
{
    while (w->len > 0 && w->out[w->len - 1] != '/')
        w->len--;
    if (w->len > 0)
        w->len--;            /* the separator; "/" stays the empty prefix */
    w->out[w->len] = '\0';
}

/* Is the prefix /proc or below?  Its children may be magic (see above). */
static bool walk_in_proc(const struct walk *w)
{
    return w->len >= 5 && memcmp(w->out, "/proc", 5) == 0 &&
           (w->len == 5 || w->out[5] == '/');
}

/* One component c (not "." or "..") has just been pushed; see whether it is
 * a symlink and, if it is, splice its target in front of tail (which lives
 * inside rest).  Returns 1 when rest was rewritten, 0 when not, -1 on error. */
static int walk_link(struct walk *w, struct vg_canon_cache *cache, int root_fd, char *rest,
                     size_t restsz, const char *tail, size_t prev_len)
{
    char target[PATH_MAX];
    ssize_t n = vg_canon_cache_readlink(cache, root_fd, w->out, target, sizeof(target));
    if (n < 0) {
        /* EINVAL: exists and is not a symlink.  Anything else (missing,
         * not a directory, no permission): keep the rest as written. */
        if (errno != EINVAL)
            w->lexical = true;
        return 0;
    }
    if ((size_t)n >= sizeof(target)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (++w->links > VG_MAX_LINKS) {
        errno = ELOOP;
        return -1;
    }
    size_t tail_len = strlen(tail);
    if ((size_t)n + tail_len + 1 > restsz) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memmove(rest + n, tail, tail_len + 1);
    memcpy(rest, target, (size_t)n);
    w->len = target[0] == '/' ? 0 : prev_len;
    w->out[w->len] = '\0';
    return 1;
}

/* Start from base (already canonical: it comes from the kernel), normalized
 * lexically so that the invariants of out hold whatever the caller passes. */
static int walk_start(struct walk *w, const char *base)
{
    for (const char *p = base; *p;) {
        while (*p == '/')
            p++;
        const char *end = strchrnul(p, '/');
        size_t n = (size_t)(end - p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            walk_pop(w);
        else if (n > 0 && !(n == 1 && p[0] == '.') && walk_push(w, p, n) < 0)
            return -1;
        p = end;
    }
    return 0;
}

char *vg_canon(int root_fd, const char *base, const char *path, bool follow_last)
{
    return vg_canon_cached(NULL, root_fd, base, path, follow_last);
}

char *vg_canon_cached(struct vg_canon_cache *cache, int root_fd, const char *base,
                      const char *path, bool follow_last)
{
    struct walk w = { .len = 0 };
    char rest[2 * PATH_MAX];
    if (path[0] != '/' && walk_start(&w, base ? base : "/") < 0)
        return NULL;
    if (strlen(path) >= sizeof(rest)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    strcpy(rest, path);
    const char *p = rest;
    for (;;) {
        while (*p == '/')
            p++;
        if (*p == '\0')
            break;
        const char *end = strchrnul(p, '/');
        size_t n = (size_t)(end - p);
        if (n == 1 && p[0] == '.') {
            p = end;
            continue;
        }
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            walk_pop(&w);
            p = end;
            continue;
        }
        size_t prev_len = w.len;
        bool magic = walk_in_proc(&w);
        if (walk_push(&w, p, n) < 0)
            return NULL;
        /* A trailing slash makes the kernel follow the last component too. */
        bool skip = w.lexical || magic || (*end == '\0' && !follow_last);
        if (magic)
            w.lexical = true;
        int r = skip ? 0 : walk_link(&w, cache, root_fd, rest, sizeof(rest), end, prev_len);
        if (r < 0)
            return NULL;
        p = r ? rest : end;
    }
    return vg_xstrdup(w.len ? w.out : "/");
}

/* readlink into a malloc'd string; NULL (errno) on failure or truncation. */
static char *read_link(const char *path)
{
    char buf[PATH_MAX];
    ssize_t n = readlink(path, buf, sizeof(buf));
    if (n < 0)
        return NULL;
    if ((size_t)n >= sizeof(buf)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return vg_xstrndup(buf, (size_t)n);
}

/* The kernel prints /proc/TID/{cwd,fd/N} relative to the *reader's* root.
 * When the sandbox lives in its own mount namespace behind pivot_root (what
 * vigil does), the sandbox's mounts are unreachable from the supervisor's
 * root and the text comes out as the sandbox sees it (checked: bwrap with a
 * tmpfs root, cwd /tmp/work reads back as "/tmp/work").  When the sandbox
 * root is instead a directory the supervisor can reach (chroot in the same
 * mount namespace), the text carries that directory as a prefix, which
 * /proc/TID/root names; strip it. */
static char *sandbox_view(pid_t tid, char *link)
{
    if (link == NULL || link[0] != '/')
        return link;         /* "socket:[123]", "pipe:[9]", "anon_inode:..." */
    char rootp[64];
    snprintf(rootp, sizeof(rootp), "/proc/%d/root", (int)tid);
    char *root = read_link(rootp);
    if (root == NULL || strcmp(root, "/") == 0) {
        free(root);
        return link;
    }
    size_t rl = strlen(root);
    if (strncmp(link, root, rl) == 0 && (link[rl] == '/' || link[rl] == '\0')) {
        char *inside = vg_xstrdup(link[rl] ? link + rl : "/");
        free(link);
        link = inside;
    }
    free(root);
    return link;
}

char *vg_canon_cwd(pid_t tid)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/%d/cwd", (int)tid);
    return sandbox_view(tid, read_link(p));
}

char *vg_canon_fd(pid_t tid, int fd)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)tid, fd);
    return sandbox_view(tid, read_link(p));
}

char *vg_canon_link(pid_t tid, int fd, bool pivoted)
{
    if (!pivoted)
        return fd == AT_FDCWD ? vg_canon_cwd(tid) : vg_canon_fd(tid, fd);
    char p[64];
    if (fd == AT_FDCWD)
        snprintf(p, sizeof(p), "/proc/%d/cwd", (int)tid);
    else
        snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)tid, fd);
    return read_link(p);
}
