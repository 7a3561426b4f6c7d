/* canon.h: make a path absolute and canonical *as the sandbox sees it*:
 * relative paths are joined with the thread's cwd (or the dirfd's path), and
 * "..", "." and symlinks are resolved inside the sandbox root, so that
 * /tmp/../etc/shadow or a symlink in /tmp that points at a secret is judged
 * by what it really names.  A missing tail (a file about to be created) is
 * kept lexically. */
#ifndef VG_CANON_H
#define VG_CANON_H
#include <stdbool.h>
#include <sys/types.h>

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
struct vg_canon_cache;
/* prefixes: absolute paths ("/usr", "/etc", "/bin"...) whose trees are
 * immutable for the run. */
struct vg_canon_cache *vg_canon_cache_new(const char *const *prefixes, unsigned n);
void vg_canon_cache_free(struct vg_canon_cache *c);
/* vg_canon with a memo (cache may be NULL). */
char *vg_canon_cached(struct vg_canon_cache *cache, int root_fd, const char *base,
                      const char *path, bool follow_last);
/* Same as vg_canon_cwd/vg_canon_fd for a sandbox behind pivot_root: the
 * kernel's text is already the sandbox view, one readlink instead of two. */
char *vg_canon_link(pid_t tid, int fd, bool pivoted);

/* The sandbox-view path of a thread's cwd or of one of its fds (dirfd), by
 * reading /proc/TID/cwd or /proc/TID/fd/N.  malloc'd, or NULL. */
char *vg_canon_cwd(pid_t tid);
char *vg_canon_fd(pid_t tid, int fd);
#endif
