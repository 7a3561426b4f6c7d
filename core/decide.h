/* decide.h: the one decider.  From a decoded call to a decision, a pure
 * function of what it is given: the policy and the run's facts (struct
 * vg_decide_ctx), the call, and what it may ask of the world (struct
 * vg_fs_view: the sandbox's files; struct vg_net_view: the run's resolver
 * and network).  It does no I/O: the tracer gives it views over the real
 * sandbox (tracer/views.h), a test gives it fakes.
 *
 * What it weighs, in order: the baseline, what cannot be judged, the
 * artifacts named on the command line, the policy (both paths of a
 * two-path call, the stricter wins; renames and links: the new names), and
 * the run mode (dry-run turns refusals into would-*).  Limits are not
 * decided per call: the kernel holds them (launcher/limits.c), and a call
 * that meets one fails with the kernel's errno (run/result.c reports it).
 * The control data of a send is judged by core/cmsg.h. */
#ifndef VG_CORE_DECIDE_H
#define VG_CORE_DECIDE_H
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/call.h"
#include "policy/netpat.h"
#include "policy/policy.h"

/* A file as the decider needs to know it: what stat says of it. */
struct vg_fs_node {
    bool dir;
    dev_t dev;
    ino_t ino;
    struct timespec ctime;      /* a rewrite in place keeps the inode, not this */
};

/* The sandbox's files, as the decider may ask about them.  path is
 * absolute in the sandbox's view and not "/"; follow: a symlink in the
 * last component is followed (stat) or not (lstat).  0 with *out filled,
 * or the errno (ENOENT: nothing there). */
struct vg_fs_view {
    int (*stat)(void *arg, const char *path, bool follow, struct vg_fs_node *out);
    void *arg;
};

/* vigil's resolver as the sandbox reaches it: a send of udp to addr is
 * always allowed, by rule (net/dns.h), which outlives every verdict. */
struct vg_resolver {
    struct vg_sockaddr addr;
    const struct vg_rule_src *rule;
};

/* The run's network, as the decider may ask about it. */
struct vg_net_view {
    /* Is ip not one host (multicast, broadcast, the host's anycast)?
     * Only a rule naming it exactly allows it (net/net.h). */
    bool (*special)(void *arg, const struct vg_ip *ip);
    /* The name vigil's resolver handed ip out for, copied into a; NULL
     * when none (for the record: args.host, dests[].host). */
    const char *(*name_of)(void *arg, const struct vg_ip *ip, struct vg_arena *a);
    void *arg;
    /* What the policy's host-name rules match against (policy/dns_table.h);
     * NULL: the run has no resolver (the host's network namespace). */
    struct vg_dns_table *names;
    /* The sandbox's way to vigil's resolver; NULL when it has none: in
     * the host's network namespace the address may be anyone's. */
    const struct vg_resolver *resolver;
};

/* The command file as the kernel first ran it: the candidate's first exec
 * is vigil's own, before any candidate code.  Any later exec of
 * command_path is the command only if it is this very file (a candidate
 * may replace what sits at the path); set by the engine. */
struct vg_command_id {
    bool seen;                  /* the candidate's first exec is past */
    bool known;                 /* it was command_path: the node is set */
    struct vg_fs_node node;
};

/* Everything of the run a decision depends on, and nothing more. */
struct vg_decide_ctx {
    const struct vg_policy *pol;
    bool dry_run;                   /* refusals become would-deny, would-kill */
    const bool *audited;            /* [class]: vg_policy_audits, computed once */
    /* Files named on the command line: the candidate may read them (and
     * exec the first, the command itself) whatever the policy says. */
    const char *const *artifacts;   /* sandbox paths */
    unsigned nartifacts;
    const char *command_path;       /* sandbox path of argv[0] if it is an artifact */
    const struct vg_command_id *command_id;
    const char *const *masked;      /* paths shown empty (see launcher/plan.h) */
    unsigned nmasked;
    const struct vg_fs_view *fs;
    const struct vg_net_view *net;
};

struct vg_call_verdict {
    bool record;               /* false: nothing to decide (plain send) */
    enum vg_decision decision;
    bool refuse;               /* make the call fail with err */
    bool kill;                 /* end the sandbox */
    int err;
    /* What decided, set whenever record is: the policy's rule itself (the
     * value parsed, policy.h: one identity from the parse to the record),
     * or one of vigil's (file NULL: a default, the baseline; "(command
     * line)", "(vigil)"), own when vigil wrote it for this call.  A
     * verdict is not copied: rule may point into it. */
    const struct vg_rule_src *rule;
    struct vg_rule_src own;
    char text_buf[96];         /* own.text when vigil composed it */
    bool probe;                /* a lookup that found nothing (is_probe, decide.c) */
};

/* A refused call on a path that does not exist fails with ENOENT, exactly
 * as it would outside (asked of d->fs), so that a PATH search or an
 * optional config lookup behaves the same.  A sendmmsg's per-destination
 * decisions go into call->dests, and the destination that decided into
 * call->args; the name behind an address into args.host. */
void vg_decide(const struct vg_decide_ctx *d, struct vg_call *call, struct vg_call_verdict *v);

/* The exec check: after a successful exec, the image that really runs.
 * The path checked before the call may have been swapped by another
 * thread, a #! line names an interpreter, and the command named on the
 * command line may have been replaced: the engine reports what it found
 * at the exec event, while the task is still stopped there. */
struct vg_exec_image {
    const char *exe;              /* /proc/PID/exe; NULL when it cannot be read */
    const struct vg_fs_node *node; /* its identity (stat of /proc/PID/exe) */
};
/* decision ALLOW, or KILL (refuse is never set: the exec happened; the
 * task must be killed before it runs, and the run ends), WOULD_KILL in a
 * dry run.  An image that cannot be read is KILL in every mode.  record is
 * false when the policy does not audit exec. */
void vg_decide_exec(const struct vg_decide_ctx *d, const struct vg_exec_image *img,
                    struct vg_call_verdict *v);
/* Is an exec of path (canonical, sandbox view) of the file node the
 * command named on the command line?  Its name and, once the candidate's
 * first exec is past, its identity (d->command_id). */
bool vg_is_command(const struct vg_decide_ctx *d, const char *path, const struct vg_fs_node *node);

/* May vigil's resolver answer this host name (lower case, no final dot)?
 * NULL: the query could not be parsed, refused in every mode.  A refusal
 * (refuse set) is answered NXDOMAIN and never asked upstream; in a dry
 * run it is a would-deny and resolved.  Only d->pol and d->dry_run are
 * read. */
void vg_decide_name(const struct vg_decide_ctx *d, const char *name, struct vg_call_verdict *v);
#endif
