/* hostuid.h: the host uid and gid (one number) the candidate runs as, and
 * the user namespace that number may own.  An unprivileged vigil's
 * candidate is the caller; root's is VG_HOST_NOBODY, shared by every such
 * run, unless `vigil run --host-uid UID` gives the run a uid of its own
 * (vigil serve hands each run one from a range, as isolate's boxes): then
 * the candidates of two runs are two users to the kernel, and the
 * sandbox's user namespace is created by that uid, so that the kernel's
 * per-user counts (inotify instances and watches, user namespaces,
 * pending signals, RLIMIT_NPROC above the sandbox) are the run's own
 * (docs/SECURITY.md, "Separate runs"). */
#ifndef VG_HOSTUID_H
#define VG_HOSTUID_H
#include <stdint.h>
#include <sys/types.h>

#include "launcher/run_opts.h"
#include "util/util.h"

/* Below this a uid is the system's (Debian's SYS_UID_MAX is 999): its
 * daemons' files and processes. */
#define VG_HOST_UID_MIN 1000u
/* (uid_t)-1 means "no change" to the kernel's set*id calls. */
#define VG_HOST_UID_MAX 4294967294u

/* --host-uid's text: a decimal number in [VG_HOST_UID_MIN,
 * VG_HOST_UID_MAX].  -1 with a message naming the flag and the value. */
int vg_host_uid_parse(const char *text, uint32_t *uid, struct vg_err *err);
/* May this run use uid (and the gid of the same number)?  Only a root
 * caller may give one; no account of the host may have it (its files
 * would be the candidate's), and no process of the host may run with it
 * (as uid or gid: it would hold every capability in the sandbox's
 * namespaces, which that uid owns).  -1 with a one-line reason. */
int vg_host_uid_check(uint32_t uid, struct vg_err *err);
/* The candidate's host uid and gid for these options and this caller. */
void vg_host_ids(const struct vg_run_opts *o, uid_t *uid, gid_t *gid);
/* clone(2) with flags (CLONE_NEWUSER among them), the new user namespace
 * owned by owner (0: by the caller, as a plain clone).  Only the calling
 * thread changes its effective uid for the call (the raw setresuid, not
 * libc's, which would change every thread), and takes uid 0 back after
 * it.  The child starts with that effective uid and must take uid 0 back
 * itself (vg_host_uid_child) once its id maps are written.  cgroup_fd
 * (>= 0): a cgroup v2 directory the child is born in (clone3's
 * CLONE_INTO_CGROUP), so that it never moves there: a move takes the
 * kernel's cgroup_threadgroup_rwsem for writing, which waits for an RCU
 * grace period (bench/README.md, "The cgroup move").  As clone: the pid,
 * 0 in the child, -1 with errno (with cgroup_fd, a kernel may refuse
 * what a plain clone does: call again without it). */
pid_t vg_clone_owned(unsigned long flags, uid_t owner, int cgroup_fd);
/* In that child: uid 0 again (inside, host root), as a plain clone's child
 * is.  Only after the parent wrote the id maps.  -1 with errno. */
int vg_host_uid_child(uid_t owner);
#endif
