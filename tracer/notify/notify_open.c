/* notify_open.c: opens carried out by vigil.  The decided path (the
 * canonical one the policy judged, resolved in the sandbox's view from the
 * caller's cwd or dirfd at the time of the call, magic links below /proc
 * already replaced by what they lead to) is opened as the candidate
 * (crew.h) with the call's flags: exactly that path with no
 * symlink followed, so what is opened, created or truncated is what was
 * decided, whatever the candidate's threads do to its memory or its files
 * meanwhile.  O_CREAT and O_TRUNC take effect only then: this runs after
 * the verdict allowed the call, and nothing before it opens anything. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "tracer/notify/notify_int.h"

#define PERM_BITS 07777u

bool vg_nt_carried_out(int nr, uint64_t flags)
{
    /* openat2's flags are in its open_how, in memory: an O_PATH there,
     * let through, could be read again by the kernel as any other open
     * (of a path flipped meanwhile).  So it is taken, and refused
     * (vg_nt_open): ENOSYS, which openat2's users meet on kernels before
     * 5.6 and fall back from to openat, whose O_PATH is a register. */
    if (nr == VG_NR_openat2)
        return true;
    /* An O_PATH fd cannot be installed (ADDFD takes no O_PATH file), and
     * it opens nothing: it reads no byte and writes none, and what it can
     * be used for (a *at call, fchdir, execveat, a reopen through
     * /proc/self/fd) is audited and judged on the object it names.  Its
     * only own power is fstat, which every path already has (stat is not
     * audited).  So it is let through after the decision (CONTINUE):
     * docs/SECURITY.md lists it. */
    if (flags & O_PATH)
        return false;
    /* which calls are opens is the syscall table's carry column */
    return vg_sys_carrier(vg_sys_lookup(nr)) == VG_CARRIER_OPEN;
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

/* The flags open(2) and openat(2) act on: the kernel drops any other bit
 * there (openat2 refuses them, and so does the candidate's openat2). */
#define VALID_OPEN_FLAGS                                                                      \
    (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |   \
     O_SYNC | FASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME |        \
     O_CLOEXEC | O_PATH | VG_O_TMPFILE_BIT)

/* The caller's own /proc entries that procfs guards with a ptrace access
 * check.  A crew fails that check (it is outside the sandbox's user
 * namespace, with a Landlock domain of its own), where the kernel always
 * lets a process read its own: so vigil opens these itself, read-only.
 * Nothing is gained over the candidate reading its own memory. */
static const char *const own_proc[] = {"maps", "smaps", "smaps_rollup", "numa_maps",
                                       "environ", "auxv", "mem"};

/* path is /proc/PID/NAME or /proc/PID/task/TID/NAME of the caller's own
 * process and thread (sandbox ids), NAME in own_proc, opened read-only. */
static bool own_proc_entry(const struct vg_task *t, const char *path, uint32_t flags)
{
    char name[32];
    int pid, tid, end = 0;
    if (strncmp(path, "/proc/", strlen("/proc/")) || (flags & O_ACCMODE) != O_RDONLY ||
        (flags & (O_CREAT | O_TRUNC | VG_O_TMPFILE_BIT)))
        return false;
    if (sscanf(path, "/proc/%d/task/%d/%31[a-z_]%n", &pid, &tid, name, &end) == 3) {
        if (tid != t->nstid)
            return false;
    } else if (sscanf(path, "/proc/%d/%31[a-z_]%n", &pid, name, &end) != 2) {
        return false;
    }
    if (pid != t->nspid || path[end])
        return false;
    for (size_t i = 0; i < VG_ARRAY_LEN(own_proc); i++)
        if (!strcmp(name, own_proc[i]))
            return true;
    return false;
}

bool vg_nt_open_unrecorded(const struct vg_call *c)
{
    /* the open_how decoded said a class nobody audits (a read where only
     * writes are): the kernel must not read it again either */
    return c->nr == VG_NR_openat2;
}

int vg_nt_open(struct nt *n, struct nt_rx *rx, struct vg_task *t, struct vg_call *c)
{
    const char *path = c->check_path;
    uint32_t flags = (uint32_t)c->args.flags;
    if (c->nr == VG_NR_openat2 && (flags & O_PATH))
        return -ENOSYS; /* vg_nt_carried_out */
    if (c->nr != VG_NR_openat2)
        flags &= VALID_OPEN_FLAGS;
    if (c->args.path && !c->args.path[0])
        return -ENOENT; /* open("") names nothing (no AT_EMPTY_PATH for opens) */
    if (!path || path[0] != '/')
        return -unresolved_errno(path ? path : "(unreadable)");
    /* "name/": the decided path drops the slash, which asks the kernel for
     * a directory there ("f/" is ENOTDIR, a create EISDIR) */
    size_t len = c->args.path ? strlen(c->args.path) : 0;
    if (len && c->args.path[len - 1] == '/') {
        if (flags & O_CREAT)
            return -EISDIR;
        flags |= O_DIRECTORY;
    }
    struct vg_crew_open o = {.root_fd = n->sup.root_fd, .path = path, .flags = flags,
                             .unchanging = vg_canon_cache_immutable(n->sup.canon, path),
                             .plain = vg_canon_cache_plain(n->sup.canon, path)};
    if (flags & (O_CREAT | VG_O_TMPFILE_BIT)) {
        mode_t mask;
        if (vg_nt_caller_umask(t->tid, &mask) < 0)
            return -EACCES; /* gone, or /proc unreadable: do not guess */
        o.mode = (uint32_t)c->args.mode & PERM_BITS & ~(uint32_t)mask;
    }
    if (own_proc_entry(t, path, flags)) /* the crew's open, as vigil, in this thread */
        return (int)vg_crew_open_job(&o);
    /* most opens: in this thread, with the crew's credentials */
    int fd = vg_crew_open_inline(&rx->crew, &o);
    rx->quiet_fd = -1;
    if (fd >= 0 && o.unchanging) { /* the inline open hands over plain kinds only */
        vg_canon_cache_saw_plain(n->sup.canon, path);
        rx->quiet_fd = fd;
    }
    if (fd != -EAGAIN)
        return fd;
    /* the others as a job (the crew's first one starts it).  Any of them
     * may sleep (a FIFO, a device; a lease the open must break waits for
     * its holder, whose signal and calls must be served meanwhile): the
     * engine's lock is released. */
    return (int)vg_nt_as_candidate(n, rx, t, vg_crew_open_job, &o, true);
}

/* A directory or regular file in a tree nothing can change, opened
 * through the ring (so read-only: the tree is), may stay open in vigil
 * until the next open, which closes it in the same submission: holding it
 * a while longer changes nothing anybody can see (it cannot be written,
 * removed or executed busy, and the candidate's own close comes from its
 * own fd).  Any other file is closed at once: a FIFO's writer, a file
 * about to be executed (ETXTBSY), a lock's holder must see it gone. */
void vg_nt_open_release(struct nt_rx *rx, int fd)
{
    if (fd != rx->quiet_fd) {
        close(fd);
        return;
    }
    rx->quiet_fd = -1;
    vg_uring_close_later(&rx->crew.ring, fd);
}
