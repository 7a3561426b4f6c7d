/* opener.h: the opener, a process inside the sandbox that opens files for
 * the notify engine.  It has the candidate's uid, gid, groups, Landlock
 * domain and root, but not its seccomp filter; the supervisor sends it
 * the decided (canonical, sandbox-view) path with the call's flags and
 * gets the open file back over a SOCK_SEQPACKET socket (SCM_RIGHTS), to
 * install in the candidate with SECCOMP_IOCTL_NOTIF_ADDFD.  So the kernel
 * never reads the candidate's memory again for an open vigil decided. */
#ifndef VG_NOTIFY_OPENER_H
#define VG_NOTIFY_OPENER_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum vg_open_how_kind {
    /* The canonical path, no symlink followed (RESOLVE_NO_SYMLINKS): what
     * is opened, created or truncated is exactly the path decided. */
    VG_OPEN_EXACT,
    /* A path under /proc, whose magic links (fd/N, cwd, root) only the
     * kernel can follow: followed, without O_CREAT and O_TRUNC, and the
     * real path of what was opened sent back so it is decided again. */
    VG_OPEN_PROC,
};

struct vg_open_req {
    uint32_t how;       /* enum vg_open_how_kind */
    uint32_t flags;     /* the call's O_* flags */
    uint32_t mode;      /* with the caller's umask applied (the opener's is 0) */
    char path[PATH_MAX];
};

struct vg_open_rep {
    int32_t err;        /* 0: the fd rides along; else the open's errno */
    char real[PATH_MAX]; /* VG_OPEN_PROC: the opened file's path ("" if unknown) */
};

/* In the sandbox: serve requests on sock until it closes. */
_Noreturn void vg_opener_serve(int sock);

/* In the supervisor: one open.  Returns the fd, or -errno (-EPIPE when the
 * opener is gone).  real (n bytes) gets the opened file's path for
 * VG_OPEN_PROC. */
int vg_opener_open(int sock, enum vg_open_how_kind how, const char *path, uint32_t flags,
                   uint32_t mode, char *real, size_t n);
#endif
