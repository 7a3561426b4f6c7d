/* notify_open.c: opens carried out by vigil.  The decided path (the
 * canonical one the policy judged, resolved in the sandbox's view from the
 * caller's cwd or dirfd at the time of the call) goes to the opener with
 * the call's flags; the opener opens exactly that path with no symlink
 * followed, so what is opened, created or truncated is what was decided,
 * whatever the candidate's threads do to its memory or its files
 * meanwhile.  Paths under /proc go through magic links only the kernel
 * can follow: opened without O_CREAT/O_TRUNC, then decided again on the
 * real path of what was opened, truncated only once allowed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/notify/notify_int.h"
#include "tracer/notify/opener.h"

#define VG_O_TMPFILE_BIT 020000000u /* __O_TMPFILE, without O_DIRECTORY */
#define PERM_BITS 07777u

static const int carried_out[] = {SYS_open, SYS_openat, SYS_openat2, SYS_creat};

bool vg_nt_carried_out(int nr)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(carried_out); i++)
        if (carried_out[i] == nr)
            return true;
    return false;
}

/* The errno of a path the decoder could not make absolute (decode.h). */
static const struct {
    const char *prefix;
    int err;
} unresolved[] = {
    {"(bad fd", EBADF}, {"(too many links)", ELOOP}, {"(name too long)", ENAMETOOLONG},
    {"(unreadable)", EFAULT},
};

static int unresolved_errno(const char *path)
{
    for (size_t i = 0; i < VG_ARRAY_LEN(unresolved); i++)
        if (!strncmp(path, unresolved[i].prefix, strlen(unresolved[i].prefix)))
            return unresolved[i].err;
    return ENOTDIR; /* a dirfd that is not a directory ("socket:[7]") */
}

/* The caller's umask (the opener's is 0): /proc/TID/status "Umask:". */
static int caller_umask(pid_t tid, mode_t *mask)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    const char *u = strstr(buf, "\nUmask:");
    if (!u)
        return -1;
    *mask = (mode_t)strtoul(u + strlen("\nUmask:"), NULL, 8);
    return 0;
}

/* "/proc/self/..." and "/proc/thread-self/..." name the caller, not the
 * opener: rewrite them with the caller's ids as the sandbox sees them. */
static void proc_path(const struct vg_task *t, const char *path, char *out, size_t n)
{
    static const char self[] = "/proc/self", tself[] = "/proc/thread-self";
    if (!strncmp(path, self, strlen(self)) && (path[strlen(self)] == '/' || !path[strlen(self)]))
        snprintf(out, n, "/proc/%d%s", (int)t->nspid, path + strlen(self));
    else if (!strncmp(path, tself, strlen(tself)) &&
             (path[strlen(tself)] == '/' || !path[strlen(tself)]))
        snprintf(out, n, "/proc/%d/task/%d%s", (int)t->nspid, (int)t->nstid, path + strlen(tself));
    else
        snprintf(out, n, "%s", path);
}

static bool under_proc(const char *path)
{
    return !strncmp(path, "/proc/", strlen("/proc/"));
}

/* Decide again on the real path of what a /proc open reached. */
static void redecide(struct nt *n, struct vg_call *c, const char *real, struct vg_call_verdict *v)
{
    if (real[0] != '/' || !strcmp(real, c->check_path))
        return; /* a pipe or socket ("pipe:[7]"): the decided text is all there is */
    c->check_path = c->args.resolved = vg_arena_strdup(&c->arena, real);
    vg_decide_call(n->pt.ctx, c, n->pt.root_fd, v);
}

static int open_proc(struct nt *n, struct vg_task *t, struct vg_call *c, struct vg_call_verdict *v,
                     uint32_t flags)
{
    char path[PATH_MAX], real[PATH_MAX];
    proc_path(t, c->check_path, path, sizeof path);
    int fd = vg_opener_open(n->opener, VG_OPEN_PROC, path, flags, 0, real, sizeof real);
    if (fd < 0)
        return fd;
    redecide(n, c, real, v);
    if (v->refuse || v->kill) {
        close(fd);
        return -v->err;
    }
    struct stat st;
    if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY && fstat(fd, &st) == 0 &&
        S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/* Has the sandbox's pid 1 exited?  Then the kernel is killing every
 * process in it, the opener among them, and an open caught in between
 * is no failure of ours.  WNOWAIT: the lifecycle loop reaps it. */
static bool sandbox_ending(const struct nt *n)
{
    siginfo_t si = {0};
    return waitid(P_PID, (id_t)n->pt.ctx->init_pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           si.si_pid != 0;
}

int vg_nt_open(struct nt *n, struct vg_task *t, struct vg_call *c, struct vg_call_verdict *v)
{
    const char *path = c->check_path;
    uint32_t flags = (uint32_t)c->args.flags;
    if (c->args.path && !c->args.path[0])
        return -ENOENT; /* open("") names nothing (no AT_EMPTY_PATH for opens) */
    if (!path || path[0] != '/')
        return -unresolved_errno(path ? path : "(unreadable)");
    int fd;
    if (under_proc(path)) {
        fd = open_proc(n, t, c, v, flags);
    } else {
        mode_t mask = 0;
        uint32_t mode = 0;
        if (flags & (O_CREAT | VG_O_TMPFILE_BIT)) {
            if (caller_umask(t->tid, &mask) < 0)
                return -EACCES; /* gone, or /proc unreadable: do not guess */
            mode = (uint32_t)c->args.mode & PERM_BITS & ~(uint32_t)mask;
        }
        fd = vg_opener_open(n->opener, VG_OPEN_EXACT, path, flags, mode, NULL, 0);
    }
    if (fd != -EPIPE)
        return fd;
    /* Nothing is opened without it: every open fails from now on (the
     * candidate can kill it, as it can kill itself; it gains nothing). */
    if (!n->opener_gone && !sandbox_ending(n))
        vg_pt_note(&n->pt, "error", "notify engine: the opener is gone (killed?): opens fail with EIO",
                   t->nspid);
    n->opener_gone = true;
    return -EIO;
}
