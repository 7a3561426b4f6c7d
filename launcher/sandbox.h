/* sandbox.h: start the sandbox: new namespaces, the plan's mounts, a tiny
 * pid 1, and the candidate locked down and exec'd under the supervisor's
 * ptrace. */
#ifndef VG_SANDBOX_H
#define VG_SANDBOX_H
#include <stdbool.h>
#include "launcher/filter.h"
#include <sys/types.h>
#include "launcher/plan.h"
#include "net/egress.h"
#include "util/util.h"

/* The candidate's exit code when vigil could not start it (docs/RUN.md,
 * "Exit status and `status`"). */
#define VG_EXIT_SETUP 125
#define VG_EXIT_NOEXEC 126
#define VG_EXIT_NOTFOUND 127

struct vg_sandbox {
    /* in: the notify engine wants a listener (installed with these
     * SECCOMP_FILTER_FLAG_*) */
    bool notify;
    unsigned long filter_flags;
    /* in: a held sandbox (vigil run --hold): pid 1 builds everything, then
     * waits for the late part of the plan (vg_sandbox_go) before it forks
     * the candidate */
    bool hold;
    /* out */
    pid_t init_pid;   /* host pid of the sandbox's pid 1 (traced) */
    int out_fd;       /* read end of the candidate's stdout */
    int err_fd;       /* read end of the candidate's stderr */
    int report_fd;    /* setup failures from inside; EOF once exec'd */
    int listener_chan; /* notify: the candidate sends its listener's and Landlock
                        * ruleset's fd numbers; else -1 */
    int dns_fd;       /* plan->dns: vigil's resolver socket, bound inside the sandbox's
                       * network namespace before the candidate starts; else -1 */
    struct vg_egress egress; /* pasta, when the plan has egress; vg_egress_stop at the end */
    int late_fd;      /* held: where the late plan goes to pid 1 (launcher/late.h); else -1 */
};

/* A failure report from inside the sandbox: the exit code vigil should
 * use and one line of text. */
struct vg_report {
    int code;
    char msg[500];
};

/* How the supervisor follows the sandbox from its pid 1 on (the tracer's
 * vg_sup_attach): called once pid 1 exists and before it runs the plan. */
typedef int (*vg_attach_fn)(pid_t pid, struct vg_err *err);

/* Clone into new namespaces, map ids, let the supervisor attach, and let
 * the child run the plan.  The candidate's exec stops in the supervisor,
 * so the caller must start tracing at once. */
int vg_sandbox_start(const struct vg_plan *plan, const struct vg_bpf *cand,
                     const struct vg_bpf *init, vg_attach_fn attach,
                     struct vg_sandbox *sb, struct vg_err *err);
/* A held sandbox (sb->hold) is built when vg_sandbox_start returns: pid 1
 * has its mounts, cgroups, network and resolver and waits.  Give it the
 * command, environment and Landlock rules of plan (the late part of the
 * plan, built since) and the candidate's stdin: the candidate is forked
 * and exec'd as in a run that never waited.  -1 with err: the caller
 * ends it with vg_sandbox_abort. */
int vg_sandbox_go(struct vg_sandbox *sb, const struct vg_plan *plan, int stdin_fd,
                  struct vg_err *err);
/* End a sandbox whose candidate was never released (a held one that got
 * no request): pid 1 killed and reaped, pasta stopped, fds closed. */
void vg_sandbox_abort(struct vg_sandbox *sb);
void vg_sandbox_close(struct vg_sandbox *sb);
#endif
