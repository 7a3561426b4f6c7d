/* filter.h: the seccomp filters.  The candidate's filter sends audited
 * calls to the supervisor (SECCOMP_RET_TRACE) and lets everything else run
 * at full speed; the baseline's refusals are traced too so that they are
 * recorded, and fail with ENOSYS if the supervisor is ever gone. */
#ifndef VG_FILTER_H
#define VG_FILTER_H
#include <seccomp.h>
#include <stdbool.h>
#include "event/event.h"
#include "util/util.h"

/* audited[c]: does class c need per-call decisions?  notify: audited
 * calls and baseline refusals go to a user-notification listener
 * (SECCOMP_RET_USER_NOTIF) instead of the ptrace tracer. */
scmp_filter_ctx vg_filter_candidate(const bool audited[VG_CLASS_NCLASSES], bool notify,
                                    struct vg_err *err);
/* The sandbox's pid 1 only waits for children and exits. */
scmp_filter_ctx vg_filter_init(struct vg_err *err);

/* A filter compiled to BPF by the supervisor, so the sandbox only has to
 * install it (libseccomp's generation would otherwise run, and fault in
 * copy-on-write pages, in each sandbox process). */
struct vg_bpf {
    void *insns;        /* struct sock_filter[] */
    unsigned short len; /* instructions */
};
int vg_filter_export(scmp_filter_ctx ctx, struct vg_bpf *out, struct vg_err *err);
/* Install in the calling thread (no_new_privs must be set).  -1 + errno. */
int vg_filter_install(const struct vg_bpf *bpf);
/* The same with SECCOMP_FILTER_FLAG_*: with NEW_LISTENER, returns the
 * listener fd. */
int vg_filter_install_flags(const struct vg_bpf *bpf, unsigned long flags);
void vg_bpf_free(struct vg_bpf *bpf);
#endif
