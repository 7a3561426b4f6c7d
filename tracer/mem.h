/* mem.h: reading a tracee's memory, the one way into the candidate's
 * address space for decoding.  Two paths, and which engine may use which:
 *   process_vm_readv  any engine: the thread need not be stopped (the
 *                     notify engine's caller is blocked in its
 *                     notification; vigil checks NOTIF_ID_VALID after);
 *   PTRACE_PEEKDATA   only when the thread is in a ptrace stop (the ptrace
 *                     engine's seccomp stops, and the SIGSYS stops of both
 *                     engines), as a fallback where a security module or
 *                     the kernel refuses process_vm_readv.
 * struct vg_tracee says which applies (ptrace_stopped). */
#ifndef VG_TRACER_MEM_H
#define VG_TRACER_MEM_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct vg_tracee;
struct iovec;

int vg_tracee_read(struct vg_tracee *t, uint64_t addr, void *buf, size_t n);
/* n ranges at once (n at most IOV_MAX), remote[i] into local[i], of equal
 * lengths; -1 if any cannot be read whole. */
int vg_tracee_readv(struct vg_tracee *t, const struct iovec *local, const struct iovec *remote,
                    unsigned n);
/* As many of the n ranges as can be read, in order, with one
 * process_vm_readv: the bytes read (the ranges before the first that
 * cannot be read whole are whole), or -1.  No ptrace fallback: for reads
 * ahead, whose caller reads what this missed another way. */
long vg_tracee_read_ahead(struct vg_tracee *t, const struct iovec *local,
                          const struct iovec *remote, unsigned n);

/* The candidate's fds are the calling THREAD's: a thread made by clone()
 * without CLONE_FILES has a file table of its own, which its process's
 * (the leader's) pidfd does not reach.  A pidfd of thread tid (of process
 * tgid) whose pidfd_getfd reads tid's own table: PIDFD_THREAD (Linux 6.9);
 * before it, the process's pidfd when tid is the leader or shares the
 * leader's table (kcmp KCMP_FILES); otherwise -1 with errno ENOSYS, which
 * the caller answers as a refusal (docs/SECURITY.md).  -1 (errno) when the
 * thread is gone. */
int vg_thread_pidfd(pid_t tid, pid_t tgid);
/* A copy of thread tid's fd number fd (pidfd_getfd on vg_thread_pidfd),
 * or -1 (errno). */
int vg_thread_getfd(pid_t tid, pid_t tgid, int fd);
#endif
