/* canon_proc.c: the /proc step of the canonical walk (see canon.c).
 *
 * The sandbox has its own pid namespace and its own procfs at /proc
 * (launcher/plan.c mounts it; the candidate cannot mount).  Reading an entry
 * through root_fd therefore reads the sandbox's procfs: "proc/2/cwd" is
 * sandbox pid 2, and a pid the sandbox cannot see does not exist there.
 * The kernel prints a magic link's target relative to the reader's root;
 * behind pivot_root the sandbox's mounts are unreachable from ours and the
 * text comes out as the sandbox sees it (see sandbox_view in canon.c).
 *
 * Nothing here goes through the memo (canon_cache.c): a magic link's
 * target changes with every chdir, dup2 or exit. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "tracer/canon_int.h"

#define PROC_LEN 5              /* strlen("/proc") */
#define DELETED " (deleted)"    /* what the kernel appends to an unlinked file's name */

void vg_walk_unresolvable(struct walk *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->why, sizeof w->why, fmt, ap);
    va_end(ap);
}

/* The sandbox's /proc is the procfs vigil mounted, but a walk may also run
 * inside another directory (openat2 RESOLVE_IN_ROOT) whose "proc" is the
 * candidate's own: its "self" must not be taken for the caller.  Only a
 * "proc" that is missing or known not to be a procfs counts as ordinary:
 * if the question cannot be answered, the stricter walk is taken. */
static bool is_procfs(int root_fd)
{
    int fd = openat(root_fd, "proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno != ENOENT && errno != ENOTDIR && errno != ELOOP;
    struct statfs st;
    int r = fstatfs(fd, &st);
    close(fd);
    return r != 0 || st.f_type == PROC_SUPER_MAGIC;
}

bool vg_walk_in_proc(struct walk *w)
{
    bool below = w->len >= PROC_LEN && memcmp(w->out, "/proc", PROC_LEN) == 0 &&
                 (w->len == PROC_LEN || w->out[PROC_LEN] == '/');
    if (!below || !w->cx)
        return false;
    if (w->procfs == 0)
        w->procfs = is_procfs(w->cx->root_fd) ? 1 : -1;
    return w->procfs > 0;
}

/* /proc/self and /proc/thread-self name the calling thread: their target
 * is made from its sandbox ids.  Returns the length, or -1 (unresolvable). */
static ssize_t self_link(struct walk *w, bool thread, char *target, size_t cap)
{
    const struct vg_canon_ctx *cx = w->cx;
    if (cx->nspid <= 0 || (thread && cx->nstid <= 0)) {
        vg_walk_unresolvable(w, "%s: the caller's sandbox pid is unknown", w->out);
        return -1;
    }
    int n = thread ? snprintf(target, cap, "%d/task/%d", (int)cx->nspid, (int)cx->nstid)
                   : snprintf(target, cap, "%d", (int)cx->nspid);
    return n > 0 && (size_t)n < cap ? n : -1;
}

/* Is the walk in a task's part of /proc (/proc/PID...), where entries come
 * and go with processes, threads, fds and mappings? */
static bool in_task_dir(const struct walk *w)
{
    if (w->len <= PROC_LEN + 1)
        return false;
    const char *c = w->out + PROC_LEN + 1;   /* the component after /proc */
    size_t n = strcspn(c, "/");
    return n > 0 && strspn(c, "0123456789") >= n;
}

/* Is the component just pushed (after prev_len) an entry of a task's
 * map_files directory? */
static bool in_map_files(const struct walk *w, size_t prev_len)
{
    static const char dir[] = "/map_files";
    size_t n = sizeof dir - 1;
    return in_task_dir(w) && prev_len >= n && !memcmp(w->out + prev_len - n, dir, n);
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

ssize_t vg_proc_link(struct walk *w, size_t prev_len, char *target, size_t cap)
{
    bool top = prev_len == PROC_LEN;     /* an entry of /proc itself */
    const char *name = w->out + prev_len + 1;
    if (top && (!strcmp(name, "self") || !strcmp(name, "thread-self")))
        return self_link(w, name[0] == 't', target, cap);
    if (in_map_files(w, prev_len)) {
        /* The kernel follows a map_files link only for a caller with
         * CAP_CHECKPOINT_RESTORE in the initial user namespace (EPERM),
         * which no candidate has; vigil, as root, could read it, and the
         * notify engine then opened the mapped file by name. */
        vg_walk_unresolvable(w, "%s: map_files links are not followed", w->out);
        return -1;
    }
    ssize_t n = readlinkat(w->cx->root_fd, w->out + 1, target, cap);
    if (n < 0 && errno == EINVAL)
        return 0;                        /* exists, not a link */
    if (n < 0 && errno == ENOENT && !in_task_dir(w)) {
        /* /proc/sys/kernel/nosuch: the global entries cannot appear
         * during the run (the sandbox loads no modules), so the kernel
         * fails ENOENT and the rest is kept as written. */
        w->lexical = true;
        return 0;
    }
    if (n < 0) {
        /* No such pid (or fd, or mapping: they may appear before the
         * kernel looks), no permission: the path cannot be judged, so it
         * is refused. */
        vg_walk_unresolvable(w, "%s: %s", w->out, strerror(errno));
        return -1;
    }
    if ((size_t)n >= cap) {
        vg_walk_unresolvable(w, "%s: target too long", w->out);
        return -1;
    }
    /* /proc's own entries (mounts -> self/mounts) are ordinary links.
     * Below /proc/PID every link is magic: its target is an object, and
     * only one with a name in the sandbox can be judged. */
    if (!top && (target[0] != '/' || ends_with(target, (size_t)n, DELETED))) {
        vg_walk_unresolvable(w, "%s -> %.*s", w->out, (int)n, target);
        return -1;
    }
    return n;
}
