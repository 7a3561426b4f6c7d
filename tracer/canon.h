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

/* The sandbox-view path of a thread's cwd or of one of its fds (dirfd), by
 * reading /proc/TID/cwd or /proc/TID/fd/N.  malloc'd, or NULL. */
char *vg_canon_cwd(pid_t tid);
char *vg_canon_fd(pid_t tid, int fd);
#endif
