/* mem.c: see mem.h. */
#include "tracer/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "tracer/decode.h"

/* Word-by-word fallback for kernels or setups where process_vm_readv is
 * refused (EPERM from a security module, ENOSYS); ptrace itself still works
 * when the thread is stopped under us, and only then is it tried. */
static int peek_read(pid_t tid, uint64_t addr, void *buf, size_t n)
{
    unsigned char *out = buf;
    uint64_t word_at = addr & ~(uint64_t)7;
    size_t skip = (size_t)(addr - word_at);
    while (n > 0) {
        errno = 0;
        long w = ptrace(PTRACE_PEEKDATA, tid, (void *)(uintptr_t)word_at, NULL);
        if (w == -1 && errno != 0)
            return -1;
        size_t take = sizeof(w) - skip < n ? sizeof(w) - skip : n;
        memcpy(out, (unsigned char *)&w + skip, take);
        out += take;
        n -= take;
        word_at += sizeof(w);
        skip = 0;
    }
    return 0;
}

int vg_tracee_readv(struct vg_tracee *t, const struct iovec *local, const struct iovec *remote,
                    unsigned n)
{
    size_t total = 0;
    for (unsigned i = 0; i < n; i++)
        total += local[i].iov_len;
    if (total == 0)
        return 0;
    ssize_t got = process_vm_readv(t->tid, local, n, remote, n, 0);
    if (got == (ssize_t)total)
        return 0;
    if (got >= 0) {            /* part of a range is not mapped */
        errno = EFAULT;
        return -1;
    }
    if ((errno != EPERM && errno != ENOSYS) || !t->ptrace_stopped)
        return -1;
    for (unsigned i = 0; i < n; i++)
        if (peek_read(t->tid, (uint64_t)(uintptr_t)remote[i].iov_base, local[i].iov_base,
                      local[i].iov_len) < 0)
            return -1;
    return 0;
}

int vg_tracee_read(struct vg_tracee *t, uint64_t addr, void *buf, size_t n)
{
    struct iovec local = { buf, n };
    struct iovec remote = { (void *)(uintptr_t)addr, n };
    return vg_tracee_readv(t, &local, &remote, 1);
}

long vg_tracee_read_ahead(struct vg_tracee *t, const struct iovec *local,
                          const struct iovec *remote, unsigned n)
{
    return n ? (long)process_vm_readv(t->tid, local, n, remote, n, 0) : 0;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* linux/pidfd.h, Linux 6.9 */
#endif
#define VG_KCMP_FILES 2 /* linux/kcmp.h KCMP_FILES */

int vg_thread_pidfd(pid_t tid, pid_t tgid)
{
    int fd = (int)syscall(VG_NR_pidfd_open, tid, PIDFD_THREAD);
    if (fd >= 0 || errno != EINVAL)
        return fd; /* ESRCH: gone */
    /* a kernel without PIDFD_THREAD: only the process's pidfd, which reads
     * the leader's table; right only when the thread's is that one */
    if (tid != tgid && syscall(VG_NR_kcmp, tid, tgid, VG_KCMP_FILES, 0, 0) != 0) {
        errno = ENOSYS;
        return -1;
    }
    return (int)syscall(VG_NR_pidfd_open, tgid, 0);
}

int vg_thread_getfd(pid_t tid, pid_t tgid, int fd)
{
    int pidfd = vg_thread_pidfd(tid, tgid);
    if (pidfd < 0)
        return -1;
    int dup = (int)syscall(VG_NR_pidfd_getfd, pidfd, fd, 0);
    int saved = errno;
    close(pidfd);
    errno = saved;
    return dup;
}
