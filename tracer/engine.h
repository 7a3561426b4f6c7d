/* engine.h: the interception engine's interface.  An engine delivers each
 * audited call to the supervisor, carries out its decision, and reports the
 * life of every process.  "ptrace" (seccomp RET_TRACE + ptrace events) and
 * "notify" (seccomp user notification for the calls, ptrace events only
 * for the life of processes; tracer/notify/) share decoding and verdicts.
 * Both have ptrace attached, so both see the kernel's SIGSYS for the
 * baseline's refusals (vg_baseline_how) and record them. */
#ifndef VG_ENGINE_H
#define VG_ENGINE_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "core/decide.h"
#include "event/event.h"
#include "event/writer.h"
#include "policy/policy.h"
#include "launcher/filter.h"
#include "launcher/run_opts.h"

/* What the supervisor learned, for the trailer and the result record. */
struct vg_outcome {
    bool cand_done;          /* the candidate's main process ended */
    int cand_status;         /* its wait status */
    bool policy_kill;        /* a kill rule (or a failed exec check) ended the run */
    char kill_reason[4600];
    bool log_failed;         /* a record could not be written: run stopped */
    char log_error[300];
    uint64_t counts[VG_CLASS_NCLASSES][VG_DEC_NDECISIONS];
    uint64_t procs;          /* processes seen (not threads) */
    uint64_t max_tasks;      /* most processes+threads alive at once */
    uint64_t fsize_signals;  /* SIGXFSZ the kernel sent: a write past the
                              * fsize limit, seen even when the candidate
                              * ignores or handles the signal (a traced
                              * task's ignored signals still stop) */
    uint64_t own_procs;      /* vigil's own processes under the candidate's uid
                              * (none today): they count against its
                              * process limit too */
    /* limits seen hit only as a call's result (EMFILE, EFBIG of a call
     * the notify engine carried out): run/result.c reports them */
    bool limit_seen[VG_LIM_COUNT];
    /* refused and would-be refused calls (deny, would-deny, would-kill),
     * which the refusals cap bounds */
    uint64_t refusals;
    /* a cap the supervisor holds (refusals, log) ended the run: which */
    bool limit_ended;
    enum vg_limit limit_end;
};

/* The run as the engine sees it. */
struct vg_engine_ctx {
    const struct vg_run_opts *opts;
    const struct vg_policy *pol;
    /* the run's limits, flags over the policy: the supervisor holds the
     * refusals cap (NULL: no caps, for tests) */
    const struct vg_limits *limits;
    struct vg_log *log;
    uint64_t start_mono_ns;
    pid_t init_pid;
    /* Files named on the command line: the candidate may read them (and
     * exec the first, the command itself) whatever the policy says. */
    const char *const *artifacts;   /* sandbox paths */
    unsigned nartifacts;
    const char *command_path;       /* sandbox path of argv[0] if it is an artifact */
    /* The command file as the kernel first ran it (core/decide.h); set
     * by the engine at the candidate's first exec. */
    struct vg_command_id command_id;
    const char *const *immutable;   /* trees nothing can change (see plan.h) */
    const bool *audited;            /* [class]: vg_policy_audits, computed once */
    const struct vg_audit_set *audit; /* the same, with `audit lookups`: what the filter stops */
    unsigned nimmutable;
    const char *const *masked;      /* paths shown empty (see plan.h) */
    unsigned nmasked;
    /* The addresses vigil's resolver handed out, by name (policy/dns_table.h);
     * NULL when the run has no resolver (the host's network namespace). */
    struct vg_dns_table *dns;
    /* The run's network plan (net/net.h): the host's broadcast and anycast
     * addresses the supervisor refuses like multicast; NULL: none known. */
    const struct vg_net_plan *net;
    /* notify engine (tracer/notify/): from vg_sandbox_start, else -1 */
    int listener_chan;
    /* its wait for an answer is killable only (WAIT_KILLABLE_RECV): a
     * signal cannot withdraw a call vigil has received */
    bool notify_wait_killable;
    struct vg_outcome out;
};

struct vg_engine {
    const char *name;
    /* how its filter refuses the baseline: only an engine that sees the
     * kernel's SIGSYS can record those refusals */
    enum vg_baseline_how baseline;
    bool notify;             /* audited calls come as seccomp user notifications */
    /* Run until the sandbox's pid 1 is gone. */
    int (*supervise)(struct vg_engine_ctx *ctx);
};

extern const struct vg_engine vg_engine_ptrace;
extern const struct vg_engine vg_engine_notify;
#endif
