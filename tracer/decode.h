/* decode.h: turning a stopped tracee's syscall registers into a decoded,
 * policy-checkable call. */
#ifndef VG_DECODE_H
#define VG_DECODE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "core/call.h"
#include "event/event.h"
#include "tracer/canon.h"
#include "core/syscalls.h"
#include "util/util.h"

/* What the decoder needs to know about the thread it decodes for. */
struct vg_tracee {
    pid_t tid;          /* host tid of the stopped thread */
    pid_t pid;          /* host pid (thread group) */
    int32_t nspid, nstid; /* the same as the sandbox sees them (/proc/self,
                         * /proc/thread-self); 0 when unknown */
    int root_fd;        /* O_PATH fd of the sandbox root (/proc/PID/root at start) */
    struct vg_canon_cache *cache; /* lookups under read-only trees, or NULL */
    bool pivoted;       /* the sandbox root is a pivot_root: /proc/TID/{cwd,fd}
                         * already read as the sandbox sees them */
    bool ptrace_stopped; /* in a ptrace stop: PTRACE_PEEKDATA may read (mem.h) */
};

/* Decode syscall nr with raw args for thread t.  Always fills call (an
 * unknown number gets cls VG_CLASS_SYSTEM, name "syscall_<nr>" and deny
 * errno ENOSYS); call needs no initialization, and vg_call_free (core/call.h)
 * releases it.
 * Returns -1 when an argument could not be read from the tracee: the paths
 * concerned are then "(unreadable)" (check_path too, which matches no
 * policy rule), and the call is undecidable (refused, EFAULT).  A path or
 * dirfd that cannot be resolved gives a non-absolute text such as
 * "(bad fd 7)" or "(too many links)", which no rule matches either. */
int vg_decode_call(struct vg_tracee *t, int nr, const uint64_t a[6],
                   struct vg_call *call);

/* Helpers the decoders use; exposed for tests. */
/* Read a NUL-terminated string of at most max bytes from the tracee. */
char *vg_tracee_read_str(struct vg_tracee *t, uint64_t addr, size_t max,
                         struct vg_arena *a);
#include "tracer/mem.h"
#endif
