/* opener.h: the opener, a thread of the supervisor that opens files for
 * the notify engine.  It has the candidate's identity and restrictions
 * (uid, gid, groups, no capabilities, no_new_privs, the candidate's very
 * Landlock ruleset, a umask of its own) and nothing else of the
 * supervisor's privileges; it opens the decided (canonical, sandbox-view)
 * path with openat2 beneath the sandbox's root and no symlink followed,
 * and the notify engine installs the file in the candidate with
 * SECCOMP_IOCTL_NOTIF_ADDFD.  So the kernel never reads the candidate's
 * memory again for an open vigil decided, and what is opened, created or
 * truncated is exactly the path decided, opened as the candidate.
 *
 * A thread, not a process in the sandbox: a request is a hand-over
 * between two threads of one process (no socket, no SCM_RIGHTS, no
 * address-space switch), and the candidate cannot see, signal or kill it
 * (it is not in the sandbox's pid namespace). */
#ifndef VG_NOTIFY_OPENER_H
#define VG_NOTIFY_OPENER_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/notify/uring.h"

#define VG_IDENT_MAXGROUPS 64

/* Who the candidate is, as the host sees it (/proc/PID/status). */
struct vg_ident {
    uid_t uid[3];               /* real, effective, saved */
    gid_t gid[3];
    int ngroups;
    gid_t groups[VG_IDENT_MAXGROUPS];
};

/* Read pid's identity.  -1 (errno) when it cannot be read or has more
 * groups than we hold. */
int vg_ident_read(pid_t pid, struct vg_ident *id);

/* Make the CALLING THREAD the candidate: its own fs struct (umask 0: the
 * caller's umask is applied to the mode by the engine), the ids (raw
 * per-thread syscalls: glibc's wrappers would change every thread of the
 * supervisor), no capabilities, no_new_privs, then Landlock with ruleset
 * (when >= 0).  -1 with why filled when any step fails. */
int vg_ident_take(const struct vg_ident *id, int ruleset, char *why, size_t n);

struct vg_opener {
    pthread_t th;
    bool started;
    int root_fd;                /* the sandbox's "/" (O_PATH) */
    struct vg_ident id;
    int ruleset;
    int cpu;                    /* the CPU it is kept on (-1: any) */
    struct vg_uring ring;       /* its credentials, lent (uring.h) */
    /* the hand-over: a futex word (enum in opener.c) and the request */
    _Atomic uint32_t state;
    const char *path;
    uint32_t flags, mode;
    int result;                 /* the fd, or -errno */
    char why[200];              /* why it could not start */
};

/* Start the thread; it takes id and ruleset at once.  -1 with why when it
 * cannot start or cannot become the candidate (nothing may be opened
 * then: the caller ends the run). */
int vg_opener_start(struct vg_opener *op, int root_fd, const struct vg_ident *id, int ruleset,
                    char *why, size_t n);

/* One open of the canonical path (absolute, sandbox view) with the call's
 * O_* flags and, for O_CREAT/O_TMPFILE, the mode with the caller's umask
 * applied.  Returns the fd (O_CLOEXEC, the supervisor's) or -errno.  An
 * open that blocks (a FIFO) is failed with EINTR once wanted(arg) says
 * the caller no longer waits for it. */
int vg_opener_open(struct vg_opener *op, const char *path, uint32_t flags, uint32_t mode,
                   bool (*wanted)(void *), void *arg);

void vg_opener_stop(struct vg_opener *op);
#endif
