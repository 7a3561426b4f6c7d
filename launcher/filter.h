/* filter.h: the seccomp filters.  The candidate's filter refuses every
 * call the syscall table has no row for (ENOSYS), sends audited calls to
 * the supervisor (SECCOMP_RET_TRACE), lets the other rows run at full
 * speed, and refuses the baseline's and the refused rows' calls itself: the kernel never
 * runs them, whatever a filter the candidate adds later returns
 * (RET_TRAP and RET_ERRNO outrank RET_USER_NOTIF, RET_TRACE, RET_LOG and
 * RET_ALLOW) and whether or not the supervisor is there.
 *
 * The same data the filter is built from answers, for the supervisor,
 * "what does the filter do with this call" (vg_filter_classify), so that
 * the engine can tell its own stops and signals from a candidate's. */
#ifndef VG_FILTER_H
#define VG_FILTER_H
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include "event/event.h"
#include "core/syscalls.h"
#include "util/util.h"

/* A filter compiled to BPF by the supervisor, so the sandbox only has to
 * install it (libseccomp's generation would otherwise run, and fault in
 * copy-on-write pages, in each sandbox process). */
struct vg_bpf {
    void *insns;        /* struct sock_filter[] */
    unsigned short len; /* instructions */
};
/* How the baseline's calls are refused: the engine's choice. */
enum vg_baseline_how {
    /* SECCOMP_RET_TRAP: the kernel skips the call and forces a SIGSYS
     * (si_code SYS_SECCOMP).  The ptrace engine sees the signal, records
     * the refusal, sets the row's errno as the call's return value and
     * suppresses the signal; without a supervisor the candidate dies of
     * the SIGSYS.  Either way the call never ran. */
    VG_BASELINE_TRAP,
    /* SECCOMP_RET_ERRNO(row's errno): the kernel skips the call and
     * returns the errno; nobody is told, so nothing is recorded (for an
     * engine that cannot see signals, e.g. a seccomp-notify one). */
    VG_BASELINE_ERRNO,
};

/* What the candidate's filter does with a native (x86_64) call. */
enum vg_filter_act {
    VG_FILTER_ALLOW,    /* runs, the supervisor never hears of it */
    VG_FILTER_AUDIT,    /* stopped for the supervisor (RET_TRACE) */
    VG_FILTER_BASELINE, /* refused by the kernel (see vg_baseline_how) */
    VG_FILTER_ENOSYS,   /* refused as not implemented, unrecorded: every number
                         * without a row, and the REFUSE rows with ENOSYS
                         * (clone3, the *xattrat calls: libc falls back) */
    VG_FILTER_REFUSED,  /* a REFUSE row with another errno (RET_ERRNO), unrecorded */
};

/* The candidate's filter, compiled: default-deny (a number without a
 * row in the syscall table fails ENOSYS, as does every call of another
 * ABI), then the rows' actions.  audit: which calls need per-call
 * decisions (core/syscalls.h).  notify: they go to a user-notification
 * listener (SECCOMP_RET_USER_NOTIF) instead of the ptrace tracer.
 * 0, or -1 with err set. */
int vg_filter_candidate(const struct vg_audit_set *audit, enum vg_baseline_how how, bool notify,
                        struct vg_bpf *out, struct vg_err *err);
/* The action vg_filter_candidate(audit, ...) takes for call nr with
 * these register arguments: the same rule data, compared the same way
 * (full 64-bit registers, the int arguments on their low 32 bits). */
enum vg_filter_act vg_filter_classify(const struct vg_audit_set *audit, int nr,
                                      const uint64_t args[6]);
/* The sandbox's pid 1 only waits for children and exits. */
scmp_filter_ctx vg_filter_init(struct vg_err *err);

int vg_filter_export(scmp_filter_ctx ctx, struct vg_bpf *out, struct vg_err *err);
/* Install in the calling thread (no_new_privs must be set).  -1 + errno. */
int vg_filter_install(const struct vg_bpf *bpf);
/* The same with SECCOMP_FILTER_FLAG_*: with NEW_LISTENER, returns the
 * listener fd. */
int vg_filter_install_flags(const struct vg_bpf *bpf, unsigned long flags);
void vg_bpf_free(struct vg_bpf *bpf);
#endif
