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
 * /proc is walked like any other tree, with two differences (canon_proc.c):
 * /proc/self and /proc/thread-self name the *calling* thread, so they are
 * answered from its sandbox pid and tid rather than read (the supervisor
 * has no pid in the sandbox's procfs); and the links below /proc/PID
 * (cwd, root, exe, fd/N, ...) are magic: their target is read through the
 * sandbox's own procfs, where PID is a sandbox pid, and spliced in like an
 * absolute symlink, so "/proc/self/root/etc/shadow" is judged as
 * "/etc/shadow" and a ".." after it climbs physically.  A magic link whose
 * target has no name in the sandbox (pipe:[..], socket:[..], anon_inode:,
 * a deleted file), a pid that does not exist, or a /proc entry that cannot
 * be read makes the whole path unresolvable: the result is a text starting
 * with VG_CANON_UNRESOLVED, which the verdict refuses. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/canon.h"
#include "tracer/canon_cache.h"
#include "tracer/canon_int.h"
#include "util/path.h"
#include "util/util.h"

#define VG_MAX_LINKS 40

/* The target of the component just pushed: length, 0 when it is not a
 * symlink, -1 when the path is unresolvable (w->why). */
static ssize_t walk_target(struct walk *w, size_t prev_len, bool in_proc, char *target,
                           size_t cap)
{
    if (in_proc)
        return vg_proc_link(w, prev_len, target, cap);
    ssize_t n = vg_canon_cache_readlink(w->cx->cache, w->cx->root_fd, w->out, target, cap);
    if (n >= 0)
        return n;
    /* EINVAL: exists and is not a symlink.  Missing or not a directory:
     * the kernel fails, or creates the last component; the rest is kept
     * as written.  Anything else (no permission...) cannot be judged. */
    if (errno == ENOENT || errno == ENOTDIR)
        w->lexical = true;
    else if (errno != EINVAL) {
        vg_walk_unresolvable(w, "%s: %s", w->out, strerror(errno));
        return -1;
    }
    return 0;
}

/* One component c (not "." or "..") has just been pushed; see whether it is
 * a symlink and, if it is, splice its target in front of tail (which lives
 * inside rest).  Returns 1 when rest was rewritten, 0 when not, -1 on error
 * (errno) or when the path is unresolvable (w->why). */
static int walk_link(struct walk *w, bool in_proc, char *rest, size_t restsz,
                     const char *tail, size_t prev_len)
{
    char target[PATH_MAX];
    ssize_t n = walk_target(w, prev_len, in_proc, target, sizeof(target));
    if (n <= 0)
        return (int)n;
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

char *vg_canon(int root_fd, const char *base, const char *path, bool follow_last)
{
    return vg_canon_cached(NULL, root_fd, base, path, follow_last);
}

char *vg_canon_cached(struct vg_canon_cache *cache, int root_fd, const char *base,
                      const char *path, bool follow_last)
{
    struct vg_canon_ctx cx = {.root_fd = root_fd, .cache = cache};
    return vg_canon_at(&cx, base, path, follow_last);
}

/* A last component the kernel will not follow is never read as a link,
 * so whether it exists is asked separately, and only when the caller wants
 * to know (cx->missing: the probe mark of the log, core/decide.c). */
static void note_missing_last(struct walk *w)
{
    struct stat st;
    if (fstatat(w->cx->root_fd, w->len ? w->out + 1 : ".", &st, AT_SYMLINK_NOFOLLOW) < 0 &&
        (errno == ENOENT || errno == ENOTDIR))
        w->lexical = true;
}

static char *walk_result(const struct walk *w)
{
    if (w->why[0])
        return vg_xasprintf("%s %s)", VG_CANON_UNRESOLVED, w->why);
    return vg_xstrdup(w->len ? w->out : "/");
}

char *vg_canon_at(const struct vg_canon_ctx *cx, const char *base, const char *path,
                  bool follow_last)
{
    struct walk w = {.len = 0, .cx = cx};
    char rest[2 * PATH_MAX];
    /* base is already canonical (it comes from the kernel); normalised
     * lexically anyway, so that the invariants of out hold whatever the
     * caller passes */
    if (path[0] != '/' &&
        vg_path_lexical(w.out, sizeof(w.out), &w.len, base ? base : "/") < 0)
        return NULL;
    if (strlen(path) >= sizeof(rest)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    strcpy(rest, path);
    const char *p = rest;
    size_t n;
    while (!w.why[0] && (p = vg_path_comp(p, &n)) != NULL) {
        const char *end = p + n;
        enum vg_path_kind kind = vg_path_kind(p, n);
        if (kind != VG_PATH_NAME) {
            /* ".." on the text: every component before it is resolved */
            if (kind == VG_PATH_DOTDOT)
                vg_path_pop(w.out, &w.len);
            p = end;
            continue;
        }
        size_t prev_len = w.len;
        bool in_proc = vg_walk_in_proc(&w);
        if (vg_path_push(w.out, sizeof(w.out), &w.len, p, n) < 0)
            return NULL;
        /* A trailing slash makes the kernel follow the last component too. */
        bool last_unfollowed = *end == '\0' && !follow_last;
        bool skip = w.lexical || last_unfollowed;
        if (last_unfollowed && !w.lexical && cx->missing)
            note_missing_last(&w);
        int r = skip ? 0 : walk_link(&w, in_proc, rest, sizeof(rest), end, prev_len);
        if (r < 0 && !w.why[0])
            return NULL;
        p = r > 0 ? rest : end;
    }
    if (cx->missing)
        *cx->missing = w.lexical && !w.why[0];
    return walk_result(&w);
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
