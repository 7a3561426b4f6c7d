/* canon.h: make a path absolute and canonical *as the sandbox sees it*:
 * relative paths are joined with the thread's cwd (or the dirfd's path), and
 * "..", "." and symlinks are resolved inside the sandbox root, so that
 * /tmp/../etc/shadow or a symlink in /tmp that points at a secret is judged
 * by what it really names.  A missing tail (a file about to be created) is
 * kept lexically.  Magic links under /proc (self, thread-self, PID/cwd,
 * PID/root, PID/fd/N, ...) resolve to what they name for the calling
 * thread; a path that cannot be resolved comes back as a text starting
 * with VG_CANON_UNRESOLVED, never as a path a rule could match. */
#ifndef VG_CANON_H
#define VG_CANON_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Prefix of the result for a path that names nothing the policy can judge
 * (a magic link to a pipe, socket or deleted file, an unknown pid, a /proc
 * entry that cannot be read); the rest says why.  Not absolute, so no rule
 * matches it, and the verdict refuses it (core/decide.c). */
#define VG_CANON_UNRESOLVED "(unresolvable:"

struct vg_canon_cache;

/* Who is asking, and where: what a walk needs beyond the path. */
struct vg_canon_ctx {
    int root_fd;                  /* the sandbox's "/" */
    struct vg_canon_cache *cache; /* lookups under read-only trees, or NULL */
    int32_t nspid, nstid;         /* the caller's sandbox pid and tid, for
                                   * /proc/self and /proc/thread-self; 0 when
                                   * unknown (those then are unresolvable) */
    bool *missing;                /* out, when not NULL: the walk found that the
                                   * final object does not exist (a component is
                                   * missing); false when it exists, or when the
                                   * path is unresolvable */
};

/* root_fd: a directory fd acting as "/" (the sandbox root); symlinks and ".."
 * never climb above it.  base: absolute directory that a relative path is
 * relative to.  follow_last: resolve a symlink in the last component (open
 * without O_NOFOLLOW, exec, stat) or not (unlink, rename, lstat, O_NOFOLLOW).
 * Returns a malloc'd absolute path, or NULL (errno) on ENAMETOOLONG/ELOOP. */
char *vg_canon(int root_fd, const char *base, const char *path, bool follow_last);

/* Memo of symlink lookups for paths under trees that cannot change during
 * a run (read-only binds of /usr, /etc..., the read-only sandbox root's own
 * entries).  Most audited paths are library and stdlib files there; the
 * memo turns their per-component readlinkat calls into hash lookups. */
/* prefixes: absolute paths ("/usr", "/etc", "/bin"...) whose trees are
 * immutable for the run. */
struct vg_canon_cache *vg_canon_cache_new(const char *const *prefixes, unsigned n);
void vg_canon_cache_free(struct vg_canon_cache *c);
/* Does path lie in one of those trees (never /proc)?  Nothing there can be
 * created or swapped during the run. */
bool vg_canon_cache_immutable(const struct vg_canon_cache *c, const char *path);
/* The notify engine's opens (crew.c): was the object at path, which lies
 * in such a tree and whose lookup the memo holds, found a directory or a
 * regular file by an open before?  Then it still is, and the open of it
 * needs no look at what it opened.  saw_plain remembers that it was. */
bool vg_canon_cache_plain(struct vg_canon_cache *c, const char *path);
void vg_canon_cache_saw_plain(struct vg_canon_cache *c, const char *path);
/* vg_canon with a memo (cache may be NULL). */
char *vg_canon_cached(struct vg_canon_cache *cache, int root_fd, const char *base,
                      const char *path, bool follow_last);
/* The general form: root, memo and caller from cx. */
char *vg_canon_at(const struct vg_canon_ctx *cx, const char *base, const char *path,
                  bool follow_last);
/* Same as vg_canon_cwd/vg_canon_fd for a sandbox behind pivot_root: the
 * kernel's text is already the sandbox view, one readlink instead of two. */
char *vg_canon_link(pid_t tid, int fd, bool pivoted);

/* The sandbox-view path of a thread's cwd or of one of its fds (dirfd), by
 * reading /proc/TID/cwd or /proc/TID/fd/N.  malloc'd, or NULL. */
char *vg_canon_cwd(pid_t tid);
char *vg_canon_fd(pid_t tid, int fd);
#endif
